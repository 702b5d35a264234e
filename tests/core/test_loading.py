"""Malformed inputs: each gives a clear error naming file and line, and no run is written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsrep.errors import InputError
from lsrep.protocol.loading import load_probes, load_trajectory

GOOD_TURN = {"turn_id": "t1", "session_id": "s1", "timestamp": "2026-03-02T09:15:00+00:00", "role": "user",
             "content": "We'll store everything in SQLite."}


def turn(**kw):
    return json.dumps({**GOOD_TURN, **kw})


TRAJECTORY_CASES = [
    ("invalid json", [turn(), "{not json"], 2, "invalid JSON"),
    ("not an object", [turn(), "[1, 2]"], 2, "JSON object"),
    ("missing content", [json.dumps({k: v for k, v in GOOD_TURN.items() if k != "content"})], 1, "content"),
    ("unknown field", [turn(mood="happy")], 1, "unknown field"),
    ("duplicate id", [turn(), turn(timestamp="2026-03-02T09:16:00+00:00")], 2, "duplicate turn_id"),
    ("decreasing time", [turn(), turn(turn_id="t2", timestamp="2026-03-01T09:00:00+00:00")], 2, "earlier"),
    ("no zone", [turn(timestamp="2026-03-02T09:15:00")], 1, "time zone"),
    ("bad timestamp", [turn(timestamp="yesterday")], 1, "timestamp"),
    ("session resumes", [turn(), turn(turn_id="t2", session_id="s2"), turn(turn_id="t3", session_id="s1")], 3,
     "contiguous"),
    ("empty turn id", [turn(turn_id="")], 1, "turn_id"),
]


@pytest.mark.parametrize("name,lines,line,reason", TRAJECTORY_CASES, ids=[c[0] for c in TRAJECTORY_CASES])
def test_trajectory_errors_name_file_line_and_reason(tmp_path, name, lines, line, reason):
    path = tmp_path / "bad.trajectory.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        load_trajectory(path)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert reason in str(info.value)


def _traj(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(turn(turn_id=f"t{i}", timestamp=f"2026-03-02T09:{i:02d}:00+00:00") for i in range(1, 6)))
    return path


PROBE = {"probe_id": "p1", "question": "Which database?", "kind": "current",
         "references": [{"answer": "SQLite", "valid_from": "t1", "evidence": ["t1"]}]}

PROBE_CASES = [
    ("unknown turn", {**PROBE, "references": [{"answer": "x", "valid_from": "t9"}]}, "not in trajectory"),
    ("unknown evidence", {**PROBE, "references": [{"answer": "x", "valid_from": "t1", "evidence": ["t77"]}]},
     "not in trajectory"),
    ("overlap", {**PROBE, "references": [{"answer": "a", "valid_from": "t1"}, {"answer": "b", "valid_from": "t3"}]},
     "overlap"),
    ("ends before start", {**PROBE, "references": [{"answer": "a", "valid_from": "t3", "valid_until": "t2"}]},
     "before or when it starts"),
    ("bad kind", {**PROBE, "kind": "sometimes"}, "kind"),
    ("no references", {**PROBE, "references": []}, "at least one reference"),
    ("unknown field", {**PROBE, "difficulty": 3}, "unknown field"),
    ("bad before_first", {**PROBE, "before_first": "guess"}, "before_first"),
]


@pytest.mark.parametrize("name,record,reason", PROBE_CASES, ids=[c[0] for c in PROBE_CASES])
def test_probe_errors_name_file_line_and_reason(tmp_path, name, record, reason):
    trajectory = load_trajectory(_traj(tmp_path))
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({**PROBE, "probe_id": "ok"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(InputError) as info:
        load_probes(path, trajectory)
    assert info.value.line == 2
    assert reason in str(info.value)


def test_duplicate_probe_id(tmp_path):
    trajectory = load_trajectory(_traj(tmp_path))
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(PROBE) + "\n" + json.dumps(PROBE) + "\n")
    with pytest.raises(InputError, match="duplicate probe_id"):
        load_probes(path, trajectory)


BROKEN_CAMPAIGNS = [
    ("bad toml", lambda t: t + "\n[[conditions\n", "invalid TOML"),
    ("unknown key", lambda t: t.replace('seed = 20261130', 'seed = 20261130\ncolour = "blue"'), "unknown field"),
    ("unknown system", lambda t: t.replace('system = "vector-rag"', 'system = "vektor-rag"'), "did you mean"),
    ("bad option", lambda t: t.replace("top_k = 30", "top_k = -3"), "top_k"),
    ("missing file", lambda t: t.replace("quickstart/probes.jsonl", "quickstart/nope.jsonl"), "not found"),
    ("unknown mechanism", lambda t: t.replace('system = "null"', 'system = "null"\ndisable = ["x.y"]'),
     "declares no mechanism"),
]


@pytest.mark.parametrize("name,edit,reason", BROKEN_CAMPAIGNS, ids=[c[0] for c in BROKEN_CAMPAIGNS])
def test_broken_campaign_fails_cleanly_and_writes_nothing(example, name, edit, reason):
    example.write_text(edit(example.read_text()))
    res = subprocess.run([sys.executable, "-m", "lsrep.cli", "run", str(example)], capture_output=True, text=True)
    assert res.returncode == 2
    assert reason in res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (example.parent.parent / "runs").exists()


def test_bad_trajectory_in_campaign_leaves_no_run(example):
    traj = example.parent / "quickstart" / "trajectory.jsonl"
    lines = traj.read_text().splitlines()
    lines[4] = lines[4].replace('"role"', '"rolle"')
    traj.write_text("\n".join(lines) + "\n")
    res = subprocess.run([sys.executable, "-m", "lsrep.cli", "run", str(example)], capture_output=True, text=True)
    assert res.returncode == 2
    assert f"{traj}:5" in res.stderr and "unknown field" in res.stderr
    assert not (example.parent.parent / "runs").exists()


def test_validate_command_reports_ok_and_errors(example, tmp_path):
    traj = example.parent / "quickstart" / "trajectory.jsonl"
    ok = subprocess.run([sys.executable, "-m", "lsrep.cli", "validate", str(traj), str(example)],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "35 turns in 6 session(s)" in ok.stdout
    bad = tmp_path / "bad.jsonl"
    shutil.copy(traj, bad)
    bad.write_text(bad.read_text() + '{"turn_id": "t0001"}\n')
    res = subprocess.run([sys.executable, "-m", "lsrep.cli", "validate", str(bad)], capture_output=True, text=True)
    assert res.returncode == 2 and f"{bad}:36" in res.stderr
