"""The sharded executor: units in this process and in spawned workers, the same rows in the same order."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

import lsrep.executors.overlap as overlap
import lsrep.executors.shard as shard
from lsrep import allocator
from lsrep.executors.local import InProcessExecutor
from lsrep.executors.overlap import OverlappedExecutor
from lsrep.executors.shard import ShardedExecutor
from tests.conftest import longmemeval_tasks

TIMINGS = {"elapsed_s", "elapsed_ms", "total_ms", "query_ms", "answer_ms", "latency_ms", "started_at",
           "finished_at", "created_at"}


def _tables_in_store_order(path: Path, run_id: str) -> dict[str, list[tuple]]:
    """Every table's rows in the order they were stored (rowid), run ids and timings removed."""
    out = {}
    db = sqlite3.connect(path)
    for (table,) in db.execute("select name from sqlite_master where type = 'table' and name not in "
                               "('runs', '_migrations') and name not like 'sqlite_%'"):
        cur = db.execute(f"select * from [{table}] order by rowid")
        names = [d[0] for d in cur.description]
        keep = [i for i, n in enumerate(names) if n not in TIMINGS and n != "run_id"]
        out[table] = [tuple(v.replace(run_id, "RUN") if isinstance(v, str) else v for i, v in enumerate(r)
                            if i in keep) for r in cur.fetchall()]
    db.close()
    return out


def _die() -> None:
    os._exit(3)


@pytest.fixture(scope="module")
def lme_file(tmp_path_factory) -> Path:
    from lsrep.probes.generator import generate_longmemeval_file

    tmp = tmp_path_factory.mktemp("shard")
    return generate_longmemeval_file(tmp / "lme.json", n_questions=7, sessions_per_question=3, seed=5)


def _run(data: Path, store: Path, executor, export: Path):
    from lsrep.longmemeval import run_longmemeval, spec_from_systems
    from lsrep.longmemeval_export import export_longmemeval
    from lsrep.store import RunStore

    spec = spec_from_systems(["vector-rag", "full-context"], data, store=store)
    out = run_longmemeval(spec, executor=executor, fresh=True)
    export_longmemeval(RunStore(out.store_path), out.run_id, export, data)
    exported = {str(p.relative_to(export)): p.read_bytes() for p in sorted(export.rglob("*")) if p.is_file()}
    return out, _tables_in_store_order(out.store_path, out.run_id), exported


def test_sharded_longmemeval_stores_the_rows_of_a_sequential_run_in_its_order(lme_file, tmp_path):
    serial, serial_rows, serial_files = _run(lme_file, tmp_path / "serial.sqlite", InProcessExecutor(),
                                             tmp_path / "serial-export")
    sharded = ShardedExecutor(2)
    out, rows, files = _run(lme_file, tmp_path / "sharded.sqlite", sharded, tmp_path / "sharded-export")
    assert serial.units_run == out.units_run == 14 and out.failed_units == 0
    assert sharded.started == 1 and sharded.ran_remote > 0, "no unit ran in a worker process"
    assert rows.keys() == serial_rows.keys() and rows["observations"] and rows["fragments"]
    for table in rows:
        assert rows[table] == serial_rows[table], table
    assert files.keys() == serial_files.keys() and any(k.endswith("hypotheses.jsonl") for k in files)
    assert files == serial_files


def test_a_worker_that_dies_after_a_unit_is_replaced_and_the_unit_rerun(lme_file, tmp_path):
    serial, serial_rows, _ = _run(lme_file, tmp_path / "serial.sqlite", InProcessExecutor(), tmp_path / "e1")
    dying = ShardedExecutor(2, after_unit=_die)
    out, rows, _ = _run(lme_file, tmp_path / "dying.sqlite", dying, tmp_path / "e2")
    assert out.failed_units == 0 and dying.started >= 2, "the dead worker's pool was not replaced"
    assert rows["observations"] == serial_rows["observations"]
    assert rows["units"] == serial_rows["units"]


class _Task:
    adapter_host = "process"

    def __init__(self, n: int, turns: int = 10, host: str = "process", trajectory: str | None = None,
                 follows: bool = False) -> None:
        self.n, self.adapter_host, self.trajectory_follows = n, host, follows
        self.trajectory = type("T", (), {"turns": (None,) * turns, "trajectory_id": trajectory or f"t{n}"})()


def _fake(monkeypatch, delay):
    """Local and remote units replaced by sleeps (earlier tasks take longer); returns the log of
    (task, where, units running, units the worker holds) at each unit's start. The fake worker runs
    one unit at a time, as a pool worker does; a unit sent to it waits while it runs another."""
    active, held, log, lock, worker = [0], [0], [], threading.Lock(), threading.Lock()

    def unit(task, where):
        with lock:
            held[0] += where == "remote"
        with worker if where == "remote" else contextlib.nullcontext():
            with lock:
                active[0] += 1
                log.append((task.n, where, active[0], held[0]))
            time.sleep(delay(task.n))
            with lock:
                active[0] -= 1
                held[0] -= where == "remote"
        return task.n

    monkeypatch.setattr(shard, "run_unit", lambda task: unit(task, "local"))
    monkeypatch.setattr(ShardedExecutor, "_remote", lambda self, task: unit(task, "remote"))
    return log


def test_results_come_in_task_order_with_one_unit_per_process(monkeypatch):
    log = _fake(monkeypatch, lambda n: 0.02 * (8 - n))
    assert list(ShardedExecutor(2).run(_Task(i) for i in range(8))) == list(range(8))
    assert max(a for _, _, a, _ in log) == 2, "more units at once than processes"
    assert {w for _, w, _, _ in log} == {"local", "remote"}


def test_a_free_process_takes_the_next_unit_before_the_due_result_is_consumed(monkeypatch):
    # The first unit is slow: while it runs here, the worker runs the next ones.
    log = _fake(monkeypatch, lambda n: 0.4 if n == 0 else 0.02)
    assert list(ShardedExecutor(2).run(_Task(i) for i in range(4))) == [0, 1, 2, 3]
    where = {n: w for n, w, _, _ in log}
    assert [where[n] for n in (1, 2, 3)].count("remote") == 3


def test_a_worker_holds_its_next_unit_while_units_are_short(monkeypatch):
    log = _fake(monkeypatch, lambda n: 0.03)
    assert list(ShardedExecutor(2).run(_Task(i) for i in range(40))) == list(range(40))
    assert max(h for _, w, _, h in log if w == "remote") == 2, "no unit was sent ahead to the worker"
    assert max(a for _, _, a, _ in log) == 2


def test_long_units_are_not_sent_ahead(monkeypatch):
    monkeypatch.setattr(shard, "AHEAD_BELOW_S", 0.02)
    log = _fake(monkeypatch, lambda n: 0.03)
    assert list(ShardedExecutor(2).run(_Task(i) for i in range(10))) == list(range(10))
    assert max(h for _, w, _, h in log if w == "remote") == 1


def test_lanes_prefer_this_process_and_give_workers_room_by_unit_time():
    lanes = shard._Lanes(workers=3)
    assert lanes.room() == 3, "room before any unit here ended"
    assert lanes.take() == shard.LOCAL
    assert [lanes.take() for _ in range(3)] == [shard.REMOTE] * 3
    lanes.give(shard.LOCAL, None)  # never ran: no time
    assert lanes.local_s is None and lanes.take() == shard.LOCAL
    lanes.give(shard.LOCAL, 0.1)
    assert lanes.local_s == 0.1 and lanes.room() == 3 * shard.AHEAD
    lanes.give(shard.LOCAL, None)  # a local unit that never started does not count
    assert lanes.local_s == 0.1
    assert lanes.take() == shard.LOCAL
    lanes.give(shard.LOCAL, 2.1)
    assert lanes.local_s == pytest.approx(0.7 * 0.1 + 0.3 * 2.1) and lanes.local_s >= shard.AHEAD_BELOW_S
    assert lanes.room() == 3
    lanes.local_s = shard.AHEAD_BELOW_S
    assert lanes.room() == 3, "a unit as long as the bound counts as short"
    assert lanes.take() == shard.LOCAL  # this process first when it is free
    waited, taken = _waiting_take(lanes, None, shard.REMOTE)
    assert waited, "a fourth unit went to the workers beyond their room"
    assert taken == shard.REMOTE


def _waiting_take(lanes, prefer, freed):
    """Take a lane in another thread (preferring `prefer`) while none it may take is free; then give
    back one unit of `freed`. Returns whether the take waited for that, and the lane it took."""
    taken = []
    waiter = threading.Thread(target=lambda: taken.append(lanes.take(prefer)))
    waiter.start()
    time.sleep(0.05)
    waited = not taken
    lanes.give(freed, 0.1)
    waiter.join(timeout=5)
    return waited, taken[0] if taken else None


def test_long_and_in_process_units_run_alone_here(monkeypatch):
    log = _fake(monkeypatch, lambda n: 0.03)
    tasks = [_Task(0), _Task(1), _Task(2, turns=50), _Task(3), _Task(4, host="in-process"), _Task(5)]
    assert list(ShardedExecutor(2, max_turns=20).run(tasks)) == [0, 1, 2, 3, 4, 5]
    by_task = {n: (w, a) for n, w, a, _ in log}
    assert by_task[2] == ("local", 1) and by_task[4] == ("local", 1)
    assert max(a for _, _, a, _ in log) == 2


def test_longmemeval_default_shards_over_the_usable_cores_within_the_memory_budget(monkeypatch):
    import lsrep.longmemeval as lme

    monkeypatch.setattr(overlap, "usable_cores", lambda: 2)
    assert lme.default_workers(lme.MEMORY_BUDGET_MB) == 2
    default = lme.default_executor("auto", lme.default_workers(), lme.MEMORY_BUDGET_MB)
    assert isinstance(default, ShardedExecutor) and default.processes == 2
    assert default.max_turns == lme.OVERLAP_TURNS and default.after_unit is not None
    assert lme.default_executor("auto", 2, 2 * lme.LONG_MB).max_turns is None
    assert lme.default_executor("auto", 2, 2 * lme.LONG_MB - 1).max_turns == lme.OVERLAP_TURNS
    assert lme.default_executor("auto", 3, 2 * lme.LONG_MB).max_turns == lme.OVERLAP_TURNS
    assert lme.default_executor("auto", 1, lme.OVERLAP_MB).max_turns is None
    assert lme.default_workers(lme._DRIVER_MB + lme._SHARD_MB - 1) == 1
    one = lme.default_executor("auto", 1, lme.MEMORY_BUDGET_MB)
    assert isinstance(one, OverlappedExecutor) and one.max_turns == lme.OVERLAP_TURNS
    assert type(lme.default_executor("in-process", 2, lme.MEMORY_BUDGET_MB)) is InProcessExecutor
    monkeypatch.setattr(overlap, "usable_cores", lambda: 1)
    assert lme.default_workers(lme.MEMORY_BUDGET_MB) == 1
    monkeypatch.setattr(overlap, "usable_cores", lambda: 8)
    assert lme.default_workers(lme.MEMORY_BUDGET_MB) == 2, "the memory budget no longer caps the processes"


def test_sharding_caps_the_malloc_arenas_of_this_process_and_keeps_its_freed_heap(monkeypatch):
    import ctypes

    calls = []

    class Libc:
        def mallopt(self, param, value):
            calls.append((param, value))

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    _fake(monkeypatch, lambda n: 0.0)
    assert list(ShardedExecutor(2).run([_Task(0)])) == [0]
    # M_ARENA_MAX, then the freed heap kept (lsrep.allocator)
    assert calls == [(-8, allocator.ARENAS), (-3, allocator.MMAP_THRESHOLD), (-1, allocator.TRIM_THRESHOLD)]


def _slow() -> None:
    time.sleep(60)


def test_a_stopped_run_kills_its_worker_and_starts_no_other_process(lme_file, tmp_path, monkeypatch):
    """The consumer stops (Ctrl-C in the driver) while a worker holds a unit: the worker is killed,
    the unit it held is not re-run alone, and no queued unit starts."""
    from lsrep.executors.local import ProcessPoolExecutor

    tasks = longmemeval_tasks(lme_file, ["vector-rag"], tmp_path / "grab.sqlite")
    alone = []
    monkeypatch.setattr(ProcessPoolExecutor, "_run_alone", lambda self, task, ctx: alone.append(task))
    ran_here = []
    real_run_unit = shard.run_unit
    monkeypatch.setattr(shard, "run_unit", lambda task: ran_here.append(time.monotonic()) or real_run_unit(task))
    sharded = ShardedExecutor(2, after_unit=_slow)  # the worker sleeps after its unit
    results = sharded.run(tasks)
    first = next(results)
    assert first.unit["status"] == "finished"
    start = time.monotonic()
    results.close()
    assert time.monotonic() - start < 30, "closing waited for the worker's unit"
    for thread in threading.enumerate():  # the shard threads end on their own once the run stopped
        if thread.name.startswith("lsrep-shard"):
            thread.join(timeout=30)
            assert not thread.is_alive()
    assert sharded.started == 1 and not alone, "a unit of the stopped run was re-run alone"
    # (A unit may have started here between the first result and the stop: not after it.)
    assert ran_here and max(ran_here) < start and len(tasks) > 4, "a unit queued before the stop started after it"
    assert sharded._pool is None


def test_no_queued_unit_starts_once_the_run_stopped(monkeypatch):
    """Units waiting for a process when the consumer stops never start (the worker holds its slot).
    (A unit already sent ahead to a worker dies with it: the stopped-run test above, with a real worker.)"""
    monkeypatch.setattr(shard, "AHEAD_BELOW_S", 0.0)  # nothing sent ahead: the fake worker cannot be killed
    log = _fake(monkeypatch, lambda n: 1.0 if n == 1 else 0.05)  # unit 1 holds the worker throughout
    seconds, alive = _stop_after_first_result([_Task(i) for i in range(8)])
    started = [n for n, _, _, _ in log]
    assert started[:2] == [0, 1] and len(started) <= 3, f"units {started[2:]} started after the stop"
    assert seconds < 5 and not alive


def _stop_after_first_result(tasks) -> tuple[float, list[str]]:
    """Run `tasks`, stop after the first result; the seconds until the executor's threads ended and
    those still alive then."""
    results = ShardedExecutor(2).run(iter(tasks))
    assert next(results) == tasks[0].n
    stopped = time.monotonic()
    results.close()
    for thread in threading.enumerate():
        if thread.name.startswith("lsrep-shard"):
            thread.join(timeout=10)
    return time.monotonic() - stopped, [t.name for t in threading.enumerate() if t.name.startswith("lsrep-shard")]


def test_the_units_of_a_trajectory_run_in_the_process_that_keeps_its_turn_index(monkeypatch):
    # Three conditions per question, as a LongMemEval campaign's tasks come: each unit but a
    # question's last says the next replays the same trajectory (`UnitTask.trajectory_follows`).
    # Earlier questions are slower, so without the hand-over a free process would take the next
    # condition of a question whose last one runs in the other process.
    tasks = [_Task(3 * q + c, trajectory=f"q{q}", follows=c < 2) for q in range(6) for c in range(3)]
    log = _fake(monkeypatch, lambda n: 0.01 * (18 - n) if n % 2 else 0.005)
    assert list(ShardedExecutor(2).run(tasks)) == list(range(18))
    where = {n: w for n, w, _, _ in log}
    for q in range(6):
        assert len({where[3 * q + c] for c in range(3)}) == 1, (q, [where[3 * q + c] for c in range(3)])
    assert {w for _, w, _, _ in log} == {"local", "remote"}, "the questions did not use both processes"


def test_a_unit_that_prefers_a_lane_waits_for_it():
    lanes = shard._Lanes(workers=1)
    assert lanes.take() == shard.LOCAL
    waited, taken = _waiting_take(lanes, shard.LOCAL, shard.LOCAL)
    assert waited, "a unit that prefers this process took the free worker"
    assert taken == shard.LOCAL
    # A unit that prefers the worker does not take this process, free as it is.
    lanes.give(shard.LOCAL, 0.1)
    assert lanes.take() == shard.LOCAL and lanes.take(prefer=shard.REMOTE) == shard.REMOTE
    lanes.give(shard.LOCAL, 0.1)
    lanes.local_s = 1.0  # long units: the worker holds one
    waited, taken = _waiting_take(lanes, shard.REMOTE, shard.REMOTE)
    assert waited, "a unit that prefers the worker took this process"
    assert taken == shard.REMOTE


def test_a_stopped_run_with_chained_units_leaves_no_thread_waiting(monkeypatch):
    monkeypatch.setattr(shard, "AHEAD_BELOW_S", 0.0)
    log = _fake(monkeypatch, lambda n: 1.0 if n == 1 else 0.05)
    tasks = [_Task(2 * q + c, trajectory=f"q{q}", follows=c == 0) for q in range(5) for c in range(2)]
    seconds, alive = _stop_after_first_result(tasks)
    assert not alive, "a unit still waits for the lane of a unit that never started"
    assert seconds < 5
    assert len(log) <= 4, f"units {[n for n, _, _, _ in log]} started after the stop"
