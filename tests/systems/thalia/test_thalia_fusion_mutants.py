"""THALIA's fusion (weighted RRF, recency, MMR) and the Memory Gate: exact outputs, events and work,
written against the mutants that survived `scripts/mutation/thalia.toml`."""

from __future__ import annotations

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
