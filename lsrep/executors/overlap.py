"""Overlapped in-process execution: two units at a time in threads of this process.

A unit's adapter runs in its own host process (`lsrep.host`), and for most of a unit the
harness thread only waits on it: the host ingests while the harness sits in a pipe read. A
second unit in a second thread uses that wait for its own harness work (indexing the
trajectory, auditing contexts, answering, judging), so two cores are used for the memory of
one harness process and one extra host, instead of a second worker process with its own
imports, fork server and hosts.

Results come back in the order the tasks came, as `InProcessExecutor` gives them, so the
store is written in the same order and the run is byte for byte the same. A unit whose adapter
runs in the harness process itself (`--adapter-host in-process`) has nothing to overlap with:
it runs alone in the calling thread, after the units before it.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.executors.local import Executor


class OverlappedExecutor(Executor):
    """Up to `depth` units at once in threads of this process, results in task order.

    With `max_turns`, a unit whose trajectory is longer runs alone (after the units before it):
    the memory two units hold grows with their trajectories (turn index, host state), so a
    memory cap that two short units fit in is kept on long ones too.
    """

    name = "in-process-overlapped"

    def __init__(self, depth: int = 2, max_turns: int | None = None) -> None:
        self.depth = max(1, depth)
        self.max_turns = max_turns

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        pool = cf.ThreadPoolExecutor(max_workers=self.depth, thread_name_prefix="lsrep-unit")
        pending: deque[cf.Future] = deque()
        clean = False
        try:
            yield from in_task_order(tasks, lambda task: pool.submit(run_unit, task), run_unit, self.depth,
                                     self.max_turns, pending)
            clean = True
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=clean, cancel_futures=True)


def in_task_order(tasks: Iterable[UnitTask], submit: Callable[[UnitTask], cf.Future],
                  alone: Callable[[UnitTask], UnitResult], depth: int, max_turns: int | None,
                  pending: deque[cf.Future]) -> Iterator[UnitResult]:
    """Results in task order, up to `depth` units submitted ahead (`pending`, the caller's, so it
    can cancel what is left). A unit whose adapter runs in this process, or whose trajectory is
    longer than `max_turns`, runs alone (`alone`) in the calling thread after the units before it."""
    for task in tasks:
        long = max_turns is not None and len(task.trajectory.turns) > max_turns
        if task.adapter_host == "in-process" or long:
            while pending:
                yield pending.popleft().result()
            yield alone(task)
            continue
        pending.append(submit(task))
        if len(pending) >= depth:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def usable_cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
