"""THALIA's fusion (weighted RRF, recency, MMR) and the Memory Gate: exact outputs, events and work,
written against the mutants that survived `scripts/mutation/thalia.toml`."""

from __future__ import annotations

import inspect
from dataclasses import FrozenInstanceError, astuple
from datetime import timedelta
from inspect import Parameter

import pytest
from lsrep.systems.thalia.contracts import Episode
from lsrep.systems.thalia.fusion import Fused, Lane, Scored, apply_recency
from lsrep.systems.thalia.gate import Decision, MemoryGate, gate_flags
from lsrep.systems.thalia.routing import classify_task
from thalia_testkit import T0

# -- the Memory Gate ---------------------------------------------------------------------------

def test_an_assistant_turn_never_makes_its_class_novel(make, recorder):
    t = make()
    out = t.append_turn("I now live in Lisbon", role="assistant", session_id="s1", timestamp=T0, source_id="a")
    assert out.criteria == {"session_end": False, "novel_class": False, "explicit": False}
    (executed,) = recorder.of("gate.criteria", "executed")
    assert executed.params == {"session_end": False, "novel_class": False, "explicit": False,
                               "r_N": False, "trigger": "turn"}
    assert recorder.of("gate.criteria", "output") == []


def test_another_speaker_role_never_makes_its_class_novel(make, recorder):
    # Roles other than user and assistant are allowed (protocol: "other speaker role"); one that sorts
    # after "user" must not pass for the user either.
    t = make()
    out = t.append_turn("I now live in Lisbon", role="visitor", session_id="s1", timestamp=T0, source_id="a")
    assert out.criteria == {"session_end": False, "novel_class": False, "explicit": False}
    assert out.action == "none" and out.requires_consolidation is False


# -- fusion records ----------------------------------------------------------------------------

@pytest.mark.parametrize("record", [Lane("bm25", (1, 2), 0.5), Fused(3, 0.25), Scored(4, 0.5, 7)])
def test_fusion_records_are_frozen_and_hashable(record):
    assert hash(record) == hash(type(record)(*astuple(record)))
    with pytest.raises(FrozenInstanceError):
        record.doc = 9  # type: ignore[misc]


def test_an_append_reports_no_replaced_bullet_and_a_session_end_update_reports_it(make, recorder):
    t = make()
    lisbon = "- I now live in Lisbon (source: turn 1, 2024-05-01)"
    out = t.append_turn("I now live in Lisbon", role="user", session_id="s1", timestamp=T0, source_id="a0")
    assert (out.action, out.delta, out.replaced) == ("append_memory", lisbon, None)
    appended = {"action": "append_memory", "delta": lisbon, "source_turn": 1, "trigger": "turn"}
    assert [(e.stage, e.count, e.ids, e.params, e.source_turn_ids) for e in recorder.of("gate.consolidate")] == [
        ("eligible", None, (), {"criteria": ["novel_class"]}, ("a0",)),
        ("executed", 1, (), appended, ("a0",)),
        ("output", 1, ("turn:1",), appended, ("a0",))]
    # The second turn's class is no longer novel: nothing is written until the session ends.
    out = t.append_turn("I now live in Porto", role="user", session_id="s1", timestamp=T0 + timedelta(minutes=1),
                        source_id="a1")
    assert out.action == "none" and out.criteria["novel_class"] is False
    recorder.clear()
    out = t.end_session("s1", timestamp=T0 + timedelta(minutes=9))
    porto = "- I now live in Porto (source: turn 2, 2024-05-01) (was: turn 1, 2024-05-01)"
    # At session end the last user turn is re-evaluated; its class was stored with it, so it is not novel.
    assert out.criteria == {"session_end": True, "novel_class": False, "explicit": False}
    assert (out.action, out.delta, out.replaced) == ("update_memory", porto, lisbon)
    updated = {"action": "update_memory", "delta": porto, "source_turn": 2, "trigger": "session_end",
               "replaced": lisbon}
    assert [(e.mechanism, e.stage, e.count, e.ids, e.params) for e in recorder.events] == [
        ("gate.criteria", "eligible", None, (), {}),
        ("gate.criteria", "executed", None, (), {"session_end": True, "novel_class": False, "explicit": False,
                                                 "r_N": True, "trigger": "session_end"}),
        ("gate.criteria", "output", 1, (), {"held": ["session_end"]}),
        ("gate.consolidate", "eligible", None, (), {"criteria": ["session_end"]}),
        ("gate.consolidate", "executed", 1, (), updated),
        ("gate.consolidate", "output", 1, ("turn:2",), updated)]


def test_gate_flags_hear_only_a_users_non_empty_words():
    def episode(role: str, query: str) -> Episode:
        return Episode(turn_id=1, source_id="a", session_id="s1", timestamp=T0, role=role, speaker="",
                       query=query, answer="", task_category=classify_task(query))

    ask = "Remember that my locker code is 4411"
    assert gate_flags(episode("user", ask)) == (True, True)
    assert gate_flags(episode("assistant", ask)) == (False, False)  # a query on another role's turn
    assert gate_flags(episode("visitor", ask)) == (False, False)
    assert gate_flags(episode("user", "")) == (False, False)


# -- recency -----------------------------------------------------------------------------------

def test_recency_applies_when_the_newest_transcript_position_is_one():
    out = apply_recency([Scored(0, 0.5, 0), Scored(1, 0.4, 1)], 0.5)
    assert out == [Scored(1, round(0.4 + 0.5 * 0.5 * 1 / 1, 8), 1), Scored(0, 0.5, 0)]


def test_admit_takes_session_end_and_the_flags_by_keyword_only(make):
    t = make()
    kinds = {name: p.kind for name, p in inspect.signature(MemoryGate.admit).parameters.items()}
    assert kinds == {"self": Parameter.POSITIONAL_OR_KEYWORD, "episode": Parameter.POSITIONAL_OR_KEYWORD, "session_end": Parameter.KEYWORD_ONLY,
                     "r_n": Parameter.KEYWORD_ONLY, "x_n": Parameter.KEYWORD_ONLY}
    episode = Episode(turn_id=1, source_id="a", session_id="s1", timestamp=T0, role="user", speaker="",
                      query="I now live in Lisbon", answer="")
    with pytest.raises(TypeError):
        t.gate.admit(episode, True)


def test_the_gate_decision_is_frozen_and_hashable():
    decision = Decision(held=("session_end",), delta=None, reason="ablated", eligible=True)
    assert hash(decision) == hash(Decision(("session_end",), None, "ablated", True))
    with pytest.raises(FrozenInstanceError):
        decision.eligible = False  # type: ignore[misc]


def test_a_probe_reports_that_it_would_append(make, recorder):
    t = make()
    t.answer("remember that my locker code is 4411", timestamp=T0)
    (skipped,) = recorder.of("gate.append", "skipped")
    assert skipped.reason == "read-only probe"
    assert skipped.params == {"would_append": True, "would_consolidate": True, "session_end": False,
                              "novel_class": True, "explicit": True, "r_N": True}
