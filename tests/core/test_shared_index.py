"""The units of one trajectory share its turn index in a process (`lsrep.shared_index`): built
once, kept for the next unit only when the task says one follows, and the same rows as units that
each build their own."""

from __future__ import annotations

import concurrent.futures as cf
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

import lsrep.engine as engine
from lsrep.executors.local import InProcessExecutor
from lsrep.executors.overlap import OverlappedExecutor
from lsrep.shared_index import SharedIndexes, index_key
from tests.conftest import longmemeval_tasks


class _Built:
    """A build function that counts its calls and returns a finished index-like object."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, turns) -> cf.Future:
        self.calls.append(tuple(turns))
        future: cf.Future = cf.Future()
        future.set_result(SimpleNamespace(turns=tuple(turns), memo={"a": 1}))
        return future


def test_units_holding_one_trajectory_share_one_index():
    build = _Built()
    shared = SharedIndexes(build)
    a = shared.acquire(("q1", 2, "h"), ["x", "y"])
    b = shared.acquire(("q1", 2, "h"), ["x", "y"])
    assert a is b and len(build.calls) == 1 and shared.built == 1
    other = shared.acquire(("q2", 2, "h2"), ["z", "w"])
    assert other is not a and len(build.calls) == 2
    shared.release(("q1", 2, "h"), follows=False)
    assert vars(a.result()), "freed while a unit still holds it"
    shared.release(("q1", 2, "h"), follows=False)
    assert not vars(a.result()), "an index no unit holds or awaits was not freed"
    shared.release(("q2", 2, "h2"), follows=False)
    assert shared.holding() == 0


def test_an_index_is_kept_for_the_next_unit_only_until_another_trajectory_asks():
    build = _Built()
    shared = SharedIndexes(build)
    first = shared.acquire(("q1", 1, "h"), ["x"])
    shared.release(("q1", 1, "h"), follows=True)
    assert shared.holding() == 1 and vars(first.result())
    again = shared.acquire(("q1", 1, "h"), ["x"])
    assert again is first and len(build.calls) == 1, "the kept index was built again"
    shared.release(("q1", 1, "h"), follows=True)
    second = shared.acquire(("q2", 1, "h2"), ["y"])
    assert not vars(first.result()), "the kept index outlived a unit of another trajectory"
    assert shared.holding() == 1 and len(build.calls) == 2
    shared.release(("q2", 1, "h2"), follows=True)
    shared.forget()
    assert shared.holding() == 0 and not vars(second.result())
    # A key names the turns: a trajectory of the same id and length with other turns is another.
    assert index_key("q", ["h1", "h2"]) != index_key("q", ["h1", "h3"])
    assert index_key("q", ["h1", "h2"]) != index_key("q", ["h2"])
    assert index_key("q", []) == ("q", 0, "")


def test_nothing_is_kept_for_a_unit_that_comes_last():
    build = _Built()
    shared = SharedIndexes(build)
    for q in range(20):  # a one-condition run: no unit is followed by one of its trajectory
        shared.acquire((f"q{q}", 1, "h"), ["x"])
        shared.release((f"q{q}", 1, "h"), follows=False)
        assert shared.holding() == 0


def _store_rows(path: Path, run_id: str) -> dict[str, list[tuple]]:
    skip = {"elapsed_s", "elapsed_ms", "total_ms", "query_ms", "answer_ms", "latency_ms", "started_at",
            "finished_at", "created_at", "run_id"}
    db = sqlite3.connect(path)
    out = {}
    for (table,) in db.execute("select name from sqlite_master where type = 'table' and name not in "
                               "('runs', '_migrations') and name not like 'sqlite_%'"):
        cur = db.execute(f"select * from [{table}] order by rowid")
        names = [d[0] for d in cur.description]
        out[table] = [tuple(v.replace(run_id, "RUN") if isinstance(v, str) else v
                            for n, v in zip(names, row, strict=True) if n not in skip) for row in cur]
    db.close()
    return out


class _NeverShared(SharedIndexes):
    """Every unit builds its own index, as before sharing."""

    def acquire(self, key, turns):
        return super().acquire((*key, object()), turns)

    def release(self, key, follows):
        for held in list(self._held):
            if held[:3] == key:
                return super().release(held, follows)
        raise KeyError(key)


@pytest.fixture(scope="module")
def lme_file(tmp_path_factory) -> Path:
    from lsrep.probes.generator import generate_longmemeval_file

    tmp = tmp_path_factory.mktemp("shared-index")
    return generate_longmemeval_file(tmp / "lme.json", n_questions=4, sessions_per_question=3, seed=11)


@pytest.mark.parametrize("executor", [InProcessExecutor, OverlappedExecutor])
def test_a_question_is_indexed_once_for_all_its_conditions_with_the_same_rows(lme_file, tmp_path, monkeypatch,
                                                                              executor):
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    systems = ["null", "vector-rag", "full-context"]
    monkeypatch.setattr(engine, "SHARED_INDEXES", _NeverShared(engine.TurnIndex.in_background))
    alone = run_longmemeval(spec_from_systems(systems, lme_file, store=tmp_path / "alone.sqlite"),
                            executor=executor(), fresh=True)
    assert engine.SHARED_INDEXES.built == 12
    shared = SharedIndexes(engine.TurnIndex.in_background)
    monkeypatch.setattr(engine, "SHARED_INDEXES", shared)
    out = run_longmemeval(spec_from_systems(systems, lme_file, store=tmp_path / "shared.sqlite"),
                          executor=executor(), fresh=True)
    assert out.units_run == 12 and out.failed_units == 0
    assert shared.built == 4, "a question's turns were indexed more than once"
    assert shared.holding() == 0, "an index outlived the run"
    rows, before = _store_rows(out.store_path, out.run_id), _store_rows(alone.store_path, alone.run_id)
    assert rows.keys() == before.keys() and rows["fragments"] and rows["observations"]
    for table in rows:
        assert rows[table] == before[table], table


def test_tasks_say_when_the_next_unit_replays_the_same_trajectory(lme_file, tmp_path):
    tasks = longmemeval_tasks(lme_file, ["null", "vector-rag", "full-context"], tmp_path / "s.sqlite")
    assert len(tasks) == 12
    for i, task in enumerate(tasks):
        follows = i + 1 < len(tasks) and tasks[i + 1].trajectory.trajectory_id == task.trajectory.trajectory_id
        assert task.trajectory_follows == follows, task.unit_id
    assert [t.trajectory_follows for t in tasks[:3]] == [True, True, False]


def test_a_unit_replayed_as_one_conversation_is_another_trajectory(lme_file, tmp_path):
    from lsrep.executors.local import Executor
    from lsrep.longmemeval import LongMemEvalCondition, run_longmemeval, spec_from_systems

    spec = spec_from_systems(["null"], lme_file, store=tmp_path / "s.sqlite")
    spec = spec.model_copy(update={"conditions": (
        LongMemEvalCondition(name="null", system="null"),
        LongMemEvalCondition(name="fc-single", system="full-context", conversation="single"),
        LongMemEvalCondition(name="vrag", system="vector-rag"),
        LongMemEvalCondition(name="vrag-single", system="vector-rag", conversation="single"),
    )})

    class Collect(Executor):
        def run(self, tasks):
            self.tasks = list(tasks)
            return iter(())

    collect = Collect()
    run_longmemeval(spec, executor=collect, fresh=True)
    tasks = collect.tasks
    assert len(tasks) == 16
    # Sessions, single, sessions, single: no unit is followed by one of its own trajectory.
    assert [t.trajectory_follows for t in tasks[:4]] == [False] * 4
    assert tasks[0].trajectory.trajectory_id + "-single" == tasks[1].trajectory.trajectory_id


def test_repetitions_of_a_trajectory_follow_each_other_in_a_campaign(tmp_path):
    from lsrep.runner import _tasks

    spec = SimpleNamespace(conditions=[SimpleNamespace(name=c, system="null", options={}, disable=(), answer_mode=None,
                                                       context_format=None, memory_llm=None, memory_embedder=None)
                                       for c in ("a", "b")],
                           repetitions=3, answer_mode="retrieval", answerer=None, context_format="harness",
                           embedder=None, retrieval_budget=None, enforce_budget=False, memory_llm=None,
                           memory_embedder=None, simulated_clock=True, seed=1)
    campaign = SimpleNamespace(spec=spec, condition_schedules={"a": SimpleNamespace(access="persistent"),
                                                               "b": SimpleNamespace(access="persistent")})
    inputs = {"t1": (SimpleNamespace(trajectory_id="t1"), None), "t2": (SimpleNamespace(trajectory_id="t2"), None)}
    plans = {(c, t): (None, "d") for c in ("a", "b") for t in ("t1", "t2")}
    tasks = _tasks("run", campaign, inputs, plans, tmp_path / "s.sqlite")
    assert [t.trajectory_follows for t in tasks] == [True, True, False] * 4
    assert [t.unit_id for t in tasks[:3]] == ["a/t1/r0", "a/t1/r1", "a/t1/r2"]
