"""ICE's prompt budgets at their edges, pinned by exact values: the slot ceiling keeps a prefix,
the recent window keeps the newest turns that fit and reports what it dropped."""

from __future__ import annotations

from lsrep.systems.ice.assemble import fit_slots, recent_window
from lsrep.systems.ice.episodic import StoredTurn
from lsrep.systems.ice.text import estimate_tokens


def turn(i: int, content: str) -> StoredTurn:
    return StoredTurn(turn_id=f"t{i}", conversation_id="c", session_id="s", index=i,
                      timestamp="2026-01-05T09:00:00", role="user", speaker="Ana", content=content, topic="x",
                      strength=1.0)


def test_the_slot_ceiling_keeps_a_prefix_and_stops_at_the_first_slot_that_does_not_fit():
    slots = [("name", "Ana"), ("bio", "x" * 80), ("city", "Lyon")]
    sizes = [estimate_tokens(f"{k}: {v}") for k, v in slots]
    assert [f.id for f in fit_slots(slots, None)] == ["slot:name", "slot:bio", "slot:city"]
    assert [f.id for f in fit_slots(slots, sum(sizes))] == ["slot:name", "slot:bio", "slot:city"]
    assert [f.id for f in fit_slots(slots, sizes[0] + sizes[2])] == ["slot:name"]  # city fits, bio stopped it
    assert [f.id for f in fit_slots(slots, sizes[0])] == ["slot:name"]
    assert fit_slots(slots, sizes[0] - 1) == []
    twins = [("name", "Ana"), ("city", "Lyo")]  # 3 tokens each: 3 + 3 > 5 (while 3 | 3 would be 3)
    assert [estimate_tokens(f"{k}: {v}") for k, v in twins] == [3, 3]
    assert [f.id for f in fit_slots(twins, 5)] == ["slot:name"]


def test_the_recent_window_keeps_the_newest_turns_that_fit_and_counts_the_dropped_tokens():
    turns = [turn(0, "short"), turn(1, "y" * 120), turn(2, "hi"), turn(3, "ok then")]
    sizes = [t.tokens for t in turns]
    kept, dropped = recent_window(turns, sizes[2] + sizes[3])
    assert [t.turn_id for t in kept] == ["t2", "t3"] and dropped == sizes[0] + sizes[1]
    kept, dropped = recent_window(turns, sizes[2] + sizes[3] + sizes[0])  # t0 would fit, t1 stops the walk
    assert [t.turn_id for t in kept] == ["t2", "t3"] and dropped == sizes[0] + sizes[1]
    kept, dropped = recent_window(turns, sum(sizes))
    assert [t.turn_id for t in kept] == ["t0", "t1", "t2", "t3"] and dropped == 0
    assert recent_window(turns, sizes[3] - 1) == ([], sum(sizes))


def test_assembly_sections_roles_and_block_tokens_are_exact():
    from lsrep.systems.ice.assemble import SYSTEM_PREAMBLE, ContextFragment, assemble
    from lsrep.systems.ice.legs import Candidate

    slots = fit_slots([("name", "Ana")], None)
    # a slot fragment whose kind is an equal but distinct string: kinds compare by value
    slots.append(ContextFragment(id="slot:city", text="city: Lyon", kind="".join(["sl", "ot"]), source_type="slot",
                                 mechanisms=("slots",), source_turn_ids=()))
    memory = [Candidate(id="ep:t0", source_type="episodic", text="Ana likes tea", conversation_id="c",
                        source_turn_ids=("t0",), legs={"episodic_vector": 1}, score=0.123456789123)]
    agent = StoredTurn(turn_id="t3", conversation_id="c", session_id="s", index=3, timestamp="2026-01-05T09:02:00",
                       role="agent", speaker="Bot", content="noted", topic="x", strength=1.0)
    recent = [turn(1, "hello"), StoredTurn(turn_id="t2", conversation_id="c", session_id="s", index=2,
                                           timestamp="2026-01-05T09:01:00", role="assistant", speaker=None,
                                           content="hi Ana", topic="x", strength=1.0), agent]
    a = assemble(slots, memory, recent, "What do I like?")
    assert a.context_text == ("## Memory slots\n- name: Ana\n- city: Lyon\n\n## Retrieved memory\n- Ana likes tea"
                              "\n\n## Recent conversation\n- [2026-01-05 Ana] hello\n- [2026-01-05 assistant] hi Ana"
                              "\n- [2026-01-05 Bot] noted")
    # only the `assistant` role is sent as the assistant's; any other role goes as the user's
    assert [m["role"] for m in a.messages] == ["system", "user", "assistant", "user", "user"]
    assert (a.unattributable, a.without_source_turns) == (0, 2)  # the two slots cite no turn
    assert a.fragments[2].score == 0.12345679  # memory scores are rounded to 8 decimals
    assert a.messages[0]["content"] == (SYSTEM_PREAMBLE + "\n\n## Memory slots\n- name: Ana\n- city: Lyon"
                                        "\n\n## Retrieved memory\n- Ana likes tea")
    assert a.block_tokens == {
        "slot": estimate_tokens("name: Ana") + estimate_tokens("city: Lyon"),
        "memory": estimate_tokens("Ana likes tea"),
        "recent": estimate_tokens("[2026-01-05 Ana] hello") + estimate_tokens("[2026-01-05 assistant] hi Ana")
        + estimate_tokens("[2026-01-05 Bot] noted"),
        "live_message": estimate_tokens("What do I like?"),
        "prompt_total": sum(estimate_tokens(m["content"]) for m in a.messages)}


def test_decay_reports_nothing_changed_when_no_time_passed_and_zero_when_disabled(harness):
    from ice_testkit import day

    h = harness()
    h.say("I baked sourdough bread.", at=0)
    assert h.system.run_decay(now=day(14)) >= 1
    assert h.system.run_decay(now=day(14)) == 0  # dt = 0: every strength is unchanged
    assert harness().system.run_decay(now=day(14)) == 0  # nothing stored
    off = harness(disabled=frozenset({"worker.decay"}))
    off.say("I baked sourdough bread.", at=0)
    assert off.system.run_decay(now=day(60)) == 0


def test_a_half_life_must_be_positive():
    import pytest
    from lsrep.systems.ice.config import IceConfig
    from pydantic import ValidationError

    for bad in (0.0, -14.0):  # 0 divided by zero in `decayed`; < 0 made strengths grow
        with pytest.raises(ValidationError, match="decay_half_life_days"):
            IceConfig(decay_half_life_days=bad)
    assert IceConfig(decay_half_life_days=0.5).decay_half_life_days == 0.5


def test_the_assistant_role_is_compared_by_value_and_a_fragment_without_mechanisms_is_counted():
    from lsrep.systems.ice.assemble import assemble
    from lsrep.systems.ice.legs import Candidate

    role = "".join(["assis", "tant"])  # equal to "assistant", another object (as read from SQLite)
    reply = StoredTurn(turn_id="t1", conversation_id="c", session_id="s", index=1, timestamp="2026-01-05T09:00:00",
                       role=role, speaker=None, content="hi", topic="x", strength=1.0)
    bare = Candidate(id="x", source_type="episodic", text="orphan", conversation_id="c", source_turn_ids=("t0",))
    a = assemble([], [bare], [reply], "q")
    assert [m["role"] for m in a.messages] == ["system", "assistant", "user"]
    assert a.unattributable == 1


def test_decayed_follows_the_half_life_between_multiples_and_never_grows_backwards_in_time():
    import math

    from ice_testkit import day
    from lsrep.systems.ice.config import IceConfig
    from lsrep.systems.ice.workers import decayed

    config = IceConfig()
    since = day(10).isoformat()
    assert math.isclose(decayed(0.8, since, day(17), config), 0.8 * 2 ** -0.5, rel_tol=1e-12)  # 7 of 14 days
    assert decayed(0.8, since, day(9), config) == 0.8  # a clock before `since`: dt is 0, not negative


def test_the_reported_mean_strength_is_over_every_stored_strength_floor_rows_included(harness):
    from ice_testkit import day

    h = harness()
    h.say("I baked sourdough bread with my sister Maria.", at=0)
    h.system.run_decay(now=day(300))  # everything at the floor
    h.say("I planted tomatoes in the garden.", at=300)
    h.system.run_decay(now=day(301))
    db = h.system.db
    everything = [s for store in (db.episodic, db.codex, db.procedures) for _i, s, _at in store.strengths()]
    floor = h.system.config.decay_floor
    assert 0 < sum(1 for s in everything if s == floor) < len(everything)  # some rows at the floor, some not
    assert h.recorder.last("worker.decay", "output").params["mean_strength"] == round(sum(everything) / len(everything), 6)


def test_context_fragments_are_immutable():
    import dataclasses

    import pytest
    from lsrep.systems.ice.assemble import ContextFragment

    frag = fit_slots([("name", "Ana")], None)[0]
    assert isinstance(frag, ContextFragment)
    with pytest.raises(dataclasses.FrozenInstanceError):
        frag.text = "x"  # type: ignore[misc]


def test_decay_counts_fractions_of_a_day_and_returns_how_many_strengths_changed(harness):
    import math

    from ice_testkit import day
    from lsrep.systems.ice.config import IceConfig
    from lsrep.systems.ice.workers import decayed

    assert math.isclose(decayed(0.8, day(10).isoformat(), day(10.5), IceConfig()), 0.8 * 2 ** (-0.5 / 14),
                        rel_tol=1e-12)
    h = harness()
    h.say("I baked sourdough bread with my sister Maria.", at=0)
    db = h.system.db

    def strengths() -> dict[str, float]:
        return {i: s for store in (db.episodic, db.codex, db.procedures) for i, s, _at in store.strengths()}

    before = strengths()
    changed = h.system.run_decay(now=day(3))
    after = strengths()
    assert changed == sum(1 for i in before if after[i] != before[i]) and changed >= 1


def test_an_assembly_is_immutable():
    import dataclasses

    import pytest
    from lsrep.systems.ice.assemble import assemble

    a = assemble([], [], [], "q")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.context_text = "x"  # type: ignore[misc]


def test_top_k_stable_equals_a_full_stable_sort_on_large_arrays():
    import numpy as np
    from lsrep.systems.ice.episodic import top_k_stable

    rng = np.random.default_rng(3)
    for _ in range(60):
        scores = rng.random(int(rng.integers(100, 2000))).astype(np.float32)
        k = int(rng.integers(1, 40))
        assert list(top_k_stable(scores, k)) == list(np.argsort(-scores, kind="stable")[:k])


def test_the_episodic_legs_are_ineligible_on_an_empty_store(harness):
    h = harness()
    h.ask("What bread did I bake last week?")
    for leg in ("leg.episodic_vector", "leg.episodic_lexical"):
        assert h.recorder.last(leg, "ineligible").reason == "store empty"


def test_a_leg_weighted_zero_for_the_intent_does_not_run(harness):
    from lsrep.systems.ice.config import DEFAULT_INTENT_WEIGHTS

    weights = {intent: {**legs, "episodic_lexical": 0.0} for intent, legs in DEFAULT_INTENT_WEIGHTS.items()}
    h = harness(intent_weights=weights)
    h.say("I baked sourdough bread.")
    h.ask("What bread did I bake?")
    assert h.recorder.last("leg.episodic_lexical", "ineligible").reason.startswith("weight 0 for intent")
    assert h.recorder.stages("leg.episodic_lexical") == ["ineligible"]
