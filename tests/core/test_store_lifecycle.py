"""Store creation, migration and runs survive crashes and concurrency; `lsrep store check` reports."""

from __future__ import annotations

import multiprocessing
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lsrep.store as store_module
from lsrep.cli import main
from lsrep.store import RunStore
from tests.conftest import units_stored, with_ctrl_c

REPO = Path(__file__).resolve().parents[2]


def test_a_failing_migration_leaves_nothing_behind(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    RunStore(path)

    def m900_half(db):
        db["half"].create({"a": int})
        db["runs"].add_column("half_done", str)
        raise RuntimeError("killed mid-migration")

    monkeypatch.setattr(store_module, "MIGRATIONS", [*store_module.MIGRATIONS, ("m900_half", m900_half)])
    with pytest.raises(RuntimeError):
        RunStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("select count(*) from sqlite_master where name = 'half'").fetchone()[0] == 0
    assert "half_done" not in [r[1] for r in conn.execute("pragma table_info(runs)")]
    assert conn.execute("select count(*) from _migrations where name = 'm900_half'").fetchone()[0] == 0

    def m900_half_fixed(db):
        db["half"].create({"a": int})
        db["runs"].add_column("half_done", str)

    monkeypatch.setattr(store_module, "MIGRATIONS", [*store_module.MIGRATIONS[:-1], ("m900_half", m900_half_fixed)])
    RunStore(path)  # the retry applies it cleanly: no "table already exists"
    assert conn.execute("select count(*) from _migrations where name = 'm900_half'").fetchone()[0] == 1


def test_with_conn_block_is_one_transaction(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    with pytest.raises(ZeroDivisionError), store.db.conn:
        store.db.conn.execute("insert into runs (run_id, status) values ('r', 'running')")
        raise ZeroDivisionError
    assert store.rows("select count(*) n from runs")[0]["n"] == 0


def _status(path: Path) -> str:
    conn = sqlite3.connect(path)  # another connection: sees only what was committed
    try:
        return conn.execute("select status from runs where run_id = 'r'").fetchone()[0]
    finally:
        conn.close()


def test_ctrl_c_right_after_begin_does_not_swallow_the_interrupted_mark(tmp_path):
    # CI, stop 37: Ctrl-C raised as `BEGIN IMMEDIATE` returned, before the block started, left a
    # transaction no block owned; `finish_run` joined it as a nested block, never committed, and
    # the run stayed `running` although the CLI said it was marked `interrupted`.
    path = tmp_path / "s.sqlite"
    store = RunStore(path)
    store.create_run("r", "c", "c.toml", "0" * 64, "d", {})
    conn, execute = store.db.conn, store.db.conn.execute

    def interrupted_after_begin(sql, *args):
        cursor = execute(sql, *args)
        if sql == "BEGIN IMMEDIATE":
            raise KeyboardInterrupt
        return cursor

    conn.execute = interrupted_after_begin
    with pytest.raises(KeyboardInterrupt):
        store.write_unit({"run_id": "r", "unit_id": "u", "status": "ok"}, {})
    del conn.execute
    assert conn.in_transaction  # the state the interrupt leaves
    store.finish_run("r", status="interrupted")
    assert _status(path) == "interrupted"
    assert not conn.in_transaction
    assert store.rows("select count(*) n from units")[0]["n"] == 0  # the half-begun unit is undone


def test_a_stale_transaction_is_undone_and_a_nested_block_still_joins_its_outer_one(tmp_path):
    path = tmp_path / "s.sqlite"
    store = RunStore(path)
    store.create_run("r", "c", "c.toml", "0" * 64, "d", {})
    conn = store.db.conn
    conn.execute("BEGIN IMMEDIATE")  # as an interrupt between a block's end and its COMMIT leaves it
    conn.execute("update runs set campaign = 'stale' where run_id = 'r'")
    store.finish_run("r", status="interrupted")
    assert _status(path) == "interrupted"
    assert store.rows("select campaign from runs")[0]["campaign"] == "c"
    with conn:
        with conn:  # inner block: no ROLLBACK of the outer one's writes
            conn.execute("update runs set campaign = 'outer' where run_id = 'r'")
        assert conn.in_transaction
        assert _status(path) == "interrupted"
    assert store.rows("select campaign from runs")[0]["campaign"] == "outer"


def _open(path: str) -> int:
    RunStore(path)
    return 0


def test_concurrent_first_open(tmp_path):
    path = str(tmp_path / "new.sqlite")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        assert pool.map(_open, [path] * 8) == [0] * 8
    assert len(RunStore(path).rows("select * from _migrations")) == len(store_module.MIGRATIONS)


def test_store_path_problems_are_clean_errors(tmp_path, capsys):
    (tmp_path / "dir.sqlite").mkdir()
    (tmp_path / "text.sqlite").write_text("not a database")
    for name, reason in (("dir.sqlite", "directory"), ("text.sqlite", "not a SQLite")):
        assert main(["runs", "list", "--store", str(tmp_path / name)]) == 2
        assert reason in capsys.readouterr().err


def test_store_check_reports_bricked_and_unfinished(tmp_path, capsys):
    bricked = tmp_path / "old.sqlite"
    conn = sqlite3.connect(bricked)
    conn.execute("create table runs (run_id text primary key)")  # an old lsrep killed mid-creation
    conn.commit()
    conn.close()
    assert main(["store", "check", "--store", str(bricked)]) == 1
    assert "no migration is recorded" in capsys.readouterr().out

    store = RunStore(tmp_path / "ok.sqlite")
    store.create_run("r1", "c", "c.toml", "d", "p", {})
    assert main(["store", "check", "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert "integrity: ok" in out and "schema: current" in out and "run r1 is 'running'" in out


def test_run_creation_and_turns_are_idempotent(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    for _ in range(2):
        store.create_run("r1", "c", "c.toml", "d", "p", {})
        store.write_turns("r1", "t", [{"run_id": "r1", "trajectory": "t", "idx": 0, "turn_id": "a"}])
    assert store.rows("select count(*) n from runs")[0]["n"] == 1
    assert store.rows("select count(*) n from turns")[0]["n"] == 1


def _workspace(tmp_path: Path, repetitions: int = 4) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import reliability
    finally:
        sys.path.pop(0)
    return reliability.workspace(tmp_path, repetitions)


def _lsrep(*args: str) -> subprocess.Popen:
    return subprocess.Popen(with_ctrl_c([sys.executable, "-m", "lsrep.cli", *args]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)


def test_two_runs_of_one_campaign_never_replay_a_unit_twice(tmp_path):
    campaign = _workspace(tmp_path)
    store = tmp_path / "conc.sqlite"
    procs = [_lsrep("run", str(campaign), "--store", str(store), "--quiet") for _ in range(3)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], results
    assert all("Traceback" not in err for _, err in results)
    s = RunStore(store)
    assert s.rows("select status, count(*) n from runs group by status") == [{"status": "finished", "n": 1}]
    assert s.rows("select count(*) n from units")[0]["n"] == 12
    # The first run replays every unit; the others wait, then find it finished (nothing replayed).
    replayed = [0 if "already finished" in out else int(out.split(": ")[1].split()[0]) for out, _ in results]
    assert sorted(replayed)[-1] == 12 and sum(replayed) == 12, results


def test_ctrl_c_marks_the_run_interrupted_and_it_resumes(tmp_path):
    campaign = _workspace(tmp_path, repetitions=8)
    store = tmp_path / "int.sqlite"
    proc = _lsrep("run", str(campaign), "--store", str(store), "--quiet")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and units_stored(store) < 1:
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.skip("the run finished before the interrupt landed")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err
    s = RunStore(store)
    assert s.rows("select status from runs") == [{"status": "interrupted"}]
    done = s.rows("select count(*) n from units")[0]["n"]
    again = subprocess.run([sys.executable, "-m", "lsrep.cli", "run", str(campaign), "--store", str(store), "--quiet"],
                           capture_output=True, text=True, cwd=REPO, timeout=300)
    assert again.returncode == 0 and again.stdout.startswith("resumed run")
    assert f"{done} already stored" in again.stdout
    assert s.rows("select status from runs") == [{"status": "finished"}]
    assert s.rows("select count(*) n from units")[0]["n"] == 24


def test_small_crash_trials(tmp_path):
    # The default-suite version of benchmarks/reliability.py (the full one is slow-marked).
    res = subprocess.run([sys.executable, str(REPO / "benchmarks/reliability.py"), "--trials", "2",
                          "--only", "creation,migration,run,worker"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_full_crash_trials():
    res = subprocess.run([sys.executable, str(REPO / "benchmarks/reliability.py"), "--trials", "50", "--rounds", "20"],
                         capture_output=True, text=True, timeout=7200)
    assert res.returncode == 0, res.stdout + res.stderr
