"""`lsrep.unit.replaying`: fewer full collections while units replay, the collector's setting put back
after the last one, whatever the order in which overlapping units end."""

from __future__ import annotations

import gc
import threading

import pytest

from lsrep.unit import FULL_COLLECTION_EVERY, replaying


@pytest.fixture(autouse=True)
def _threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_unit_raises_only_the_oldest_generations_threshold_and_puts_it_back():
    with replaying():
        assert gc.get_threshold() == (700, 10, FULL_COLLECTION_EVERY)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_setting_is_kept():
    gc.set_threshold(500, 20, 1000)
    with replaying():
        assert gc.get_threshold() == (500, 20, 1000)
    assert gc.get_threshold() == (500, 20, 1000)


def test_overlapping_units_put_back_what_the_first_found_when_the_last_ends():
    first, second = replaying(), replaying()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first: the second still replays
    assert gc.get_threshold() == (700, 10, FULL_COLLECTION_EVERY)
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
    assert seen == [(700, 10, FULL_COLLECTION_EVERY)] * 3
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
    assert seen == written == [(700, 10, FULL_COLLECTION_EVERY)]
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
