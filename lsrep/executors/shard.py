"""Sharded execution: units run in this process and in worker processes, results in task order.

The harness's own work on a unit (indexing its trajectory, auditing contexts, answering, the wire
to its adapter host) holds one interpreter's GIL, so two units in threads of one process share one
core's worth of harness CPU (`lsrep.executors.overlap`). Here each of `processes - 1` workers
(spawned, or with more than one forked from a fork server: `lsrep.executors.workers`) runs a unit
beside the one this process runs, each with its own GIL and adapter host; this process also stays
the only writer (it consumes the results) and reads the input.

Results come back in the order the tasks came, as `InProcessExecutor` gives them, so the store is
written in the same order with the same rows whichever process ran a unit. A unit whose adapter runs
in the harness process itself (`--adapter-host in-process`), or whose trajectory is longer than
`max_turns` (the memory of two units in flight grows with their trajectories), runs alone in this
process, after the units before it. Workers start on the first unit sent to one, so a run of long
units only never starts them. A worker that dies is handled as in `ProcessPoolExecutor`: the unit
is re-run once alone in a fresh process and recorded as a failed unit if it crashes again.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from lsrep.allocator import fewer_arenas, keep_freed_heap
from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.executors.local import (
    POLL_S,
    Executor,
    ProcessPoolExecutor,
    _kill,
    _lost_worker,
    crashed_unit,
    end_pool,
)
from lsrep.executors.overlap import in_task_order
from lsrep.executors.workers import (
    SpawnContext,
    WorkerContext,
    quiet_resource_tracker,
    start_fork_server,
)
from lsrep.host.launch import shared_zygote

LOCAL = "local"
REMOTE = "remote"
AHEAD = 2
"""Units a worker may hold while units are short (`AHEAD_BELOW_S`): the one it runs and the next,
already sent, so it never waits for this process to hand it one (see `_Lanes`)."""
AHEAD_BELOW_S = 0.5
"""A unit is short when this process's recent units took less (seconds, moving average)."""


def run_then(task: UnitTask, after: Callable[[], None] | None) -> UnitResult:
    """A unit in a worker, then `after` (a module-level function: e.g. empty a per-unit cache)."""
    try:
        return run_unit(task)
    finally:
        if after is not None:
            after()


class ShardedExecutor(Executor):
    """This process and `processes - 1` spawned workers, each running one unit at a time (a worker
    holds its next unit too while units are short: `_Lanes`); results in task order.

    `after_unit` runs in a worker after each of its units (the caller does its own for the units
    this process runs, when it consumes their results).
    """

    name = "sharded"

    def __init__(self, processes: int = 2, max_turns: int | None = None,
                 after_unit: Callable[[], None] | None = None) -> None:
        self.processes = max(1, processes)
        self.max_turns = max_turns
        self.after_unit = after_unit
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._ctx = None
        self._shared: tuple[str, str] | None = None
        self.started = 0
        """Worker pools started (a broken pool is replaced): 0 when every unit ran here."""
        self.ran_remote = 0
        """Units a worker returned (not counting a unit re-run alone after its worker died)."""
        self._stopping = False

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        fewer_arenas()  # lsrep.allocator: why, with the figures
        keep_freed_heap()
        self._stopping = False
        # One worker (the default on two cores): spawned, see `SpawnedWorker`. More: forked from a
        # fork server that imports the harness once, while this process runs the first units.
        forked = self.processes > 2
        if forked:
            start_fork_server()
        self._ctx = WorkerContext() if forked else SpawnContext()
        self._shared = shared_zygote()  # one fork server of adapter hosts for this process and its workers
        quiet_resource_tracker()
        lanes = _Lanes(self.processes - 1)
        # A unit whose task says the next one replays the same trajectory (`UnitTask.trajectory_follows`)
        # hands that unit the process it ran in, where the trajectory's turn index is kept for it
        # (`lsrep.shared_index`): the next unit waits for that process rather than index the turns
        # again in the other one.
        chains: dict[str, cf.Future] = {}
        handed: list[cf.Future] = []

        def submit(task: UnitTask) -> cf.Future:
            tid = task.trajectory.trajectory_id
            after = chains.pop(tid, None)
            mine = cf.Future() if task.trajectory_follows else None
            if mine is not None:
                chains[tid] = mine
                handed[:] = [f for f in handed if not f.done()]
                handed.append(mine)
            return threads.submit(work, task, after, mine)

        def work(task: UnitTask, after: cf.Future | None, mine: cf.Future | None) -> UnitResult:
            lane = None
            try:
                lane = lanes.take(after.result() if after is not None else None)
            finally:
                if mine is not None:
                    _hand_over(mine, lane)
            start = None
            try:
                if self._stopping:  # the run was interrupted while this unit waited for a process
                    return None
                start = time.perf_counter()
                return run_unit(task) if lane == LOCAL else self._remote(task)
            finally:
                lanes.give(lane, None if start is None else time.perf_counter() - start)

        # Twice as many units in flight as lanes: a unit waits in its thread for a free process
        # (this one or a worker), so a process that finishes early takes the next unit at once
        # instead of waiting for the result due first to be consumed.
        window = 2 * (1 + AHEAD * (self.processes - 1))
        threads = cf.ThreadPoolExecutor(max_workers=window, thread_name_prefix="lsrep-shard")
        pending: deque[cf.Future] = deque()
        clean = False
        try:
            yield from in_task_order(tasks, submit, run_unit, window,
                                     self.max_turns, pending)
            clean = True
        finally:
            self._stopping = not clean
            for future in pending:
                future.cancel()
            for mine in handed:  # a unit cancelled before it took a lane hands over none
                _hand_over(mine, None)
            threads.shutdown(wait=clean, cancel_futures=True)
            with self._lock:
                pool, self._pool = self._pool, None
            end_pool(pool, clean)

    def _worker_pool(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._stopping:
                raise RuntimeError("the run was interrupted")
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.processes - 1, self._shared)._pool(self._ctx, self.processes - 1)
                self.started += 1
            return self._pool

    def _remote(self, task: UnitTask) -> UnitResult:
        pool = self._worker_pool()
        try:
            future = pool.submit(run_then, task, self.after_unit)
        except RuntimeError:  # broken by an earlier unit's worker
            future = None
        try:
            while future is not None:
                try:
                    result = future.result(timeout=POLL_S)
                    with self._lock:
                        self.ran_remote += 1
                    return result
                except cf.TimeoutError:
                    if _lost_worker(pool):
                        break
        except cf.process.BrokenProcessPool:
            pass
        except Exception as exc:  # noqa: BLE001 - the unit's own crash in a live worker
            return crashed_unit(task, exc)
        # The worker died (or the pool broke under it): a fresh pool for the next units, and this
        # unit once more alone, so a crash is pinned on the unit that caused it.
        with self._lock:
            if self._pool is pool:
                self._pool = None
        _kill(pool)
        if self._stopping:  # killed by an interrupted run: nothing to pin, no process to start
            return crashed_unit(task, RuntimeError("the run was interrupted"))
        return ProcessPoolExecutor(1, self._shared)._run_alone(task, self._ctx)


def _hand_over(mine: cf.Future, lane: str | None) -> None:
    """Tell the next unit of a trajectory which lane to prefer (once: a stopped run may do it first)."""
    try:
        mine.set_result(lane)
    except cf.InvalidStateError:
        pass


class _Lanes:
    """Which process runs the next unit: this one when it is free, else a worker with room.

    A worker holds one unit, or `AHEAD` while units are short. Its next unit then waits in the
    pool's queue, so the worker starts it the moment it returns the last one instead of idling
    while this process (its GIL busy with its own unit and with writing results) takes the result
    and sends the next unit: on 160 units of ~80 ms (`benchmarks/executors.py`) that wait left the
    worker idle for a tenth of the run. Long units are not sent ahead: the wait is a small share
    of them, and a unit sent ahead can leave this process idle at the end of the run while the
    worker still has it to run.
    """

    def __init__(self, workers: int) -> None:
        self._cond = threading.Condition()
        self._workers = workers
        self._local_free = True
        self._remote = 0
        self.local_s: float | None = None
        """Moving average of this process's unit time (None before its first unit ends)."""

    def room(self) -> int:
        """Units the workers may hold now."""
        short = self.local_s is not None and self.local_s < AHEAD_BELOW_S
        return self._workers * (AHEAD if short else 1)

    def take(self, prefer: str | None = None) -> str:
        """A lane for the next unit: this process when it is free, else a worker with room; with
        `prefer`, that lane only (waiting for it)."""
        with self._cond:
            while True:
                if self._local_free and prefer != REMOTE:
                    self._local_free = False
                    return LOCAL
                if self._remote < self.room() and prefer != LOCAL:
                    self._remote += 1
                    return REMOTE
                self._cond.wait()

    def give(self, lane: str, seconds: float | None) -> None:
        """A unit ended in `lane` after `seconds` (None: it never started)."""
        with self._cond:
            if lane == LOCAL:
                self._local_free = True
                if seconds is not None:
                    self.local_s = seconds if self.local_s is None else 0.7 * self.local_s + 0.3 * seconds
            else:
                self._remote -= 1
            self._cond.notify_all()
