"""A process pool forked from the driver once the harness is loaded (experimental, issue #18).

Spawned workers (`ProcessPoolExecutor`) each import the harness again: at LongMemEval S scale two
of them measured 588 MB PSS against 197 MB for one process. Forked after the imports, with the
heap frozen (`gc.freeze()`: the collector no longer writes to the objects it would otherwise
traverse), the workers start sharing the driver's pages. The fork happens in `start`, which the
caller runs before it opens its store or starts any thread; with another thread alive it
refuses (`start` returns False) and the caller runs units another way. A worker that dies breaks
the pool as a spawned one does: its units are re-run alone, in spawned processes (no fork once
the driver holds a store connection and threads).

Results come back in task order, so the store is written in the order one process writes it.
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator

from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.executors.local import ProcessPoolExecutor, _SpawnContext, _worker_init

WARM = ("lsrep.engine", "lsrep.host.client", "lsrep.host.launch", "lsrep.context_audit", "lsrep.provenance",
        "lsrep.postings", "lsrep.answer.extractive", "lsrep.answer.memo", "lsrep.judge.deterministic",
        "lsrep.fragment_rows", "lsrep.plan", "lsrep.prefix_hash", "numpy")
"""Modules the workers need, imported before the fork so their pages are shared."""


def _unit_then_forget(task: UnitTask) -> UnitResult:
    """`run_unit`, then the offline reader's memo emptied (the driver empties its own after each
    unit; a worker's would otherwise grow over the run)."""
    from lsrep.answer import memo

    try:
        return run_unit(task)
    finally:
        memo.clear()


def _ready() -> int:
    return os.getpid()


def _worker_start(parent_pid: int) -> None:
    """`_worker_init`, and the worker's hosts and fork server closed (and waited for) when it exits:
    a forked worker leaves through `os._exit`, which runs no `atexit` function."""
    from multiprocessing import util

    _worker_init(parent_pid)
    util.Finalize(None, _close_hosts, exitpriority=10)


def _close_hosts() -> None:
    from lsrep.host import launch
    from lsrep.host.client import close_idle_hosts

    close_idle_hosts()
    zygote = launch._ZYGOTE.pop(os.getpid(), None)
    if zygote is not None:
        zygote.close()


class ForkedPoolExecutor(ProcessPoolExecutor):
    name = "forked-pool"
    unit = staticmethod(_unit_then_forget)

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self._forked = None
        self.pids: tuple[int, ...] = ()

    def start(self) -> bool:
        """Fork the workers now (the caller holds no store connection and runs no other thread yet)."""
        if self._forked is not None:
            return True
        if threading.active_count() > 1:
            return False
        from lsrep.host import launch

        if launch._ZYGOTE:
            return False
        for name in WARM:
            importlib.import_module(name)
        gc.collect()
        gc.freeze()
        import concurrent.futures as cf

        pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("fork"),
                                      initializer=_worker_start, initargs=(os.getpid(),))
        # Under fork, every worker is forked at the first submit, before the pool's own thread starts.
        first = pool.submit(_ready)
        self.pids = tuple(pool._processes)
        first.result()
        self._forked = pool
        return True

    def _pool(self, ctx, workers: int):
        pool, self._forked = self._forked, None
        if pool is not None and workers == self.workers:
            return pool
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        return super()._pool(_SpawnContext(), workers)

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        order: deque[str] = deque()
        held: dict[str, UnitResult] = {}

        def recorded() -> Iterator[UnitTask]:
            for task in tasks:
                order.append(task.unit_id)
                yield task

        try:
            for result in super().run(recorded()):
                held[result.unit["unit_id"]] = result
                while order and order[0] in held:
                    yield held.pop(order.popleft())
        finally:
            gc.unfreeze()
