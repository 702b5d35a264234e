"""Killing a run midway and re-running it gives the same observations as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from lsrep.exporting import export_rows
from lsrep.store import RunStore
from tests.conftest import units_stored

REPO = Path(__file__).resolve().parents[2]


def _campaign(example: Path) -> Path:
    text = example.read_text()
    text = text.replace('system = "full-context"\noptions = { context_limit = 16000 }',
                        'system = "tests.core.adapters_for_tests:SlowFullContextAdapter"\noptions = { delay_s = 0.03 }')
    example.write_text(text.replace("repetitions = 1", "repetitions = 3"))
    return example


def _comparable(store_path: Path) -> str:
    store = RunStore(store_path)
    run_id = store.latest_run()
    rows = export_rows(store, run_id)
    for row in rows:
        row.pop("obs_id"), row.pop("run_id")
    return json.dumps(rows, sort_keys=True)


def _finished_units(path: Path) -> int:
    return units_stored(path, status="finished")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("select count(*) from units where status = 'finished'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _run(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "lsrep.cli", "run", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_kill_and_resume_matches_uninterrupted(example, tmp_path):
    campaign = _campaign(example)
    interrupted = tmp_path / "interrupted.sqlite"
    proc = _run([str(campaign), "--store", str(interrupted), "--quiet"])
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
        if _finished_units(interrupted) >= 4:
            break
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = RunStore(interrupted)
    done = store.rows("select count(*) as n from units")[0]["n"]
    assert 4 <= done < 9, "the kill should land midway"
    assert store.rows("select status from runs")[0]["status"] == "running"

    resumed = _run([str(campaign), "--store", str(interrupted), "--quiet"])
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "resumed run" in out and f"{done} already stored" in out

    clean = tmp_path / "clean.sqlite"
    proc = _run([str(campaign), "--store", str(clean), "--quiet"])
    proc.communicate(timeout=120)
    assert _comparable(interrupted) == _comparable(clean)
    counts = RunStore(interrupted).rows("select count(*) as n, count(distinct obs_id) as d from observations")[0]
    assert counts["n"] == counts["d"] == 189 * 3
