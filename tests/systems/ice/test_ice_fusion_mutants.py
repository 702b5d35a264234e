"""ICE fusion, bonuses, the cross-conversation cap, the memory budget and packing: exact outputs,
events and work, written against the mutants that survived `scripts/mutation/ice.toml`."""

from __future__ import annotations

import inspect
from dataclasses import FrozenInstanceError

import pytest
from lsrep.systems.ice.config import IceConfig
from lsrep.systems.ice.fusion import apply_bonuses, cap_other_conversations, fuse
from lsrep.systems.ice.packing import MemoryBudget, memory_budget, pack
from test_ice_fusion_packing import cand, relay


def trail(events, mechanism: str) -> list[tuple]:
    return [(e.stage, e.count, e.ids, e.reason) for e in events if e.mechanism == mechanism]


# -- bonuses -----------------------------------------------------------------------------------

def test_a_disabled_first_bonus_does_not_stop_the_later_ones():
    emit, events = relay()
    graph = cand("g", "graph", confident=True, score=1.0, conv=None)
    strong = cand("s", strength=1.0, score=1.0, conv="c1")
    out = apply_bonuses([graph, strong], current_conversation="c1",
                        config=IceConfig(disabled=frozenset({"bonus.confidence"})), emit=emit)
    assert {c.id: c.score for c in out} == pytest.approx({"g": 1.0, "s": 1.2})
    assert [c.id for c in out] == ["s", "g"]
    assert trail(events, "bonus.confidence") == [("eligible", 1, (), None), ("skipped", None, (), "disabled")]
    assert trail(events, "bonus.strength") == [("eligible", 1, (), None), ("executed", 1, ("s",), None),
                                               ("output", 1, ("s",), None)]
    assert trail(events, "bonus.current_conv") == [("eligible", 1, (), None), ("executed", 1, ("s",), None),
                                                   ("output", 1, ("s",), None)]


# -- the type cap ------------------------------------------------------------------------------

def test_the_type_cap_frees_the_victims_tokens_on_top_of_the_unused_budget():
    # Phase 2 packs e1-e3 (30 of 32 tokens) and skips d1 (12). The cap's victim e3 frees 10 tokens:
    # room = 32 - 30 + 10 = 12, exactly d1's size, so d1 takes e3's place and leaves the skipped list.
    emit, events = relay()
    cands = [cand("e1", score=0.9), cand("e2", score=0.8), cand("e3", score=0.7),
             cand("d1", "document", score=0.6, tokens=12)]
    result = pack(cands, 32, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "d1"]
    assert [c.id for c in result.removed_by_type_cap] == ["e3"] and result.skipped == []
    assert result.used == 32
    assert trail(events, "diversify.type_cap") == [("eligible", 3, (), None), ("executed", 1, ("e3",), None),
                                                   ("output", 1, ("e3",), "swapped out")]
    # One token less of budget and d1 no longer fits in what e3 frees.
    emit, _ = relay()
    result = pack(cands, 31, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "e3"] and result.removed_by_type_cap == []


def test_the_type_cap_room_is_the_unused_budget_plus_the_victim_when_most_is_unused():
    # Phase 2 leaves 30 of 60 tokens unused (d1 needs 32); the victim e3 frees 10 more: 40 >= 32.
    emit, _ = relay()
    cands = [cand("e1", score=0.9), cand("e2", score=0.8), cand("e3", score=0.7),
             cand("d1", "document", score=0.6, tokens=32)]
    result = pack(cands, 60, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "d1"] and result.used == 52
    assert [c.id for c in result.removed_by_type_cap] == ["e3"] and result.skipped == []


# -- fusion ------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [60, 10])
def test_rrf_adds_k_and_the_rank_for_every_rank_of_a_long_leg(k):
    emit, _ = relay()
    ranked = [cand(f"v{r}", legs={"episodic_vector": r}) for r in range(1, 9)]
    fused = fuse({"episodic_vector": ranked}, {"episodic_vector": 0.5}, IceConfig(rrf_k=k), emit)
    assert [c.id for c in fused] == [f"v{r}" for r in range(1, 9)]
    assert [c.score for c in fused] == [0.5 / (k + r) for r in range(1, 9)]


def test_the_current_conversation_bonus_compares_ids_by_value():
    # An id read from a file or built at run time is an equal string, not the same object.
    emit, events = relay()
    current = "".join(["c", "1"])
    out = apply_bonuses([cand("a", score=1.0, conv="c1"), cand("b", score=1.0, conv="c2")],
                        current_conversation=current, config=IceConfig(), emit=emit)
    assert [(c.id, c.score) for c in out] == [("a", 1.2), ("b", 1.0)]
    assert trail(events, "bonus.current_conv") == [("eligible", 1, (), None), ("executed", 1, ("a",), None),
                                                   ("output", 1, ("a",), None)]


def test_bonus_multipliers_are_reported_rounded_to_four_decimals():
    emit, events = relay()
    (out,) = apply_bonuses([cand("h", strength=0.12345, score=1.0, conv=None)], current_conversation="c1",
                           config=IceConfig(), emit=emit)
    assert out.score == 0.5 + 0.5 * 0.12345  # the score itself is not rounded
    output = next(e for e in events if e.mechanism == "bonus.strength" and e.stage == "output")
    assert output.params == {"multipliers": {"h": 0.5617}}


# -- the memory budget -------------------------------------------------------------------------

def test_the_memory_budget_is_frozen_and_hashable():
    budget = memory_budget(IceConfig(), reliance="long_term_memory", conversation_tokens=0, memory_tokens=0,
                           ceiling=None)
    assert budget == MemoryBudget(2000, 2000, 0, "empty_conversation")
    assert hash(budget) == hash(MemoryBudget(2000, 2000, 0, "empty_conversation"))
    with pytest.raises(FrozenInstanceError):
        budget.effective = 0  # type: ignore[misc]


def test_the_type_cap_compares_source_types_by_value():
    # Source types read from a file are equal strings, not the same object: every episodic
    # fragment is of the dominant type, and the lowest-scored one (e3) is the victim.
    emit, _ = relay()
    cands = [cand(c, "".join(["epi", "sodic"]), score=s) for c, s in (("e1", 0.9), ("e2", 0.8), ("e3", 0.7))]
    cands.append(cand("d1", "document", score=0.6, tokens=12))
    result = pack(cands, 32, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "d1"]
    assert [c.id for c in result.removed_by_type_cap] == ["e3"]


def test_phase1_compares_source_types_by_value():
    emit, events = relay()
    cands = [cand("e1", "".join(["epi", "sodic"]), score=0.9), cand("g1", "".join(["gr", "aph"]), score=0.8)]
    result = pack(cands, 100, IceConfig(), emit)
    assert result.phase1_ids == {"e1", "g1"}
    assert trail(events, "budget.phase1") == [("eligible", 2, (), None), ("executed", 2, (), None),
                                              ("output", 2, ("e1", "g1"), None)]


def test_the_confidence_bonus_is_for_confident_graph_fragments_only():
    # A source type read from a file is an equal string, not the same object; a confident flag on
    # another type earns nothing.
    emit, events = relay()
    graph = cand("g", "".join(["gr", "aph"]), confident=True, score=1.0, conv=None)
    others = [cand(t[0], t, confident=True, score=1.0, conv=None)
              for t in ("document", "episodic", "procedural", "summary")]
    out = apply_bonuses([graph, *others], current_conversation="c1", config=IceConfig(), emit=emit)
    assert [(c.id, c.score) for c in out] == [("g", 1.5), ("d", 1.0), ("e", 1.0), ("p", 1.0), ("s", 1.0)]
    assert trail(events, "bonus.confidence") == [("eligible", 1, (), None), ("executed", 1, ("g",), None),
                                                 ("output", 1, ("g",), None)]


def test_the_strength_bonus_applies_to_every_source_type_but_graph():
    emit, events = relay()
    # The graph type is built at run time, as when read from a file: equal, not the same object.
    cands = [cand(t[0], t, strength=0.0, score=1.0, conv=None)
             for t in ("document", "episodic", "".join(["gr", "aph"]), "procedural", "summary")]
    out = apply_bonuses(cands, current_conversation="c1", config=IceConfig(), emit=emit)
    assert {c.id: c.score for c in out} == {"d": 0.5, "e": 0.5, "g": 1.0, "p": 0.5, "s": 0.5}
    assert trail(events, "bonus.strength")[1] == ("executed", 4, ("d", "e", "p", "s"), None)


# -- the cross-conversation cap ----------------------------------------------------------------

def test_the_cap_exempts_the_current_conversation_compared_by_value():
    emit, events = relay()
    cands = [cand(f"c{i}", conv="c1") for i in range(3)] + [cand(f"o{i}", conv="other") for i in range(3)]
    kept = cap_other_conversations(cands, current_conversation="".join(["c", "1"]),
                                   config=IceConfig(cross_conversation_cap=1), emit=emit)
    assert [c.id for c in kept] == ["c0", "c1", "c2", "o0"]
    executed = next(e for e in events if e.mechanism == "diversify.cross_conv_cap" and e.stage == "executed")
    assert executed.ids == ("o1", "o2") and executed.params == {
        "cap": 1, "before": 6, "after": 4, "other_conversations": 1}


def test_the_memory_budget_compares_reliance_by_value():
    # A reliance read from a file or a forced classification is an equal string, not the same object.
    config = IceConfig()
    none = memory_budget(config, reliance="".join(["no", "ne"]), conversation_tokens=100, memory_tokens=0,
                         ceiling=None)
    assert none == MemoryBudget(0, 0, 0, "reliance none: no retrieval")
    short = memory_budget(config, reliance="".join(["short", "_term"]), conversation_tokens=100, memory_tokens=0,
                          ceiling=None)
    assert short == MemoryBudget(1025, 1025, 100, "growth x short_term")  # (2000 + 0.5 * 100) * 0.5


def test_the_type_cap_swaps_out_only_fragments_of_the_dominant_type():
    # Episodic holds 3 of 4 slots; the lowest-scored packed fragment is a summary (s1), which is not
    # of the dominant type and stays: e3 is swapped for d1.
    emit, _ = relay()
    cands = [cand("e1", score=0.9), cand("e2", score=0.8), cand("e3", score=0.7),
             cand("s1", "summary", score=0.65), cand("d1", "document", score=0.5)]
    result = pack(cands, 40, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "s1", "d1"]
    assert [c.id for c in result.removed_by_type_cap] == ["e3"] and result.skipped == []
    # The same with the lowest-scored packed fragment of a type that sorts before the dominant one.
    emit, _ = relay()
    cands = [cand("e1", score=0.9), cand("e2", score=0.8), cand("e3", score=0.7),
             cand("d0", "document", score=0.65), cand("g1", "graph", score=0.5)]
    result = pack(cands, 40, IceConfig(disabled=frozenset({"budget.phase1"})), emit)
    assert [c.id for c in result.packed] == ["e1", "e2", "d0", "g1"]
    assert [c.id for c in result.removed_by_type_cap] == ["e3"] and result.skipped == []


def test_the_memory_budget_takes_its_inputs_by_keyword_only():
    kinds = {name: p.kind.name for name, p in inspect.signature(memory_budget).parameters.items()}
    assert kinds == {"config": "POSITIONAL_OR_KEYWORD", "reliance": "KEYWORD_ONLY",
                     "conversation_tokens": "KEYWORD_ONLY", "memory_tokens": "KEYWORD_ONLY", "ceiling": "KEYWORD_ONLY"}
    with pytest.raises(TypeError):
        memory_budget(IceConfig(), "short_term", 100, 0, None)  # type: ignore[misc]
