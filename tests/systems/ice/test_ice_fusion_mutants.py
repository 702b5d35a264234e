"""ICE fusion, bonuses, the cross-conversation cap, the memory budget and packing: exact outputs,
events and work, written against the mutants that survived `scripts/mutation/ice.toml`."""

from __future__ import annotations

import pytest
from lsrep.systems.ice.config import IceConfig
from lsrep.systems.ice.fusion import apply_bonuses
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
