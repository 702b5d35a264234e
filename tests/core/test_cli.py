"""The CLI end to end on the bundled example."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys


def lsrep(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "lsrep.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_systems_list_json_has_reference_systems():
    res = lsrep("systems", "list", "--json")
    assert res.returncode == 0, res.stderr
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    for name in ("null", "full-context", "vector-rag"):
        assert name in rows and "error" not in rows[name]
    assert rows["vector-rag"]["mechanisms"][0]["name"] == "vrag.retrieve"
    assert rows["full-context"]["supports_snapshot"] is True


def test_run_show_export(example, tmp_path):
    res = lsrep("run", str(example), "--quiet")
    assert res.returncode == 0, res.stderr
    run_line, store_line = res.stdout.strip().splitlines()[:2]
    run_id = run_line.split()[2].rstrip(":")
    store = store_line.split(": ", 1)[1]
    show = lsrep("show", run_id, "--store", store)
    assert show.returncode == 0, show.stderr
    assert "extractive-offline" in show.stdout and "offline, deterministic" in show.stdout
    for cond in ("null", "full-context", "vector-rag"):
        assert cond in show.stdout
    runs = lsrep("runs", "list", "--store", store)
    assert run_id in runs.stdout and "finished" in runs.stdout
    jsonl = lsrep("export", run_id, "--store", store, "--format", "jsonl")
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert len(rows) == 189 and {"outcome", "f1", "proven_leak", "evidence_recall"} <= set(rows[0])
    assert "query_ms" not in rows[0]
    out = tmp_path / "obs.csv"
    lsrep("export", run_id, "--store", store, "--format", "csv", "-o", str(out))
    parsed = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(parsed) == 189


def test_unknown_run_is_one_clear_line(example):
    lsrep("run", str(example), "--quiet")
    store = example.parent.parent / "runs" / "lsrep.sqlite"
    res = lsrep("show", "nope", "--store", str(store))
    assert res.returncode == 2 and res.stderr.startswith("lsrep: error: no run 'nope'")
    res = lsrep("show", "--store", str(example.parent / "missing.sqlite"))
    assert res.returncode == 2 and "no run store" in res.stderr


def test_quickstart_runs_every_builtin_system_and_writes_reports(tmp_path):
    res = lsrep("quickstart", "--out", str(tmp_path / "qs"))
    assert res.returncode == 0, res.stderr
    for cond in ("null", "full-context", "vector-rag", "thalia", "ice", "exia-seed"):
        assert f"\n{cond} " in res.stdout
    assert "offline, deterministic" in res.stdout
    for name in ("report.html", "report.md", "report.json"):
        assert (tmp_path / "qs" / name).stat().st_size > 0
