"""A process pool sends the units of one trajectory that follow each other to one worker as a chain
(`lsrep.executors.local.chained`), so they share the trajectory's turn index there as they do in
one process; the cap keeps a known, small set of units spread over the workers."""

from __future__ import annotations

import concurrent.futures as cf
from types import SimpleNamespace

import lsrep.engine as engine
import lsrep.executors.local as local
from lsrep.executors.local import CHAIN_MAX, ProcessPoolExecutor, chain_cap, chained, run_chain
from tests.conftest import longmemeval_tasks


def _task(trajectory: str, follows: bool, name: str) -> SimpleNamespace:
    return SimpleNamespace(trajectory=SimpleNamespace(trajectory_id=trajectory), trajectory_follows=follows,
                           unit_id=name)


def _names(chains) -> list[list[str]]:
    return [[t.unit_id for t in chain] for chain in chains]


def test_followers_of_one_trajectory_are_grouped_in_order_up_to_the_cap():
    tasks = [_task("q1", True, "a"), _task("q1", True, "b"), _task("q1", False, "c"),
             _task("q2", False, "d"),
             _task("q3", True, "e"), _task("q3", True, "f"), _task("q3", True, "g"), _task("q3", False, "h"),
             _task("q4", True, "i"), _task("q5", False, "j"),  # a hint whose next unit is another trajectory
             _task("q6", True, "k")]  # the last task says one follows: none does
    assert _names(chained(tasks, 8)) == [["a", "b", "c"], ["d"], ["e", "f", "g", "h"], ["i"], ["j"], ["k"]]
    assert _names(chained(tasks, 2)) == [["a", "b"], ["c"], ["d"], ["e", "f"], ["g", "h"], ["i"], ["j"], ["k"]]
    assert _names(chained(tasks, 1)) == [[t.unit_id] for t in tasks]


def test_the_cap_gives_each_worker_enough_chains_when_the_units_are_known():
    units = [_task("q", True, str(i)) for i in range(160)]
    assert chain_cap(units, 2) == CHAIN_MAX == 8
    assert chain_cap(units[:40], 2) == 2  # 40 units, 2 workers: chains of 2 leave each worker 10
    assert chain_cap(units[:31], 2) == 1 and chain_cap(units[:32], 2) == 2
    assert chain_cap(units[:6], 2) == 1  # six repetitions of one trajectory still spread over both workers
    assert chain_cap(units[:40], 4) == 1
    assert chain_cap(iter(units[:6]), 2) == CHAIN_MAX  # a stream (a LongMemEval file) is taken to be long


def test_a_chain_runs_in_one_process_with_one_turn_index_and_a_crash_is_its_units_alone(tmp_path, monkeypatch):
    from lsrep.probes.generator import generate_longmemeval_file

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=2, sessions_per_question=2, seed=3)
    tasks = longmemeval_tasks(data, ["vector-rag", "full-context", "null"], tmp_path / "c.sqlite")
    first = tuple(tasks[:3])
    assert {t.trajectory.trajectory_id for t in first} == {first[0].trajectory.trajectory_id}
    built = engine.SHARED_INDEXES.built
    results = run_chain(first)
    assert [r.unit["unit_id"] for r in results] == [t.unit_id for t in first]
    assert all(r.unit["status"] == "finished" for r in results)
    assert engine.SHARED_INDEXES.built - built == 1, "the chain's units did not share the question's index"

    real = local.run_unit

    def crash_the_second(task):
        if task.unit_id == first[1].unit_id:
            raise RuntimeError("boom")
        return real(task)

    monkeypatch.setattr(local, "run_unit", crash_the_second)
    results = run_chain(first)
    assert [r.unit["status"] for r in results] == ["finished", "failed", "finished"]
    assert "boom" in results[1].unit["error"] and results[1].tables["failures"][0]["phase"] == "worker"


class _InThreads(ProcessPoolExecutor):
    """The pool's own scheduling with a thread in place of the worker processes, to see what it submits."""

    def __init__(self) -> None:
        super().__init__(2)
        self.submitted: list[tuple] = []

    def _pool(self, ctx, workers):
        submitted = self.submitted

        class Recording(cf.ThreadPoolExecutor):
            def submit(self, fn, *args):
                submitted.append(args[0])
                return super().submit(fn, *args)

        return Recording(max_workers=1)


def test_the_pool_submits_each_questions_conditions_as_one_chain(tmp_path):
    from lsrep.probes.generator import generate_longmemeval_file

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=3, sessions_per_question=2, seed=5)
    tasks = longmemeval_tasks(data, ["vector-rag", "full-context"], tmp_path / "p.sqlite")
    pool = _InThreads()
    built = engine.SHARED_INDEXES.built
    results = list(pool.run(iter(tasks)))
    assert sorted(r.unit["unit_id"] for r in results) == sorted(t.unit_id for t in tasks)
    assert [[t.unit_id for t in chain] for chain in pool.submitted] == [[a.unit_id, b.unit_id]
                                                                        for a, b in zip(tasks[::2], tasks[1::2], strict=True)]
    assert engine.SHARED_INDEXES.built - built == 3, "one index per question"


class _RecordingPool(ProcessPoolExecutor):
    """The real pool of worker processes, recording what it submits."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.submitted: list[tuple] = []

    def _pool(self, ctx, workers):
        pool = super()._pool(ctx, workers)
        real = pool.submit

        def submit(fn, *args):
            self.submitted.append(args[0])
            return real(fn, *args)

        pool.submit = submit
        return pool


def test_chains_in_worker_processes_store_what_one_process_stores(example, monkeypatch):
    from lsrep.executors.local import InProcessExecutor
    from lsrep.runner import run_campaign
    from tests.core.test_executors import REPO, _comparable, _events

    monkeypatch.setenv("PYTHONPATH", str(REPO))
    example.write_text(example.read_text().replace("repetitions = 1", "repetitions = 3"))
    monkeypatch.setattr(local, "CHAINS_PER_WORKER", 1)  # chains on a campaign this small
    serial = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    pool = _RecordingPool(2)
    pooled = run_campaign(example, executor=pool, fresh=True)
    assert pool.submitted and all(len(chain) == 3 for chain in pool.submitted), [len(c) for c in pool.submitted]
    assert all(len({t.trajectory.trajectory_id for t in chain}) == 1 for chain in pool.submitted)
    assert _comparable(serial) == _comparable(pooled)
    assert _events(serial) == _events(pooled)
