"""Executors: where units run. The driver is the one writer; executors only return rows.

The unit of work is one (condition, trajectory, repetition) replay, sequential
inside and independent outside. A worker that crashes becomes a failed unit with
a failure row and error observations, and the campaign continues.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import time
from collections.abc import Iterable, Iterator, Sized

from lsrep.engine import UnitResult, UnitTask, run_unit
from lsrep.executors.workers import (
    WorkerContext,
    quiet_resource_tracker,
    start_fork_server,
    stop_fork_server,
    worker_init,
)
from lsrep.host.launch import shared_zygote


class Executor:
    """Runs unit tasks, yielding results as they finish (any order)."""

    name = "executor"

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        raise NotImplementedError


class InProcessExecutor(Executor):
    """One unit after another in this process (the default)."""

    name = "in-process"

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        for task in tasks:
            yield run_unit(task)


POLL_S = 1.0
"""Longest single wait on the pool: every wait has a timeout, so a lost worker cannot hang the driver."""

LOST_WORKER_GRACE_S = 10.0
"""How long a dead worker may go unnoticed by the pool before the driver treats the pool as broken."""


class ProcessPoolExecutor(Executor):
    """A local pool of worker processes (`--workers N`).

    A worker that dies breaks the pool: every unit it held is re-run once alone in a fresh
    process, and a unit that crashes again is recorded as a failed unit; the campaign goes
    on. Workers die with the driver (parent-death signal plus a parent-pid watchdog) and
    ignore Ctrl-C, which the driver handles (the run is marked interrupted).

    Units of one trajectory that follow each other (a question's conditions, a trajectory's
    repetitions) go to one worker as a chain (`chained`), where they share the trajectory's turn
    index (`lsrep.shared_index`); a failed chain's units are re-run alone like any other.
    """

    name = "process-pool"
    window_per_worker = 4
    """Units in flight per worker (running, queued for it, or waiting to be consumed). While this
    process writes a result and builds the next task, a worker that finishes takes a queued one:
    with 2 per worker they sometimes found the queue empty (160 units of ~60 ms, idle machine,
    three paired rounds: pool of two 1.45/1.48/1.44x with 2, 1.48/1.50/1.49x with 4,
    1.49/1.49/1.52x with 8). Memory grows with it: 8 tasks in flight for two workers, plus at most
    `CHAIN_MAX - 1` more when the last one sent is a chain (a chain is sent whole)."""

    def __init__(self, workers: int, shared: tuple[str, str] | None = None) -> None:
        self.workers = workers
        self.shared = shared
        """The run's adapter-host fork server the workers attach to (`lsrep.host.launch.shared_zygote`);
        `run` starts one."""

    def _pool(self, ctx, workers: int) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=worker_init,
                                      initargs=(os.getpid(), self.shared))

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        # Tasks are pulled lazily with a bounded window in flight, so a streamed
        # data set never sits in memory whole.
        start_fork_server()  # it imports the harness while the first tasks are built
        # The workers' adapter hosts come from one fork server, started now: it imports beside the
        # workers' fork server instead of in each worker on the way to its first unit.
        self.shared = shared_zygote()
        ctx = WorkerContext()
        quiet_resource_tracker()
        window = self.window_per_worker * self.workers
        source = chained(tasks, chain_cap(tasks, self.workers))
        pool = self._pool(ctx, self.workers)
        clean = False
        try:
            pending: dict[cf.Future, tuple[UnitTask, ...]] = {}
            broken: list[UnitTask] = []

            def fill() -> None:
                for chain in source:
                    try:
                        pending[pool.submit(run_chain, chain)] = chain
                    except (cf.process.BrokenProcessPool, RuntimeError):
                        broken.extend(chain)
                        return
                    if sum(map(len, pending.values())) >= window:
                        return

            fill()
            while pending or broken:
                done, _ = cf.wait(pending, timeout=POLL_S, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    chain = pending.pop(future)
                    try:
                        yield from future.result()
                    except cf.process.BrokenProcessPool:
                        broken.extend(chain)
                    except Exception as exc:  # noqa: BLE001 - a failed worker is a failed unit
                        if len(chain) == 1:
                            yield crashed_unit(chain[0], exc)
                        else:  # (its results not returned): each re-run alone pins it
                            broken.extend(chain)
                if not done and pending and _lost_worker(pool):
                    broken.extend([task for chain in pending.values() for task in chain])
                    pending.clear()
                if broken:
                    # A dying worker breaks the whole pool and every future in it; rerun each
                    # affected unit alone so the crash is pinned on the unit that caused it.
                    broken.extend([task for chain in pending.values() for task in chain])
                    pending.clear()
                    _kill(pool)
                    for task in broken:
                        yield self._run_alone(task, ctx)
                    broken.clear()
                    pool = self._pool(ctx, self.workers)
                fill()
            clean = True
        finally:
            end_pool(pool, clean)

    def _run_alone(self, task: UnitTask, ctx) -> UnitResult:
        solo = self._pool(ctx, 1)
        clean = False
        try:
            future = solo.submit(run_unit, task)
            while True:
                try:
                    result = future.result(timeout=POLL_S)
                    break
                except cf.TimeoutError:
                    if _lost_worker(solo):
                        result = crashed_unit(task, cf.process.BrokenProcessPool("worker process died"))
                        break
                except Exception as exc:  # noqa: BLE001 - the unit's own crash, now attributed
                    result = crashed_unit(task, exc)
                    break
            clean = True
            return result
        finally:
            if clean and not _lost_worker(solo, grace_s=0.0):
                solo.shutdown(wait=True)
            else:
                _kill(solo)


CHAIN_MAX = 8
"""Most units sent to a pool worker as one chain (`chained`)."""
CHAINS_PER_WORKER = 8
"""With a known number of units, chains are capped so each worker gets at least this many: a
chain runs whole in one worker, and the run's end waits for the last one."""


def chain_cap(tasks: Iterable[UnitTask], workers: int) -> int:
    """How many units of one trajectory may go to a worker as one chain: `CHAIN_MAX`, less when a
    known number of units would then give a worker fewer than `CHAINS_PER_WORKER` chains."""
    if not isinstance(tasks, Sized):
        return CHAIN_MAX  # a stream (a LongMemEval file): many units
    return max(1, min(CHAIN_MAX, len(tasks) // (CHAINS_PER_WORKER * max(1, workers))))


def chained(tasks: Iterable[UnitTask], cap: int) -> Iterator[tuple[UnitTask, ...]]:
    """Tasks in order, a unit whose task says the next one replays the same trajectory
    (`UnitTask.trajectory_follows`) grouped with it, up to `cap` units a group.

    A pool hands each task to whichever worker is free, so the conditions of one question (or the
    repetitions of one trajectory) landed in different workers and each indexed the same turns; a
    chain runs in one worker, where its units share one turn index (`lsrep.shared_index`)."""
    chain: list[UnitTask] = []
    for task in tasks:
        if chain and task.trajectory.trajectory_id != chain[-1].trajectory.trajectory_id:
            yield tuple(chain)  # the hint was wrong: the next unit replays another trajectory
            chain = []
        chain.append(task)
        # Sent as soon as it is complete, not when the next task is read: a pool pulls no task
        # beyond its window.
        if not task.trajectory_follows or len(chain) >= cap:
            yield tuple(chain)
            chain = []
    if chain:
        yield tuple(chain)


def run_chain(chain: tuple[UnitTask, ...]) -> list[UnitResult]:
    """A chain's units one after another in a worker; a unit that raises is a failed unit
    (`crashed_unit`) and the rest still run."""
    out = []
    for task in chain:
        try:
            out.append(run_unit(task))
        except Exception as exc:  # noqa: BLE001 - the unit's own crash, attributed to it
            out.append(crashed_unit(task, exc))
    return out


_dead_since: dict[int, float] = {}


def _lost_worker(pool: cf.ProcessPoolExecutor, grace_s: float = LOST_WORKER_GRACE_S) -> bool:
    """Whether a worker has been dead longer than `grace_s` without the pool breaking its futures."""
    processes = getattr(pool, "_processes", None) or {}
    now = time.monotonic()
    for proc in list(processes.values()):
        if proc.exitcode is not None:
            first = _dead_since.setdefault(proc.pid, now)
            if now - first >= grace_s:
                return True
    return False


def end_pool(pool: cf.ProcessPoolExecutor | None, clean: bool) -> None:
    """A run's end: its pool shut down (killed if the run stopped early: Ctrl-C or the consumer
    stopped, so no worker outlives the driver's intent), then the fork server stopped."""
    try:
        if pool is not None:
            if clean:
                pool.shutdown(wait=True, cancel_futures=True)
            else:
                _kill(pool)
    finally:
        stop_fork_server()


def _kill(pool: cf.ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)
    for proc in processes:
        if proc.exitcode is None:
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.join(timeout=5)
    _release_manager(manager, results)


def _release_manager(manager, results) -> None:
    """Make sure the pool's manager thread ends, so the interpreter can exit.

    A worker killed while writing its result leaves the manager thread blocked reading the
    rest of that message from a pipe whose write end this process also holds: it never sees
    EOF, and exit would wait for it forever. Writing filler completes the frame; the thread
    fails to unpickle it, declares the pool broken and returns.
    """
    if manager is None or results is None:
        return
    manager.join(timeout=1.0)
    if not manager.is_alive():
        return
    try:
        fd = results._writer.fileno()
        os.set_blocking(fd, False)
    except (AttributeError, OSError, ValueError):
        return
    filler = bytes(1 << 16)
    deadline = time.monotonic() + 10
    while manager.is_alive() and time.monotonic() < deadline:
        try:
            os.write(fd, filler)
        except BlockingIOError:
            pass
        except OSError:
            return
        manager.join(timeout=0.05)


def crashed_unit(task: UnitTask, exc: BaseException) -> UnitResult:
    """Rows for a unit whose worker died: a failure row and an error row per planned probe."""
    from lsrep.engine import deterministic_judgement
    from lsrep.harness import format_traceback
    from lsrep.plan import CheckpointStep

    message = f"worker crashed: {type(exc).__name__}: {exc}"
    probes = {p.probe_id: p for p in task.probes.probes}
    observations, judgements = [], []
    for step in task.plan.steps:
        if not isinstance(step, CheckpointStep):
            continue
        for ask in step.probes:
            probe = probes[ask.probe_id]
            row = {
                "obs_id": f"{task.run_id}:{task.unit_id}:{step.ordinal}:{probe.probe_id}", "run_id": task.run_id,
                "unit_id": task.unit_id, "condition": task.condition, "trajectory": task.trajectory.trajectory_id,
                "repetition": task.repetition, "checkpoint": step.ordinal, "prefix_len": step.prefix_len,
                "sim_time": step.now.isoformat(), "probe_id": probe.probe_id, "kind": probe.kind,
                "category": probe.category, "question": probe.question, "expected": ask.expected.model_dump_json(),
                "answer_mode": task.answer_mode, "answer": None, "system_answer": None, "status": "error",
                "error": message, "n_fragments": 0, "context_tokens": 0, "evidence_ids": "[]",
                "proven_leak": 0, "unattributed": 0, "truncated_tokens": 0, "budget_exceeded": 0,
            }
            observations.append(row)
            judgements.append(deterministic_judgement(row))
    unit = {
        "run_id": task.run_id, "unit_id": task.unit_id, "condition": task.condition,
        "trajectory": task.trajectory.trajectory_id, "repetition": task.repetition, "seed": task.seed,
        "plan_digest": task.plan_digest, "status": "failed", "error": message, "elapsed_s": None,
    }
    failure = {"run_id": task.run_id, "unit_id": task.unit_id, "seq": 0, "phase": "worker",
               "checkpoint": None, "probe_id": None, "error_type": type(exc).__name__, "message": message,
               "traceback": format_traceback(exc)}
    return UnitResult(unit=unit, tables={"observations": observations, "judgements": judgements,
                                         "failures": [failure]})
