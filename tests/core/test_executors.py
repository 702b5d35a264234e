"""Executors give identical results; a crashed worker becomes a failed unit, not a dead campaign."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lsrep.executors.local import InProcessExecutor, ProcessPoolExecutor
from lsrep.exporting import export_rows
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.conftest import longmemeval_tasks

REPO = Path(__file__).resolve().parents[2]


def _comparable(out) -> str:
    rows = export_rows(RunStore(out.store_path), out.run_id)
    for row in rows:
        row.pop("obs_id"), row.pop("run_id")
    return json.dumps(rows, sort_keys=True)


def _events(out) -> str:
    rows = RunStore(out.store_path).rows(
        "select unit_id, seq, step, checkpoint, probe_id, mechanism, stage, count, ids, source_turn_ids "
        "from events where run_id = ? order by unit_id, seq", [out.run_id])
    return json.dumps(rows, sort_keys=True)


@pytest.fixture
def three_reps(example: Path) -> Path:
    example.write_text(example.read_text().replace("repetitions = 1", "repetitions = 2"))
    return example


def test_process_pool_matches_in_process(three_reps, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    serial = run_campaign(three_reps, executor=InProcessExecutor(), fresh=True)
    pooled = run_campaign(three_reps, executor=ProcessPoolExecutor(2), fresh=True)
    assert _comparable(serial) == _comparable(pooled)
    assert _events(serial) == _events(pooled)


def test_worker_crash_becomes_failed_unit(example, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    example.write_text(example.read_text().replace("[answerer]", '''[[conditions]]
name = "crashes"
system = "tests.core.adapters_for_tests:HardCrashAdapter"

[answerer]'''))
    # In-process adapters, so the crash takes the worker down (a hosted adapter only kills its host).
    out = run_campaign(example, executor=ProcessPoolExecutor(2), adapter_host="in-process")
    assert out.failed_units == 1
    store = RunStore(out.store_path)
    units = {r["condition"]: r for r in store.rows("select * from units where run_id = ?", [out.run_id])}
    assert units["crashes"]["status"] == "failed" and "worker crashed" in units["crashes"]["error"]
    assert all(units[c]["status"] == "finished" for c in ("null", "full-context", "vector-rag"))
    errors = store.rows("select count(*) as n from observations where run_id = ? and condition = 'crashes' "
                        "and status = 'error'", [out.run_id])[0]["n"]
    assert errors == 63
    # Resuming does not retry a unit that already failed: its failure is the recorded result.
    again = run_campaign(example, executor=ProcessPoolExecutor(2), adapter_host="in-process")
    assert again.resumed is False  # the run finished; a new invocation starts a new run


def test_ray_matches_in_process(three_reps, monkeypatch):
    pytest.importorskip("ray")
    from lsrep.executors.ray_cluster import RayExecutor

    monkeypatch.setenv("PYTHONPATH", str(REPO))
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    serial = run_campaign(three_reps, executor=InProcessExecutor(), fresh=True)
    executor = RayExecutor(workers=2)
    try:
        distributed = run_campaign(three_reps, executor=executor, fresh=True)
    finally:
        executor.shutdown()
    assert _comparable(serial) == _comparable(distributed)
    assert _events(serial) == _events(distributed)


def test_the_pool_pulls_tasks_lazily_within_its_window(tmp_path):
    """A streamed data set never sits in memory whole: the pool holds at most `window_per_worker`
    tasks per worker beyond those consumed, and pulls the next only as results come back."""
    from lsrep.probes.generator import generate_longmemeval_file

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=14, sessions_per_question=1, seed=4)
    tasks = longmemeval_tasks(data, ["null"], tmp_path / "g.sqlite")
    pulled = []

    def stream():
        for task in tasks:
            pulled.append(task.unit_id)
            yield task

    pool = ProcessPoolExecutor(1)
    pool.window_per_worker = 3
    ahead = []
    for consumed, _ in enumerate(pool.run(stream()), start=1):
        ahead.append(len(pulled) - consumed)
    assert len(tasks) == 14 and len(ahead) == 14
    assert max(ahead) <= 2 and ahead[0] >= 1


def test_units_in_flight_when_a_worker_dies_are_all_rerun_and_stored(example, monkeypatch):
    """The crashing condition comes first, so when its worker dies the pool still holds other units:
    each is re-run alone and stored, none is dropped."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    text = example.read_text().replace("repetitions = 1", "repetitions = 3")
    first = text.index("[[conditions]]")
    example.write_text(text[:first] + '[[conditions]]\nname = "crashes"\n'
                       'system = "tests.core.adapters_for_tests:HardCrashAdapter"\n\n' + text[first:])
    out = run_campaign(example, executor=ProcessPoolExecutor(2), adapter_host="in-process")
    units = RunStore(out.store_path).rows("select condition, repetition, status from units where run_id = ?",
                                          [out.run_id])
    assert len(units) == 12, sorted((u["condition"], u["repetition"]) for u in units)
    assert sorted(u["condition"] for u in units if u["status"] == "failed") == ["crashes"] * 3
    assert all(u["status"] == "finished" for u in units if u["condition"] != "crashes")
