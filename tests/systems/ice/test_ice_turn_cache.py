"""`get_many` serves turns read before from memory, with their current strength: exactly the
rows `get_many_scan` (the whole read from the file) gives, through adds, reinforcement, decay,
direct strength writes and reopens; and it reads each turn from the file once per open."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _add(store: EpisodicStore, i: int, rng: random.Random) -> None:
    rec = TurnRecord(f"t{i:05d}", rng.choice(["c1", "c2"]), f"s{i // 7}", i,
                     T0 + timedelta(hours=i), rng.choice(["user", "assistant"]),
                     " ".join(rng.choice(["fern", "kayak", "rain", "ünïcode", "x"]) for _ in range(5)),
                     speaker=rng.choice([None, "Ana"]))
    assert store.add(rec, np.ones(4, dtype=np.float32), "general")


def _asked(rng: random.Random, n: int) -> list[str]:
    ids = [f"t{rng.randrange(n + 3):05d}" for _ in range(rng.randint(0, 40))]
    return ids + ids[: rng.randint(0, len(ids))] + (["missing"] if rng.random() < 0.3 else [])


@pytest.mark.parametrize("seed", range(5))
def test_get_many_equals_the_file_through_writes_and_reopens(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "episodic.sqlite"
    store = EpisodicStore(path)
    n, now, compared, served = 0, T0, 0, 0
    for _step in range(300):
        op = rng.random()
        if op < 0.3 or n == 0:
            _add(store, n, rng)
            n += 1
        elif op < 0.45:
            store.reinforce(_asked(rng, n), now)
        elif op < 0.55:
            now += timedelta(days=rng.choice([1, 3, 20]))
            store.decay(now, rng.choice([0.05, 0.3]), 14.0)  # loads the strength arrays
        elif op < 0.6:
            store.set_strengths([(t, rng.random()) for t in _asked(rng, n)], now)
        elif op < 0.63:
            store.close()
            store = EpisodicStore(path)
        else:
            asked = _asked(rng, n)
            before = store.reads.turn_reads
            got = store.get_many(asked)
            want = store.get_many_scan(asked)
            assert list(got) == list(want) and got == want, (seed, _step)
            assert all(got[t].strength.hex() == want[t].strength.hex() for t in got)
            compared += 1
            served += store.reads.turn_reads == before and bool(got)
    assert compared > 50 and served >= 3  # some answers came from memory alone


def test_turns_read_before_are_not_read_again_once_strengths_are_in_memory(tmp_path):
    store = EpisodicStore(tmp_path / "episodic.sqlite")
    rng = random.Random(1)
    for i in range(30):
        _add(store, i, rng)
    ids = [f"t{i:05d}" for i in range(0, 30, 3)]
    store.get_many(ids)
    store.get_many(ids)
    assert store.reads.turn_reads == 2  # strengths not in memory yet: the file answers
    store.decay(T0 + timedelta(days=40), 0.05, 14.0)
    first = store.get_many(ids)
    assert store.reads.turn_reads == 2  # served from memory, with the decayed strengths
    assert first == store.get_many_scan(ids)
    assert all(t.strength < 1.0 for t in first.values())
    store.reinforce(ids[:2], T0 + timedelta(days=41))
    again = store.get_many([*ids, "t00001", "missing"])
    assert store.reads.turn_reads == 3  # only t00001 (and the missing id) went to the file
    assert again == store.get_many_scan([*ids, "t00001", "missing"])
    assert [again[t].strength for t in ids[:2]] == [1.0, 1.0]
    # a turn whose strength changed is kept as read, so the next call builds nothing new
    assert all(store.get_many(ids)[t] is again[t] for t in ids)


@pytest.mark.parametrize("seed", range(5))
def test_conversation_after_skip_equals_the_offset_rule(tmp_path, seed):
    """Random adds to two conversations (some with an index below the turns already kept,
    some equal to one), skips that mostly grow as the summaries worker's do, some that go
    back or jump past the end, and reopens: the same turns as `LIMIT -1 OFFSET skip`."""
    rng = random.Random(seed)
    path = tmp_path / "episodic.sqlite"
    store = EpisodicStore(path)
    n, skips, compared = 0, {"c1": 0, "c2": 0}, 0
    for _step in range(400):
        op = rng.random()
        if op < 0.45:
            conv = rng.choice(["c1", "c2"])
            index = n if rng.random() < 0.85 else rng.randint(0, max(n, 1))  # late, or a repeat
            rec = TurnRecord(f"t{n:05d}", conv, "s", index, T0 + timedelta(minutes=n), "user",
                             f"turn {n}")
            assert store.add(rec, np.ones(4, dtype=np.float32), "general")
            n += 1
        elif op < 0.47:
            store.close()
            store = EpisodicStore(path)
        else:
            conv = rng.choice(["c1", "c2"])
            roll = rng.random()
            if roll < 0.7:
                skips[conv] += rng.choice([0, 0, 1, 3, 20])
            elif roll < 0.85:
                skips[conv] = max(0, skips[conv] - rng.randint(1, 5))
            else:
                skips[conv] = rng.randint(0, n + 5)
            got = store.conversation(conv, skip=skips[conv])
            assert got == store.conversation_scan(conv, skip=skips[conv]), (seed, _step)
            compared += 1
    assert compared > 150
    assert 0 < store.reads.offset_reads < compared  # most calls started after a kept key


def test_summaries_worker_walks_no_offset_after_its_first_night(tmp_path):
    store = EpisodicStore(tmp_path / "episodic.sqlite")
    covered = 0
    for i in range(200):
        rec = TurnRecord(f"t{i:05d}", "c1", "s", i, T0 + timedelta(minutes=i), "user", f"turn {i}")
        store.add(rec, np.ones(4, dtype=np.float32), "general")
        if i % 10 == 9:  # a night: summarise every full batch of 20 (as `run_summaries` asks)
            turns = store.conversation("c1", skip=covered)  # every other night: the same skip
            assert [t.index for t in turns] == list(range(covered, i + 1))
            covered += len(turns) // 20 * 20
    assert store.reads.offset_reads == 2  # the two nights before the first summary (skip 0)
    late = TurnRecord("late", "c1", "s", 5, T0, "user", "late turn")  # sorts among covered turns
    store.add(late, np.ones(4, dtype=np.float32), "general")
    assert store.conversation("c1", skip=covered) == store.conversation_scan("c1", skip=covered)
    assert store.reads.offset_reads == 3
