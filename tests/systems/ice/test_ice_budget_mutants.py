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
