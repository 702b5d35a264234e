"""ICE fusion, bonuses, the cross-conversation cap, the memory budget and two-phase packing,
checked with exact numbers on hand-built candidates (seed-systems 5.5, steps 1-4)."""

from __future__ import annotations

import pytest
from lsrep.systems.ice.config import IceConfig
from lsrep.systems.ice.events import EventRelay, StageEvent
from lsrep.systems.ice.fusion import apply_bonuses, cap_other_conversations, fuse, merge
from lsrep.systems.ice.legs import Candidate
from lsrep.systems.ice.packing import memory_budget, pack


def cand(cid: str, source_type: str = "episodic", *, tokens: int = 10, conv: str | None = "c1",
         legs: dict[str, int] | None = None, strength: float | None = None, confident: bool = False,
         score: float = 0.0) -> Candidate:
    return Candidate(id=cid, source_type=source_type, text="x" * (4 * tokens), conversation_id=conv,
                     source_turn_ids=(cid,), strength=strength, confident=confident,
                     legs=dict(legs or {}), score=score)


def relay() -> tuple[EventRelay, list[StageEvent]]:
    events: list[StageEvent] = []
    return EventRelay(events.append), events


def stages(events: list[StageEvent], mechanism: str) -> list[str]:
    return [e.stage for e in events if e.mechanism == mechanism]


# -- fusion ------------------------------------------------------------------------------------

def test_merge_keeps_every_leg_rank_and_mechanism_of_a_repeated_id():
    a1 = cand("a", legs={"episodic_vector": 1})
    a1.mechanisms = {"mera"}
    a2 = cand("a", legs={"graph": 3})
    a2.mechanisms = {"x"}
    merged = merge({"episodic_vector": [a1], "graph": [a2, cand("b", legs={"graph": 1})]})
    assert list(merged) == ["a", "b"]
    assert merged["a"].legs == {"episodic_vector": 1, "graph": 3} and merged["a"].mechanisms == {"mera", "x"}


def test_rrf_scores_are_the_weighted_sum_over_legs_with_one_based_ranks():
    emit, events = relay()
    config = IceConfig()
    results = {"episodic_vector": [cand("a", legs={"episodic_vector": 1}), cand("b", legs={"episodic_vector": 2})],
               "episodic_lexical": [cand("b", legs={"episodic_lexical": 1})]}
    weights = {"episodic_vector": 1.0, "episodic_lexical": 0.5}
    fused = fuse(results, weights, config, emit)
    scores = {c.id: c.score for c in fused}
    assert scores["a"] == pytest.approx(1.0 / 61)
    assert scores["b"] == pytest.approx(1.0 / 62 + 0.5 / 61)
    assert [c.id for c in fused] == ["b", "a"]
    assert stages(events, "rrf") == ["eligible", "executed", "output"]
    executed = next(e for e in events if e.stage == "executed")
    assert executed.count == 2 and executed.params["k"] == 60 and executed.params["mode"] == "rrf"
    assert executed.params["weights"]["graph"] == 0.0  # a leg without a weight contributes nothing
    output = next(e for e in events if e.stage == "output")
    assert output.ids == ("b", "a") and output.params["ranks"]["b"] == {"episodic_vector": 2, "episodic_lexical": 1}


def test_rrf_ties_break_by_id_and_k_is_configurable():
    emit, _ = relay()
    results = {"episodic_vector": [cand("z", legs={"episodic_vector": 1})],
               "episodic_lexical": [cand("y", legs={"episodic_lexical": 1})]}
    fused = fuse(results, {"episodic_vector": 1.0, "episodic_lexical": 1.0}, IceConfig(rrf_k=10), emit)
    assert [c.id for c in fused] == ["y", "z"] and fused[0].score == pytest.approx(1.0 / 11)


def test_concat_scores_by_list_position_vector_then_lexical():
    emit, _ = relay()
    results = {"episodic_lexical": [cand("l1", legs={"episodic_lexical": 1}), cand("v1", legs={"episodic_lexical": 2}),
                                    cand("l2", legs={"episodic_lexical": 3})],
               "episodic_vector": [cand("v1", legs={"episodic_vector": 1}), cand("v2", legs={"episodic_vector": 2})]}
    fused = fuse(results, {"episodic_vector": 1.0, "episodic_lexical": 1.0}, IceConfig(fusion="concat"), emit)
    assert [c.id for c in fused] == ["v1", "v2", "l1", "l2"]
    assert [round(c.score, 9) for c in fused] == [round(1 / (60 + p), 9) for p in (1, 2, 3, 4)]


def test_fusion_without_candidates_is_ineligible():
    emit, events = relay()
    assert fuse({}, {}, IceConfig(), emit) == []
    assert [(e.stage, e.reason) for e in events] == [("ineligible", "no leg output")]


# -- bonuses -----------------------------------------------------------------------------------

def test_bonuses_multiply_exactly_and_resort():
    emit, events = relay()
    graph = cand("g", "graph", confident=True, score=1.0, conv=None)
    weak = cand("w", strength=0.0, score=1.0, conv="other")
    strong = cand("s", strength=1.0, score=1.0, conv="other")
    current = cand("c", score=1.0, conv="c1")
    plain_graph = cand("p", "graph", confident=False, strength=0.9, score=1.0, conv=None)
    out = apply_bonuses([weak, strong, graph, current, plain_graph], current_conversation="c1",
                        config=IceConfig(), emit=emit)
    scores = {c.id: c.score for c in out}
    assert scores == pytest.approx({"g": 1.5, "w": 0.5, "s": 1.0, "c": 1.2, "p": 1.0})
    assert [c.id for c in out] == ["g", "c", "p", "s", "w"]  # re-sorted, ties by id
    assert stages(events, "bonus.confidence") == ["eligible", "executed", "output"]
    out_event = next(e for e in events if e.mechanism == "bonus.strength" and e.stage == "output")
    assert out_event.params["multipliers"] == {"w": 0.5, "s": 1.0}


def test_strength_bonus_interpolates_from_the_base():
    emit, _ = relay()
    half = cand("h", strength=0.5, score=2.0, conv=None)
    (out,) = apply_bonuses([half], current_conversation="c1", config=IceConfig(strength_bonus_base=0.2), emit=emit)
    assert out.score == pytest.approx(2.0 * (0.2 + 0.8 * 0.5))


def test_a_disabled_bonus_is_skipped_and_an_inapplicable_one_ineligible():
    emit, events = relay()
    c = cand("c", score=1.0, conv="c1")
    (out,) = apply_bonuses([c], current_conversation="c1",
                           config=IceConfig(disabled=frozenset({"bonus.current_conv"})), emit=emit)
    assert out.score == 1.0
    assert [(e.stage, e.reason) for e in events if e.mechanism == "bonus.current_conv"] == [
        ("eligible", None), ("skipped", "disabled")]
    assert stages(events, "bonus.confidence") == ["ineligible"]
    emit, events = relay()
    apply_bonuses([cand("n", score=1.0, conv=None)], current_conversation="c1", config=IceConfig(), emit=emit)
    assert stages(events, "bonus.current_conv") == ["ineligible"]  # no conversation: no bonus


# -- cross-conversation cap ----------------------------------------------------------------------

def test_the_cap_keeps_n_per_other_conversation_and_exempts_the_current_one():
    emit, events = relay()
    cands = ([cand(f"o{i}", conv="other") for i in range(5)] + [cand(f"c{i}", conv="c1") for i in range(5)]
             + [cand("n", conv=None)])
    kept = cap_other_conversations(cands, current_conversation="c1", config=IceConfig(), emit=emit)
    assert [c.id for c in kept] == ["o0", "o1", "o2", "c0", "c1", "c2", "c3", "c4", "n"]
    executed = next(e for e in events if e.stage == "executed")
    assert executed.ids == ("o3", "o4") and executed.params == {
        "cap": 3, "before": 11, "after": 9, "other_conversations": 1}
    kept = cap_other_conversations(cands, current_conversation="c1", config=IceConfig(cross_conversation_cap=1),
                                   emit=emit)
    assert [c.id for c in kept if c.conversation_id == "other"] == ["o0"]


def test_the_cap_is_ineligible_with_one_conversation_and_skipped_when_disabled():
    emit, events = relay()
    cands = [cand(f"c{i}") for i in range(5)]
    assert cap_other_conversations(cands, current_conversation="c1", config=IceConfig(), emit=emit) == cands
    assert stages(events, "diversify.cross_conv_cap") == ["ineligible"]
    emit, events = relay()
    others = [cand(f"o{i}", conv="o") for i in range(5)]
    off = IceConfig(disabled=frozenset({"diversify.cross_conv_cap"}))
    assert cap_other_conversations(others, current_conversation="c1", config=off, emit=emit) == others
    assert stages(events, "diversify.cross_conv_cap") == ["eligible", "skipped"]


# -- memory budget -------------------------------------------------------------------------------

def test_the_memory_budget_follows_the_seed_rule():
    config = IceConfig()
    empty = memory_budget(config, reliance="long_term", conversation_tokens=0, memory_tokens=9000, ceiling=None)
    assert (empty.native, empty.effective, empty.rule) == (2000, 2000, "empty_conversation")
    grown = memory_budget(config, reliance="long_term", conversation_tokens=1000, memory_tokens=0, ceiling=None)
    assert (grown.native, grown.basis_tokens, grown.rule) == (2500, 1000, "growth")
    capped = memory_budget(config, reliance="long_term", conversation_tokens=100_000, memory_tokens=0, ceiling=None)
    assert capped.native == 16000
    short = memory_budget(config, reliance="short_term", conversation_tokens=1000, memory_tokens=0, ceiling=None)
    assert (short.native, short.rule) == (1250, "growth x short_term")
    none = memory_budget(config, reliance="none", conversation_tokens=1000, memory_tokens=0, ceiling=None)
    assert (none.native, none.effective, none.basis_tokens) == (0, 0, 0)
    ceiling = memory_budget(config, reliance="long_term", conversation_tokens=1000, memory_tokens=0, ceiling=700)
    assert (ceiling.native, ceiling.effective) == (2500, 700)
    assert memory_budget(config, reliance="long_term", conversation_tokens=0, memory_tokens=0,
                         ceiling=-5).effective == 0


def test_static_budget_and_the_empty_conversation_fix():
    static = memory_budget(IceConfig(static_budget=5000), reliance="long_term", conversation_tokens=0,
                           memory_tokens=0, ceiling=None)
    assert (static.native, static.rule) == (5000, "static")
    fixed = memory_budget(IceConfig(fix={"empty_conversation_cap": True}), reliance="long_term",
                          conversation_tokens=0, memory_tokens=4000, ceiling=None)
    assert fixed.native == 4000 and fixed.basis_tokens == 4000 and fixed.rule.startswith("fix.empty_conversation_cap")


# -- packing ---------------------------------------------------------------------------------------

def test_phase1_takes_the_best_of_each_type_then_phase2_fills_by_score_and_skips_what_does_not_fit():
    emit, events = relay()
    cands = [cand("e1", score=0.9, tokens=30), cand("e2", score=0.8, tokens=50), cand("g1", "graph", score=0.7,
             tokens=20), cand("e3", score=0.6, tokens=10), cand("e4", score=0.5, tokens=40)]
    result = pack(cands, 100, IceConfig(disabled=frozenset({"diversify.type_cap"})), emit)
    assert result.phase1_ids == {"e1", "g1"}
    assert [c.id for c in result.packed] == ["e1", "e2", "g1"]  # sorted by score at the end
    assert result.used == 100  # exactly full: a candidate that exactly fits is taken
    assert [c.id for c in result.skipped] == ["e3", "e4"]
    p2 = next(e for e in events if e.mechanism == "budget.phase2" and e.stage == "executed")
    assert p2.count == 1 and p2.params["skipped_not_fitting"] == 2 and p2.params["tokens_used"] == 100
    assert next(e for e in events if e.mechanism == "budget.phase2" and e.stage == "output").ids == ("e2",)


def test_phase1_takes_a_pick_that_exactly_fills_the_budget_and_phase2_counts_the_rest():
    emit, events = relay()
    cands = [cand("e1", score=0.9, tokens=100), cand("e2", score=0.5, tokens=1), cand("e3", score=0.4, tokens=1)]
    result = pack(cands, 100, IceConfig(), emit)
    assert result.phase1_ids == {"e1"} and [c.id for c in result.packed] == ["e1"]
    eligible = next(e for e in events if e.mechanism == "budget.phase2" and e.stage == "eligible")
    assert eligible.count == 2  # candidates left after phase 1


def test_the_bonus_and_cap_functions_take_their_context_by_keyword_only():
    emit, _ = relay()
    with pytest.raises(TypeError):
        apply_bonuses([], "c1", IceConfig(), emit)  # type: ignore[misc]
    with pytest.raises(TypeError):
        cap_other_conversations([], "c1", IceConfig(), emit)  # type: ignore[misc]


def test_phase2_continues_past_a_candidate_that_does_not_fit():
    emit, _ = relay()
    cands = [cand("a", score=0.9, tokens=60), cand("b", score=0.8, tokens=50), cand("c", score=0.7, tokens=40)]
    result = pack(cands, 100, IceConfig(), emit)
    assert [c.id for c in result.packed] == ["a", "c"] and [c.id for c in result.skipped] == ["b"]


def test_phase1_disabled_leaves_phase2_to_fill_by_score():
    emit, events = relay()
    cands = [cand("e1", score=0.9, tokens=60), cand("e2", score=0.8, tokens=40), cand("g1", "graph", score=0.1,
             tokens=40)]
    result = pack(cands, 100, IceConfig(disabled=frozenset({"budget.phase1", "diversify.type_cap"})), emit)
    assert result.phase1_ids == set() and [c.id for c in result.packed] == ["e1", "e2"]
    assert stages(events, "budget.phase1") == ["eligible", "skipped"]
    assert pack([], 100, IceConfig(), emit).packed == []


def test_the_type_cap_swaps_the_dominant_types_lowest_for_another_type():
    emit, events = relay()
    cands = [cand("e1", score=0.9), cand("e2", score=0.8), cand("e3", score=0.7), cand("e4", score=0.6),
             cand("g1", "graph", score=0.5), cand("s1", "summary", score=0.4), cand("e5", score=0.3),
             cand("s2", "summary", score=0.25, tokens=30), cand("s3", "summary", score=0.24, tokens=11),
             cand("g2", "graph", score=0.2, tokens=9)]
    result = pack(cands, 60, IceConfig(), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "e3", "g1", "s1", "g2"]  # by score
    assert [c.id for c in result.removed_by_type_cap] == ["e4"]
    # s2 (30) and s3 (11) do not fit the 10 tokens the victim frees; g2 (9) does, and left the skipped list.
    assert [c.id for c in result.skipped] == ["e5", "s2", "s3"]
    out = next(e for e in events if e.mechanism == "diversify.type_cap" and e.stage == "output")
    assert out.ids == ("e4",) and out.reason == "swapped out"
    # At exactly the share nothing moves (4 of 6 is over .6; 3 of 5 is not).
    emit, _ = relay()
    assert pack(cands, 50, IceConfig(), emit).removed_by_type_cap == []
    # A looser share keeps the first packing.
    emit, _ = relay()
    assert pack(cands, 60, IceConfig(type_cap_share=0.7), emit).removed_by_type_cap == []
    emit, events = relay()
    assert pack(cands, 60, IceConfig(disabled=frozenset({"diversify.type_cap"})), emit).removed_by_type_cap == []
    assert stages(events, "diversify.type_cap") == ["eligible", "skipped"]


def test_the_type_cap_never_removes_a_phase1_pick_and_is_ineligible_with_one_type():
    emit, events = relay()
    cands = [cand(f"e{i}", score=1 - i / 10) for i in range(4)]
    result = pack(cands, 1000, IceConfig(), emit)
    assert len(result.packed) == 4 and stages(events, "diversify.type_cap") == ["ineligible"]
    emit, events = relay()
    only = [cand("e1", score=0.9), cand("g1", "graph", score=0.1, tokens=500)]
    result = pack(only, 20, IceConfig(type_cap_share=0.1), emit)
    assert [c.id for c in result.packed] == ["e1"]  # g1 cannot fit; e1 is a phase-1 pick
    assert result.removed_by_type_cap == []


def test_a_leg_without_a_weight_adds_nothing_and_ranks_are_reported_for_fifty():
    emit, events = relay()
    results = {"graph": [cand("g", "graph", legs={"graph": 1})],
               "episodic_vector": [cand(f"v{i:02d}", legs={"episodic_vector": i + 1}) for i in range(51)]}
    fused = fuse(results, {"episodic_vector": 1.0}, IceConfig(), emit)
    assert fused[-1].id == "g" and fused[-1].score == 0.0
    output = next(e for e in events if e.mechanism == "rrf" and e.stage == "output")
    assert len(output.params["ranks"]) == 50 and len(output.ids) == 52


def test_the_current_conversation_bonus_needs_the_same_conversation_not_an_earlier_one():
    emit, _ = relay()
    out = apply_bonuses([cand("a", score=1.0, conv="a0"), cand("z", score=1.0, conv="z9")],
                        current_conversation="c1", config=IceConfig(), emit=emit)
    assert [c.score for c in out] == [1.0, 1.0]


def test_the_empty_conversation_fix_changes_only_the_empty_case():
    fixed = IceConfig(fix={"empty_conversation_cap": True})
    grown = memory_budget(fixed, reliance="long_term", conversation_tokens=1000, memory_tokens=4000, ceiling=None)
    assert (grown.native, grown.basis_tokens, grown.rule) == (2500, 1000, "growth")


def test_phase2_eligible_counts_what_phase1_left():
    emit, events = relay()
    cands = [cand("e1", score=0.9), cand("g1", "graph", score=0.8), cand("e2", score=0.7), cand("g2", "graph", score=0.6)]
    pack(cands, 1000, IceConfig(disabled=frozenset({"diversify.type_cap"})), emit)
    eligible = next(e for e in events if e.mechanism == "budget.phase2" and e.stage == "eligible")
    assert eligible.count == 2


def test_the_type_cap_applies_with_exactly_two_types_and_only_swaps_the_dominant_type():
    emit, events = relay()
    # Graph dominates (4 of 5 > .6); the lowest non-phase-1 graph goes, an episodic comes in.
    cands = [cand("g1", "graph", score=0.9), cand("g2", "graph", score=0.8), cand("e1", score=0.75),
             cand("g3", "graph", score=0.7), cand("g4", "graph", score=0.6), cand("e2", score=0.1)]
    result = pack(cands, 50, IceConfig(), emit)
    assert stages(events, "diversify.type_cap")[0] == "eligible"
    assert [c.id for c in result.removed_by_type_cap] == ["g4"]
    assert {c.id for c in result.packed} == {"g1", "g2", "g3", "e1", "e2"}


def test_concat_mode_is_recognised_when_the_value_comes_from_a_file():
    emit, _ = relay()
    mode = "".join(["con", "cat"])  # not an interned literal, as when read from TOML
    results = {"episodic_lexical": [cand("l1", legs={"episodic_lexical": 1})],
               "episodic_vector": [cand("v1", legs={"episodic_vector": 5})]}
    fused = fuse(results, {"episodic_vector": 1.0, "episodic_lexical": 1.0}, IceConfig(fusion=mode), emit)
    assert [c.id for c in fused] == ["v1", "l1"]  # concat: vector first, whatever its rank in the leg


def test_bonus_multipliers_are_reported_to_four_decimals_for_fifty_hits():
    emit, events = relay()
    hits = [cand(f"h{i:02d}", strength=0.123, score=1.0, conv=None) for i in range(51)]
    apply_bonuses(hits, current_conversation="c1", config=IceConfig(), emit=emit)
    out = next(e for e in events if e.mechanism == "bonus.strength" and e.stage == "output")
    assert len(out.params["multipliers"]) == 50
    assert out.params["multipliers"]["h00"] == 0.5615  # 0.5 + 0.5 * 0.123


def test_phase1_counts_what_it_already_took():
    emit, _ = relay()
    cands = [cand("e1", score=0.9, tokens=10), cand("g1", "graph", score=0.8, tokens=10)]
    result = pack(cands, 15, IceConfig(), emit)
    assert result.phase1_ids == {"e1"} and [c.id for c in result.skipped] == ["g1"]
