"""`lsrep.collector`: fewer collections while units replay, the collector's setting put back after
the last one, whatever the order in which overlapping units end; a unit process's setting for life."""

from __future__ import annotations

import gc
import threading

import pytest

from lsrep.collector import (
    FULL_COLLECTION_EVERY,
    YOUNG_COLLECTION_AFTER,
    replaying,
)

UNIT = (YOUNG_COLLECTION_AFTER, 10, FULL_COLLECTION_EVERY)


@pytest.fixture(autouse=True)
def _threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_unit_raises_the_young_and_oldest_generations_thresholds_and_puts_them_back():
    with replaying():
        assert gc.get_threshold() == UNIT
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_setting_is_kept():
    gc.set_threshold(90_000, 20, 1000)
    with replaying():
        assert gc.get_threshold() == (90_000, 20, 1000)
    assert gc.get_threshold() == (90_000, 20, 1000)
    gc.set_threshold(500, 20, 5)
    with replaying():
        assert gc.get_threshold() == (YOUNG_COLLECTION_AFTER, 20, FULL_COLLECTION_EVERY)
    assert gc.get_threshold() == (500, 20, 5)


def test_overlapping_units_put_back_what_the_first_found_when_the_last_ends():
    first, second = replaying(), replaying()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first: the second still replays
    assert gc.get_threshold() == UNIT
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)


def test_units_in_threads_and_a_failing_unit():
    started, go = threading.Barrier(4), threading.Event()
    seen = []

    def unit():
        with replaying():
            started.wait()
            go.wait()
            seen.append(gc.get_threshold())

    threads = [threading.Thread(target=unit) for _ in range(3)]
    for t in threads:
        t.start()
    started.wait()
    go.set()
    for t in threads:
        t.join()
    assert seen == [UNIT] * 3
    with pytest.raises(RuntimeError), replaying():
        raise RuntimeError("an adapter failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_the_engine_replays_and_the_driver_writes_under_it(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    import lsrep.engine as engine
    from lsrep.runner import run_campaign

    repo = Path(__file__).resolve().parents[2]
    from lsrep.store import RunStore

    seen, written = [], []
    plain, write = engine._Replay.run, RunStore.write_unit

    def run(self):
        seen.append(gc.get_threshold())
        return plain(self)

    def write_unit(self, unit, tables):
        written.append(gc.get_threshold())
        return write(self, unit, tables)

    monkeypatch.setattr(engine._Replay, "run", run)
    monkeypatch.setattr(RunStore, "write_unit", write_unit)
    shutil.copytree(repo / "campaigns" / "quickstart", tmp_path / "campaigns" / "quickstart")
    shutil.copytree(repo / "schedules", tmp_path / "schedules")
    path = tmp_path / "campaigns" / "q.toml"
    path.write_text((repo / "campaigns" / "quickstart.toml").read_text())
    run_campaign(path, fresh=True, store_path=tmp_path / "s.sqlite", conditions=["null"], adapter_host="in-process")
    assert seen == written == [UNIT]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_units_state_is_freed_when_it_ends_without_a_collection(tmp_path, monkeypatch):
    """The replay and its turn index refer to themselves; with full collections rarer while units
    replay, the engine empties both when a unit ends, so its rows and index go then (here with the
    collector off throughout), not at the next full collection."""
    import shutil
    import weakref
    from pathlib import Path

    import lsrep.engine as engine
    from lsrep.runner import run_campaign

    repo = Path(__file__).resolve().parents[2]
    refs = []
    plain = engine._Replay.run

    def run(self):
        plain(self)
        refs.extend([weakref.ref(self.fragments), weakref.ref(self.provenance)])

    monkeypatch.setattr(engine._Replay, "run", run)
    shutil.copytree(repo / "campaigns" / "quickstart", tmp_path / "campaigns" / "quickstart")
    shutil.copytree(repo / "schedules", tmp_path / "schedules")
    path = tmp_path / "campaigns" / "q.toml"
    path.write_text((repo / "campaigns" / "quickstart.toml").read_text())
    gc.collect()
    gc.disable()
    try:
        run_campaign(path, fresh=True, store_path=tmp_path / "s.sqlite", conditions=["vector-rag"],
                     adapter_host="in-process")
        assert len(refs) == 2
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


def test_a_unit_run_alone_sets_up_and_replays_under_it(tmp_path, monkeypatch):
    """`run_unit` outside any run loop (a Ray worker runs it so): the replay's set-up, where the turn
    index is built, and the replay itself run under the unit setting."""
    from lsrep.probes.generator import generate_longmemeval_file

    import lsrep.engine as engine
    from tests.conftest import longmemeval_tasks

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=1, sessions_per_question=2, seed=3)
    (task,) = longmemeval_tasks(data, ["null"], tmp_path / "s.sqlite")
    seen = []
    init, run = engine._Replay.__init__, engine._Replay.run

    def spy_init(self, *args, **kwargs):
        seen.append(("set-up", gc.get_threshold()))
        init(self, *args, **kwargs)

    def spy_run(self):
        seen.append(("replay", gc.get_threshold()))
        return run(self)

    monkeypatch.setattr(engine._Replay, "__init__", spy_init)
    monkeypatch.setattr(engine._Replay, "run", spy_run)
    result = engine.run_unit(task)
    assert result.unit["status"] == "finished"
    assert seen == [("set-up", UNIT), ("replay", UNIT)]
    assert gc.get_threshold() == (700, 10, 10)


def test_longmemeval_writes_its_rows_under_it(tmp_path, monkeypatch):
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.longmemeval import run_longmemeval, spec_from_systems
    from lsrep.store import RunStore

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=2, sessions_per_question=2, seed=3)
    written = []
    write = RunStore.write_unit

    def write_unit(self, unit, tables):
        written.append(gc.get_threshold())
        return write(self, unit, tables)

    monkeypatch.setattr(RunStore, "write_unit", write_unit)
    run_longmemeval(spec_from_systems(["null"], data, store=tmp_path / "s.sqlite"), fresh=True)
    assert written == [UNIT, UNIT]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_unit_process_keeps_the_setting_and_freezes_what_it_holds():
    import subprocess
    import sys

    code = ("import gc, json; gc.set_threshold(700, 10, 10)\n"
            "from lsrep.collector import for_unit_process\n"
            "held = len(gc.get_objects()); for_unit_process()\n"
            "print(json.dumps([list(gc.get_threshold()), gc.get_freeze_count(), held]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    import json

    threshold, frozen, held = json.loads(out)
    assert tuple(threshold) == UNIT
    assert frozen >= held > 0


def test_a_pool_worker_is_a_unit_process():
    """Pool workers (`worker_init`) run nothing but units: the unit setting for life, what they were
    forked with frozen."""
    from lsrep.executors.local import ProcessPoolExecutor
    from lsrep.executors.workers import WorkerContext, stop_fork_server

    pool = ProcessPoolExecutor(1)._pool(WorkerContext(), 1)
    try:
        threshold = pool.submit(gc.get_threshold).result(timeout=60)
        frozen = pool.submit(gc.get_freeze_count).result(timeout=60)
    finally:
        pool.shutdown(wait=True)
        stop_fork_server()
    assert threshold == UNIT
    assert frozen > 10_000
