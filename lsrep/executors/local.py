"""Executors: where units run. The driver is the one writer; executors only return rows.

The unit of work is one (condition, trajectory, repetition) replay, sequential
inside and independent outside. A worker that crashes becomes a failed unit with
a failure row and error observations, and the campaign continues.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Iterable, Iterator

from lsrep.engine import UnitResult, UnitTask, run_unit


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


class ProcessPoolExecutor(Executor):
    """A local pool of worker processes (`--workers N`)."""

    name = "process-pool"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, tasks: Iterable[UnitTask]) -> Iterator[UnitResult]:
        # Tasks are pulled lazily with a bounded window in flight, so a streamed
        # data set never sits in memory whole.
        ctx = multiprocessing.get_context("spawn")
        window = 2 * self.workers
        source = iter(tasks)
        pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        try:
            pending: dict[cf.Future, UnitTask] = {}
            for task in source:
                pending[pool.submit(run_unit, task)] = task
                if len(pending) >= window:
                    break
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                broken: list[UnitTask] = []
                for future in done:
                    task = pending.pop(future)
                    try:
                        yield future.result()
                    except cf.process.BrokenProcessPool:
                        broken.append(task)
                    except Exception as exc:  # noqa: BLE001 - a failed worker is a failed unit
                        yield crashed_unit(task, exc)
                if broken:
                    # A dying worker breaks the whole pool and every future in it; rerun each
                    # affected unit alone so the crash is pinned on the unit that caused it.
                    broken.extend(pending.values())
                    pending = {}
                    pool.shutdown(wait=False, cancel_futures=True)
                    for task in broken:
                        yield _run_alone(task, ctx)
                    pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
                for task in source:
                    pending[pool.submit(run_unit, task)] = task
                    if len(pending) >= window:
                        break
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_alone(task: UnitTask, ctx) -> UnitResult:
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as solo:
        try:
            return solo.submit(run_unit, task).result()
        except Exception as exc:  # noqa: BLE001 - the unit's own crash, now attributed
            return crashed_unit(task, exc)


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
