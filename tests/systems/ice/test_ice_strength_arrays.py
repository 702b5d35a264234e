"""ICE's turn strengths in memory (`StrengthArrays`, `turn_strength`) give exactly what the
row-by-row decay gave: the same strengths bit for bit, the same worker.decay events, the same
retrieval, and the same file as the per-row writes.

The reference is the rule as it stood before (kept here as `run_decay_rowwise`): every store's
strengths above the floor read row by row, aged by `decayed_all`, written by `set_strengths`.
"""

from __future__ import annotations

import json
import random
import struct
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from ice_testkit import FILLER, Harness, day
from lsrep.systems.ice import IceConfig
from lsrep.systems.ice.db import open_database
from lsrep.systems.ice.episodic import MIGRATIONS, EpisodicStore, TurnRecord
from lsrep.systems.ice.strengths import StrengthArrays, decay_power
from lsrep.systems.ice.workers import decayed, decayed_all

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _bits(values) -> list[bytes]:
    return [struct.pack("<d", float(v)) for v in values]


def run_decay_rowwise(*, stores, config: IceConfig, now: datetime, emit) -> int:
    """`workers.run_decay` as it was: every store row by row (`decayed_all`, `set_strengths`)."""
    name = "worker.decay"
    targets = (stores.episodic, stores.codex, stores.procedures)
    stats = [store.strength_stats() for store in targets]
    total = sum(n for n, _sum in stats)
    if not total:
        emit(name, "ineligible", reason="nothing stored")
        return 0
    emit(name, "eligible", count=total)
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return 0
    floor = config.decay_floor
    changed = 0
    strength_sum = 0.0
    for store, (n, _sum) in zip(targets, stats, strict=True):
        rows = store.strengths(above=floor) if n else []
        updates = decayed_all(rows, now, config)
        changed += sum(1 for (_i, new), (_j, old, _a) in zip(updates, rows, strict=True)
                       if new != old)
        strength_sum += sum(s for _i, s in updates) + floor * (n - len(rows))
        if updates:
            store.set_strengths(updates, now)
    emit(name, "executed", count=total, params={
        "half_life_days": config.decay_half_life_days, "floor": config.decay_floor})
    if changed:
        emit(name, "output", count=changed, params={"mean_strength": round(strength_sum / total, 6)})
    return changed


# -- the arrays against decayed_all ------------------------------------------------------------

def _random_rows(rng: random.Random, n: int, floor: float, now: datetime):
    """(rowid, strength, set at) with few shared stamps, strengths at, just above and below the
    floor, and values whose decay lands next to the floor (near-ties)."""
    stamps = [(now - timedelta(days=rng.choice([0, 0.5, 1, 3, 14, 40]), minutes=rng.randint(0, 3)))
              .isoformat() for _ in range(6)]
    stamps.append((now + timedelta(hours=2)).isoformat())  # set after `now`: dt clamps to 0
    rows = []
    for rowid in range(1, n + 1):
        at = rng.choice(stamps)
        kind = rng.random()
        if kind < 0.15:
            s = floor
        elif kind < 0.25:
            s = floor * rng.uniform(0.5, 1.0)  # below the floor (a floor raised since): untouched
        elif kind < 0.4:
            s = np.nextafter(floor, 1.0)  # just above: decays onto the floor
        elif kind < 0.55:
            # the value whose decay at this stamp is the floor, and its neighbours
            p = decay_power(at, now, 14.0)
            s = float(np.nextafter(floor / p, rng.choice([0.0, 2.0]))) if rng.random() < 0.7 else floor / p
            s = min(s, 1.0)
        else:
            s = rng.choice([1.0, rng.random()])
        rows.append((rowid, s, at))
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_array_decay_is_decayed_all_bit_for_bit(seed):
    rng = random.Random(seed)
    floor = rng.choice([0.05, 0.1, 0.0])
    config = IceConfig(decay_floor=floor, decay_half_life_days=14.0)
    now = T0 + timedelta(days=100)
    rows = _random_rows(rng, 300, floor, now)
    holes = set(rng.sample(range(1, 301), 20))  # rowids without a turn
    kept = [r for r in rows if r[0] not in holes]
    arrays = StrengthArrays({r: f"t{r:04d}" for r, _s, _a in kept}, kept)
    live = [(f"t{r:04d}", s, at) for r, s, at in kept if s > floor]
    assert arrays.rows(floor) == live and arrays.count == len(kept)
    expected = decayed_all(live, now, config)
    rowids, new, changed = arrays.decay(now, floor, 14.0)
    assert [f"t{r:04d}" for r in rowids] == [i for i, _s in expected]
    assert _bits(new) == _bits(s for _i, s in expected)
    assert changed == sum(1 for (_i, n), (_j, o, _a) in zip(expected, live, strict=True) if n != o)
    # every aged row is set at `now`; rows at or below the floor keep their value and stamp
    after = {i: (s, at) for i, s, at in arrays.rows()}
    stamp = now.isoformat()
    for (tid, s), _old in zip(expected, live, strict=True):
        assert after[tid] == (s, stamp)
    for r, s, at in kept:
        if not s > floor:
            assert after[f"t{r:04d}"] == (s, at)
    assert any(s == floor for _i, s in expected) and any(s > floor for _i, s in expected)


def test_array_decay_pins_floor_exponent_and_stamps():
    arrays = StrengthArrays({1: "a", 2: "b", 3: "c", 4: "d"}, [
        (1, 1.0, "2024-01-01T00:00:00+00:00"), (2, 0.5, "2024-01-08T00:00:00+00:00"),
        (3, 0.06, "2024-01-01T00:00:00+00:00"), (4, 0.05, "2024-01-01T00:00:00+00:00")])
    now = datetime(2024, 1, 15, tzinfo=UTC)
    rowids, new, changed = arrays.decay(now, 0.05, 14.0)
    # a: one half-life; b: half of one; c: below the floor after a half-life -> the floor; d: at it
    assert rowids == [1, 2, 3] and changed == 3
    assert new == [0.5, 0.5 * 2.0 ** -0.5, 0.05]
    assert arrays.rows() == [("a", 0.5, now.isoformat()), ("b", 0.5 * 2.0 ** -0.5, now.isoformat()),
                             ("c", 0.05, now.isoformat()), ("d", 0.05, "2024-01-01T00:00:00+00:00")]
    # the next night ages from the new stamp, not the old one
    later = now + timedelta(days=7)
    _r, new, _c = arrays.decay(later, 0.05, 14.0)
    assert new == [0.5 * 2.0 ** -0.5, 0.5 * 2.0 ** -0.5 * 2.0 ** -0.5]
    assert arrays.rows(0.05) == [("a", 0.5 * 2.0 ** -0.5, later.isoformat()),
                                 ("b", 0.5 * 2.0 ** -0.5 * 2.0 ** -0.5, later.isoformat())]
    # the same night again changes nothing (dt = 0) but restamps
    assert arrays.decay(later, 0.05, 14.0)[2] == 0
    assert decay_power("2024-01-02T00:00:00+00:00", datetime(2024, 1, 1, tzinfo=UTC), 14.0) == 1.0
    assert decay_power("2024-01-01T00:00:00+00:00", datetime(2024, 1, 29, tzinfo=UTC), 14.0) == 0.25


def test_arrays_grow_count_and_total():
    arrays = StrengthArrays({}, [])
    assert arrays.rows() == [] and arrays.count == 0 and arrays.total() == 0.0
    for r in range(1, 40):
        arrays.add(r, f"t{r}", 1.0 / r, "x")
    arrays.set(5, 0.3, "y")  # a rewrite does not count twice
    assert arrays.count == 39 and len(arrays.rows()) == 39
    assert arrays.total() == pytest.approx(sum(1.0 / r for r in range(1, 40) if r != 5) + 0.3)
    assert arrays.rows(0.3) == [(f"t{r}", 1.0 / r, "x") for r in (1, 2, 3)]
    assert arrays.rows(0.29)[-1] == ("t5", 0.3, "y")


# -- the worker and the store against the row-by-row rule ---------------------------------------

def _twins(harness, **config) -> tuple[Harness, Harness]:
    return harness(**config), harness(**config)


def _events(h: Harness) -> list[tuple]:
    return [(e.stage, e.count, json.dumps(e.params, sort_keys=True), e.reason)
            for e in h.recorder.events if e.mechanism == "worker.decay"]


@pytest.mark.parametrize("seed", range(3))
def test_decay_worker_equals_the_rowwise_rule(harness, seed):
    """Turns, reinforcement by queries, decay at irregular nights, reopen: the same strengths
    bit for bit, the same worker.decay events, the same contexts, the same episodic file."""
    rng = random.Random(seed)
    fast, plain = _twins(harness, decay_half_life_days=rng.choice([2.0, 14.0]),
                         decay_floor=rng.choice([0.05, 0.2]))
    when = 0.0
    for step in range(160):
        action = rng.random()
        when += rng.choice([0.0, 0.01, 0.3, 1.0, 3.0])
        if action < 0.55:
            text = FILLER[rng.randrange(len(FILLER))] + f" Item {step}."
            for h in (fast, plain):
                h.say(text, at=when)
        elif action < 0.7:
            q = rng.choice(["What about the bread?", "Tell me about the museum maps.",
                            "Which soup recipes did we compare?"])
            outs = [[(f.text, f.score) for f in h.ask(q, at=when).fragments] for h in (fast, plain)]
            assert outs[0] == outs[1]
        elif action < 0.95:
            night = day(when + rng.random())
            fast.recorder.clear()
            plain.recorder.clear()
            got = fast.system.run_decay(now=night)
            want = run_decay_rowwise(stores=plain.system.db, config=plain.system.config, now=night,
                                     emit=plain.system.emit)
            assert got == want and _events(fast) == _events(plain)
        else:
            for h in (fast, plain):
                h.system.reopen()
        a, b = fast.system.db.episodic, plain.system.db.episodic
        assert a.strengths() == b.strengths() == a.strengths_scan()
    assert fast.system.db.episodic.strengths_scan() == plain.system.db.episodic.strengths_scan()
    floor = fast.system.config.decay_floor
    values = [s for _i, s, _a in fast.system.db.episodic.strengths()]
    assert floor in values and any(s > floor for s in values)  # both sides of the floor were met
    for h in (fast, plain):
        h.system.close()
    files = [sorted(h.system.state_dir.rglob("episodic*.sqlite")) for h in (fast, plain)]
    assert len(files[0]) == 1 and [f.name for f in files[0]] == [f.name for f in files[1]]
    assert files[0][0].read_bytes() == files[1][0].read_bytes()


def test_decay_store_writes_the_same_file_as_set_strengths(tmp_path):
    fast, plain = EpisodicStore(tmp_path / "f.sqlite"), EpisodicStore(tmp_path / "p.sqlite")
    config = IceConfig()
    for i in range(80):
        rec = TurnRecord(f"t{i:03d}", "c", "s", i, T0 + timedelta(hours=7 * i), "user", f"turn {i}")
        for store in (fast, plain):
            store.add(rec, np.ones(4, dtype=np.float32), "general")
        if i % 9 == 8:
            now = T0 + timedelta(hours=7 * i + 1)
            fast.reinforce([f"t{i - 5:03d}", f"t{i - 30:03d}"], now)
            plain.reinforce([f"t{i - 5:03d}", f"t{i - 30:03d}"], now)
            read, changed, total = fast.decay(now, config.decay_floor, config.decay_half_life_days)
            rows = plain.strengths(above=config.decay_floor)
            updates = decayed_all(rows, now, config)
            plain.set_strengths(updates, now)
            assert read == len(rows) and changed == sum(
                1 for (_i, n), (_j, o, _a) in zip(updates, rows, strict=True) if n != o)
            assert total == sum(s for _i, s in updates)
    assert fast.strengths() == plain.strengths_scan()
    fast.close()
    plain.close()
    assert (tmp_path / "f.sqlite").read_bytes() == (tmp_path / "p.sqlite").read_bytes()


def test_decay_after_reopen_reads_the_table(tmp_path):
    """Strengths written by one open are what the next open decays (nothing kept only in memory)."""
    path = tmp_path / "e.sqlite"
    store = EpisodicStore(path)
    for i in range(4):
        store.add(TurnRecord(f"t{i}", "c", "s", i, T0, "user", "x"), np.ones(2, dtype=np.float32), "g")
    store.decay(T0 + timedelta(days=14), 0.05, 14.0)
    store.reinforce(["t2"], T0 + timedelta(days=20))
    store.close()
    store = EpisodicStore(path)
    new = [0.25, 0.25, 2.0 ** (-8 / 14), 0.25]
    assert store.decay(T0 + timedelta(days=28), 0.05, 14.0) == (4, 4, sum(new))
    assert [s for _i, s, _a in store.strengths()] == new
    assert store.strengths() == store.strengths_scan()
    store.close()


def test_old_files_move_their_strengths_and_vectors_to_their_tables(tmp_path):
    """A file written before m002 keeps every strength, stamp, access and vector."""
    path = tmp_path / "old.sqlite"
    conn = open_database(path, MIGRATIONS[:1])
    conn.execute("INSERT INTO turns (turn_id, conv_id, sess_id, idx, ts, role, content, tokens,"
                 " topic, strength, strength_at, last_access, vec)"
                 " VALUES ('a', 'c', 's', 0, 't0', 'user', 'hello', 1, 'g', 0.3, 't1', 't2', x'0102')")
    conn.execute("INSERT INTO turns (turn_id, conv_id, sess_id, idx, ts, role, content, tokens,"
                 " topic, strength_at, vec) VALUES ('b', 'c', 's', 1, 't3', 'user', 'hi', 1, 'g', 't3', x'03')")
    conn.close()
    store = EpisodicStore(path)
    assert store.strengths() == [("a", 0.3, "t1"), ("b", 1.0, "t3")]
    assert store.get("a").strength == 0.3 and store.get("b").strength == 1.0
    assert [tuple(r) for r in store.conn.execute(
        "SELECT rowid, strength, strength_at, last_access FROM turn_strength")] == [
        (1, 0.3, "t1", "t2"), (2, 1.0, "t3", None)]
    assert [tuple(r) for r in store.conn.execute("SELECT rowid, vec FROM turn_vectors")] == [
        (1, b"\x01\x02"), (2, b"\x03")]
    columns = {r[1] for r in store.conn.execute("PRAGMA table_info(turns)")}
    assert not columns & {"strength", "strength_at", "last_access", "vec"}
    assert store.get("b").content == "hi"
    store.close()


def test_reads_carry_the_strength_the_worker_wrote(harness):
    h = harness()
    ids = [h.say(FILLER[k], at=0) for k in range(3)]
    h.system.run_decay(now=day(14))
    ep = h.system.db.episodic
    assert {t.turn_id: t.strength for t in ep.get_many(ids).values()} == dict.fromkeys(ids, 0.5)
    assert [t.strength for t in ep.recent("c1", 3)] == [0.5] * 3
    assert [t.strength for t in ep.all_turns()] == [0.5] * 3
    assert decayed(1.0, day(0).isoformat(), day(14), h.system.config) == 0.5


# -- summaries: the covered count kept on add --------------------------------------------------

def test_covered_turns_kept_on_add_equal_the_table(harness):
    h = harness(summary_batch_turns=5)
    for k in range(23):
        h.say(FILLER[k % len(FILLER)], conv="c1" if k % 3 else "c2", at=k)
    summaries = h.system.db.summaries
    assert summaries.covered_turns("c1") == 0  # read before any summary: the cache starts empty
    h.system.run_summaries(now=day(30))
    for conv in ("c1", "c2", "nobody"):
        assert summaries.covered_turns(conv) == summaries.covered_turns_scan(conv)
    assert summaries.covered_turns("c1") == 15 and summaries.covered_turns("c2") == 5
    for k in range(23, 30):
        h.say(FILLER[k % len(FILLER)], conv="c2", at=k)
    h.system.run_summaries(now=day(40))
    assert summaries.covered_turns("c2") == summaries.covered_turns_scan("c2") == 15
    h.system.reopen()
    assert h.system.db.summaries.covered_turns("c2") == 15
    assert h.system.run_summaries(now=day(41)) == []  # nothing summarised twice
