"""Reinforcement skips a row that a reinforcement at the same stamp wrote last (issue 20).

The probes of a checkpoint share `now`, and half the turns they reinforce were reinforced by an
earlier probe of it: rewriting (1.0, now, now) over (1.0, now, now) changes nothing. The file
must stay byte for byte the one every statement leaves (`_reinforce_every_row`, the rule),
after every step of a random history of adds, reinforcements (repeats, unknown ids, the same
stamp again), decays, strength writes and reopened stores; and the statements skipped must be
exactly the rows that hold what they would be given.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from lsrep.systems.ice.db import Transaction
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord

T0 = datetime(2025, 3, 1, 9, tzinfo=UTC)


def _open(tmp_path, name: str) -> EpisodicStore:
    return EpisodicStore(tmp_path / f"{name}.sqlite")


def _add(store: EpisodicStore, i: int) -> None:
    rec = TurnRecord(f"t{i:05d}", "c1", f"s{i // 20}", i, T0 + timedelta(minutes=i), "user", f"turn {i}")
    assert store.add(rec, np.ones(4, dtype=np.float32), "general")


def _reinforce_every_row(store: EpisodicStore, turn_ids: list[str], now: datetime) -> None:
    """The rule: one UPDATE per stored id, in order, repeats included, every time (and the
    strengths in memory, if loaded, mirror it)."""
    stamp = now.isoformat()
    rowids = store.rowids()
    touched = [rowids[t] for t in turn_ids if t in rowids]
    with Transaction(store.conn) as c:
        c.executemany("UPDATE turn_strength SET strength = 1.0, strength_at = ?, last_access = ?"
                      " WHERE rowid = ?", [(stamp, stamp, r) for r in touched])
    if store._strengths is not None:
        for r in touched:
            store._strengths.set(r, 1.0, stamp)


def _rows(store: EpisodicStore) -> list[tuple]:
    return [tuple(r) for r in store.conn.execute("SELECT * FROM turn_strength ORDER BY rowid")]


@pytest.mark.parametrize("seed", range(5))
def test_skipped_reinforcements_leave_the_bytes_every_statement_leaves(tmp_path, seed):
    rng = random.Random(seed)
    fast, plain = _open(tmp_path, "fast"), _open(tmp_path, "plain")
    n, skipped = 0, 0
    for night in range(10):
        for _ in range(rng.randint(3, 25)):
            for store in (fast, plain):
                _add(store, n)
            n += 1
        if rng.random() < 0.7:
            fast.strength_arrays()  # loaded (as the first query or decay does), or not yet
        now = T0 + timedelta(days=night, hours=20)
        pool = [f"t{rng.randrange(n + 2):05d}" for _ in range(rng.randint(1, 12))]
        for _probe in range(rng.randint(1, 6)):
            at = now if rng.random() < 0.8 else now + timedelta(minutes=rng.randint(1, 3))
            ids = [rng.choice(pool) for _ in range(rng.randint(0, 10))]
            before = fast.conn.total_changes
            fast.reinforce(ids, at)
            _reinforce_every_row(plain, ids, at)
            skipped += sum(1 for t in ids if t in fast.rowids()) - (fast.conn.total_changes - before)
            assert _rows(fast) == _rows(plain)
            assert (tmp_path / "fast.sqlite").read_bytes() == (tmp_path / "plain.sqlite").read_bytes()
            if rng.random() < 0.2:  # a write between reinforcements at the same stamp
                updates = [(rng.choice(pool), rng.choice([0.3, 1.0])) for _ in range(2)]
                fast.set_strengths(updates, at)
                plain.set_strengths(updates, at)
        night_at = now + timedelta(hours=rng.choice([0, 1]))
        assert fast.decay(night_at, 0.05, 14.0) == plain.decay(night_at, 0.05, 14.0)
        assert (tmp_path / "fast.sqlite").read_bytes() == (tmp_path / "plain.sqlite").read_bytes()
        if rng.random() < 0.3:
            fast.close()
            fast = _open(tmp_path, "fast")
    assert fast.strengths() == fast.strengths_scan()
    assert skipped > 0  # the history exercised the skip
    fast.close()
    plain.close()


def test_only_rows_holding_what_they_would_get_are_skipped(tmp_path):
    store = _open(tmp_path, "s")
    for i in range(6):
        _add(store, i)
    ids = [f"t{i:05d}" for i in range(6)]
    now = T0 + timedelta(days=2)

    def statements(turn_ids: list[str], at: datetime) -> int:
        before = store.conn.total_changes
        store.reinforce(turn_ids, at)
        return store.conn.total_changes - before

    assert statements(ids[:3], now) == 3  # arrays not loaded: every statement, as the rule
    store.strength_arrays()
    assert statements(ids[:3], now) == 3  # read from the file: not known to be reinforced at now
    assert statements(ids[:4], now) == 2  # the first always runs; t00001, t00002 skipped; t00003 new
    assert statements(ids[1:4], now) == 1
    assert statements(ids[1:3] + ids[1:3], now) == 1
    later = now + timedelta(minutes=1)
    assert statements(ids[:4], later) == 4  # another stamp: every row changes
    store.set_strengths([(ids[2], 1.0)], later)  # same values, but last access not written
    assert statements(ids[:4], later) == 2  # t00000 (first) and t00002 (written since)
    store.decay(later, 0.05, 14.0)  # strength 1.0 at dt 0 stays 1.0: written all the same
    assert statements(ids[:4], later) == 4
    store.close()
