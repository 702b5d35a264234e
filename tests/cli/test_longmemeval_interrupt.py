"""Ctrl-C during `lsrep longmemeval`, sent to the terminal's whole process group (the driver, its
worker, the fork servers and the adapter hosts): one line, exit 130, the run marked `interrupted`,
no process left, and the same command resumes it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import units_stored, with_ctrl_c

REPO = Path(__file__).resolve().parents[2]


def _group(pgid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    out.append(int(entry))
            except OSError:
                pass
    return out


def _signal_state(pid: int) -> str:
    """The driver's SIGINT state per thread (blocked, ignored, caught masks from /proc)."""
    out = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            fields = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        out.append(f"{task.name}: " + " ".join(f"{k}={fields.get(k, '?').strip()}" for k in ("SigBlk", "SigIgn", "SigCgt")))
    return "threads " + "; ".join(out)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_to_the_process_group_marks_the_diagnostic_interrupted_and_it_resumes(tmp_path):
    from lsrep.probes.generator import generate_longmemeval_file

    # Long enough that the interrupt, sent once 3 questions are stored, lands mid-run even on a
    # loaded machine (with 40 questions the run could end between the poll and the signal).
    n = 120
    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=n, sessions_per_question=6, seed=11)
    store = tmp_path / "lme.sqlite"
    cmd = [sys.executable, "-m", "lsrep.cli", "longmemeval", "--data", str(data), "--systems", "vector-rag",
           "--store", str(store), "--workers", "2", "--progress", "none"]
    proc = subprocess.Popen(with_ctrl_c(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and units_stored(store) < 3:
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.skip("the diagnostic finished before the interrupt landed")
    stored, state = units_stored(store), _signal_state(proc.pid)  # said if the interrupt is lost
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"{err}\nunits stored at the signal: {stored}; {state}"
    assert len(err.strip().splitlines()) == 1 and "marked 'interrupted'" in err, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    deadline = time.monotonic() + 10
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in _group(proc.pid)}
    assert not left, f"processes of the interrupted run still alive: {left}"
    conn = sqlite3.connect(store)
    assert conn.execute("select status from runs").fetchall() == [("interrupted",)]
    done = conn.execute("select count(*) from units").fetchone()[0]
    conn.close()
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert again.returncode == 0, again.stderr
    conn = sqlite3.connect(store)
    assert conn.execute("select status from runs").fetchall() == [("finished",)]
    assert conn.execute("select count(*) from units").fetchone()[0] == n
    assert done < n
    conn.close()
