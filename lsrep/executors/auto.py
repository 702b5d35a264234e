"""`lsrep run`'s default executor: in-process or a process pool, chosen from the units and cores.

The rule (`choose_workers`), from `benchmarks/executors.py` on this 2-core machine (see
benchmarks/README.md): a pool of two workers ran 160 small offline units 1.67-1.71x faster than
in-process on an idle machine (this choice 1.58-1.77x; stop 42, a question's two conditions sent
to one worker as a chain), start-up included, each run starting its own
fork servers, and one worker cost no more than in-process, so a worker's start-up (a fork from a
fork server that has imported LSREP once, `lsrep.executors.workers`; its adapter hosts forked from
the run's one fork server of hosts, `lsrep.host.launch.shared_zygote`) is small beside a
campaign's work once there are a few units to spread. So:

- a pool of `min(usable cores, units)` workers when at least `POOL_MIN_UNITS` units remain,
  at least two cores are usable (the process's CPU affinity), and no unit calls a model;
- in-process otherwise: one or few units (nothing to spread, or a worker's start-up is not
  repaid), one usable core, or any unit whose answerer, embedder or memory system calls a model endpoint
  (those units wait on the network, already answer concurrently within the unit up to the
  endpoint's `concurrency`, and a pool would multiply the requests in flight beyond it).

Results are the same either way (`tests/core/test_executors.py` compares pool and in-process
exports); only the order units reach the store differs. Ray is never chosen: on one machine its
start-up is not repaid for units of seconds (see the README); `--executor ray` asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lsrep.executors.local import Executor, InProcessExecutor, ProcessPoolExecutor
from lsrep.executors.overlap import usable_cores
from lsrep.executors.workers import start_fork_server, stop_fork_server
from lsrep.unit import UnitResult, UnitTask

POOL_MIN_UNITS = 4
"""Fewest units for which the default runs a pool: below it the spread is too uneven (two or
three units on two workers leave a core idle for much of the run) to repay the start-up."""


def calls_a_model(task: UnitTask) -> bool:
    """Whether a unit's answerer, embedder or memory system calls a model endpoint."""
    memory = (task.memory_llm, task.memory_embedder)
    return (task.answerer.kind == "llm" or task.embedder.kind == "openai"
            or any(m is not None and getattr(m, "kind", "endpoint") != "offline" for m in memory))


def choose_workers(tasks: list[UnitTask], cores: int) -> int:
    """How many pool workers the default runs for these units (1 = in-process)."""
    if cores < 2 or len(tasks) < POOL_MIN_UNITS or any(calls_a_model(t) for t in tasks):
        return 1
    return min(cores, len(tasks))


class AutoExecutor(Executor):
    """In-process or a process pool, chosen when the units are known (see the module's rule)."""

    name = "auto"

    def __init__(self, cores: int | None = None) -> None:
        self.cores = cores
        self.chosen: Executor | None = None

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        cores = usable_cores() if self.cores is None else self.cores
        if cores >= 2:
            # A pool is likely: its fork server imports the harness while the units are listed.
            start_fork_server()
        workers = 1
        try:
            tasks = list(tasks)
            workers = choose_workers(tasks, cores)
        finally:
            if workers < 2:
                stop_fork_server()  # no pool after all
        self.chosen = ProcessPoolExecutor(workers) if workers > 1 else InProcessExecutor()
        yield from self.chosen.run(tasks)
