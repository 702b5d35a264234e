"""Sharded execution: units run in this process and in spawned worker processes, results in task order.

The harness's own work on a unit (indexing its trajectory, auditing contexts, answering, the wire
to its adapter host) holds one interpreter's GIL, so two units in threads of one process share one
core's worth of harness CPU (`lsrep.executors.overlap`). Here each of `processes - 1` spawned
workers runs a unit beside the one this process runs, each with its own GIL and adapter host; this
process also stays the only writer (it consumes the results) and reads the input.

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
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.executors.local import (
    POLL_S,
    Executor,
    ProcessPoolExecutor,
    _kill,
    _lost_worker,
    _quiet_resource_tracker,
    _SpawnContext,
    crashed_unit,
)
from lsrep.executors.overlap import in_task_order

LOCAL = "local"
MALLOC_ARENAS = 2
"""glibc malloc arenas this process keeps while it shards (`_fewer_arenas`)."""


def run_then(task: UnitTask, after: Callable[[], None] | None) -> UnitResult:
    """A unit in a worker, then `after` (a module-level function: e.g. empty a per-unit cache)."""
    try:
        return run_unit(task)
    finally:
        if after is not None:
            after()


class ShardedExecutor(Executor):
    """This process and `processes - 1` spawned workers, one unit each at a time; results in task order.

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
        self.started = 0
        """Worker pools started (a broken pool is replaced): 0 when every unit ran here."""
        self.ran_remote = 0
        """Units a worker returned (not counting a unit re-run alone after its worker died)."""
        self._stopping = False

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        _fewer_arenas()
        self._stopping = False
        self._ctx = _SpawnContext()
        _quiet_resource_tracker()
        slots: queue.SimpleQueue[str] = queue.SimpleQueue()
        slots.put(LOCAL)
        for _ in range(self.processes - 1):
            slots.put("worker")

        def work(task: UnitTask) -> UnitResult:
            slot = slots.get()
            try:
                if self._stopping:  # the run was interrupted while this unit waited for a process
                    return None
                return run_unit(task) if slot == LOCAL else self._remote(task)
            finally:
                slots.put(slot)

        # Twice as many units in flight as processes: a unit waits in its thread for a free process
        # (this one or a worker), so a process that finishes early takes the next unit at once
        # instead of waiting for the result due first to be consumed.
        window = 2 * self.processes
        threads = cf.ThreadPoolExecutor(max_workers=window, thread_name_prefix="lsrep-shard")
        pending: deque[cf.Future] = deque()
        clean = False
        try:
            yield from in_task_order(tasks, lambda task: threads.submit(work, task), run_unit, window,
                                     self.max_turns, pending)
            clean = True
        finally:
            self._stopping = not clean
            for future in pending:
                future.cancel()
            threads.shutdown(wait=clean, cancel_futures=True)
            with self._lock:
                pool, self._pool = self._pool, None
            if pool is not None:
                if clean:
                    pool.shutdown(wait=True, cancel_futures=True)
                else:  # Ctrl-C or the consumer stopped: no worker outlives the driver's intent
                    _kill(pool)

    def _worker_pool(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._stopping:
                raise RuntimeError("the run was interrupted")
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.processes - 1)._pool(self._ctx, self.processes - 1)
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
        return ProcessPoolExecutor(1)._run_alone(task, self._ctx)


def _fewer_arenas() -> None:
    """At most `MALLOC_ARENAS` glibc malloc arenas in this process from now on.

    glibc gives a thread that allocates while another holds the lock an arena of its own (up to
    eight per core), and memory freed in one arena serves only that arena: the unit, shard, pool
    and index threads of this process kept ~15 MB more resident at S scale (largest process 116
    against 102 MB with two arenas, 100 questions, `benchmarks/longmemeval_diagnostic.py`'s measure).
    Not glibc: nothing."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-8, MALLOC_ARENAS)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass
