"""A unit's running prefix hashes come with its task (`UnitTask.prefix_sha256`): the driver hashes
each trajectory once for its turn rows, and a worker does not hash every turn again. What a
checkpoint records must still be the hashes of the trajectory it replays."""

from __future__ import annotations

import dataclasses

from lsrep.engine import run_unit
from lsrep.executors.local import Executor
from lsrep.prefix_hash import prefix_hashes
from tests.conftest import longmemeval_tasks


class Grab(Executor):
    def run(self, tasks):
        self.tasks = list(tasks)
        return iter(())


def _lsrep_run_tasks(example, tmp_path):
    from lsrep.runner import run_campaign

    grab = Grab()
    run_campaign(example, executor=grab, store_path=tmp_path / "grab.sqlite", fresh=True)
    return grab.tasks


def _longmemeval_tasks(tmp_path):
    from lsrep.probes.generator import generate_longmemeval_file

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=3, sessions_per_question=3, seed=2)
    return longmemeval_tasks(data, ["null", "full-context"], tmp_path / "lme.sqlite")


def test_every_task_carries_its_trajectorys_prefix_hashes(example, tmp_path):
    tasks = _lsrep_run_tasks(example, tmp_path) + _longmemeval_tasks(tmp_path)
    assert len({t.trajectory.trajectory_id for t in tasks}) > 2
    for task in tasks:
        # Compared with a fresh list of the same turns: not the driver's cached answer for that list.
        assert task.prefix_sha256 == tuple(prefix_hashes(list(task.trajectory.turns))), task.unit_id
        assert len(task.prefix_sha256) == len(task.trajectory.turns) > 0


def _checkpoint_hashes(task) -> list[tuple[int, str]]:
    result = run_unit(task)
    return [(row["prefix_len"], row["prefix_sha256"]) for row in result.tables["checkpoints"]]


def test_a_unit_records_the_hashes_its_task_carries_and_computes_them_when_it_carries_none(example, tmp_path):
    task = next(t for t in _lsrep_run_tasks(example, tmp_path) if t.condition == "null")
    task = dataclasses.replace(task, adapter_host="in-process")
    n = len(task.trajectory.turns)
    marked = tuple(f"given-{i}" for i in range(n))
    recorded = _checkpoint_hashes(dataclasses.replace(task, prefix_sha256=marked))
    assert recorded and all(h == ("" if k == 0 else marked[k - 1]) for k, h in recorded)
    truth = [""] + prefix_hashes(list(task.trajectory.turns))
    for carried in ((), marked[:-1]):  # none, or not one per turn: computed by the unit
        assert _checkpoint_hashes(dataclasses.replace(task, prefix_sha256=carried)) == \
            [(k, truth[k]) for k, _ in recorded]


def test_stored_turn_rows_and_checkpoints_hold_each_trajectorys_own_hashes(tmp_path):
    """The hashes are computed once and handed on (turn rows, tasks): what the store keeps must still
    be each trajectory's own, turn by turn, and a checkpoint's the one after its prefix."""
    import sqlite3

    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.executors.local import InProcessExecutor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=2, sessions_per_question=2, seed=9)
    truth = {t.trajectory.trajectory_id: prefix_hashes(list(t.trajectory.turns))
             for t in longmemeval_tasks(data, ["null"], tmp_path / "tasks.sqlite")}
    out = run_longmemeval(spec_from_systems(["null"], data, store=tmp_path / "run.sqlite"),
                          executor=InProcessExecutor(), fresh=True)
    db = sqlite3.connect(out.store_path)
    stored: dict[str, list[str]] = {}
    for trajectory, digest in db.execute("select trajectory, prefix_sha256 from turns order by trajectory, idx"):
        stored.setdefault(trajectory, []).append(digest)
    assert stored == truth and len(truth) == 2
    checkpoints = db.execute("select u.trajectory, c.prefix_len, c.prefix_sha256 from checkpoints c "
                             "join units u using (unit_id)").fetchall()
    assert checkpoints and all(h == ([""] + truth[t])[k] for t, k, h in checkpoints)
