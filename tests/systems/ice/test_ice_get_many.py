"""`get_many` (one query per 500 ids) equals one `get` per id, in the asked order (issue 20)."""

from __future__ import annotations


def test_get_many_equals_one_get_per_id_in_order_with_duplicates_and_misses(harness):
    h = harness()
    for n in range(12):
        h.say(f"Note {n}: I repotted the fern number {n} today.")
    episodic = h.system.db.episodic
    ids = [t.turn_id for t in episodic.all_turns()]
    asked = [ids[5], "missing", ids[0], ids[5], *reversed(ids), "also-missing"] * 60  # > 500 ids
    expected = {t: s for t in asked if (s := episodic.get(t)) is not None}
    got = episodic.get_many(asked)
    assert list(got) == list(expected) and got == expected
    assert list(got)[:2] == [ids[5], ids[0]]
