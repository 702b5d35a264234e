"""`lsrep diff` finds a planted reordering nondeterminism, and nothing between two identical runs."""

from __future__ import annotations

import json
import subprocess
import sys

from lsrep.reports.diff import diff_runs

from lsrep.executors.local import InProcessExecutor
from lsrep.runner import run_campaign
from lsrep.store import RunStore

CONDITIONS = {
    "recent": "tests.rundiff.diff_adapters:RecentTurnsAdapter",
    "shuffled": "tests.rundiff.diff_adapters:ShufflingAdapter",
}


def _campaign(example) -> None:
    text = example.read_text()
    head, _, rest = text.partition("[[conditions]]")
    tail = "[answerer]" + rest.split("[answerer]", 1)[1]
    body = head + "".join(f'[[conditions]]\nname = "{n}"\nsystem = "{s}"\n\n' for n, s in CONDITIONS.items())
    example.write_text(body + tail)


def _two_runs(example):
    _campaign(example)
    a = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    b = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    assert a.run_id != b.run_id
    return RunStore(a.store_path), a.run_id, b.run_id


def test_diff_finds_the_reordering_and_nothing_else(example):
    store, a, b = _two_runs(example)
    result = diff_runs(store, a, store, b)
    assert not result["identical"]
    assert result["conditions"]["recent"]["checkpoints"] == []
    assert result["conditions"]["recent"]["compared"] > 0
    shuffled = result["conditions"]["shuffled"]["checkpoints"]
    assert shuffled, "the planted reordering was not found"
    # Same turns stored in the same order: the state digests agree; only contexts (and what follows) differ.
    assert all("state digest" not in row["differs"] and "context" in row["differs"] for row in shuffled)
    assert all(set(aspects) <= {"context", "answer", "label"} for row in shuffled for aspects in row["probes"].values())


def test_a_run_against_itself_is_identical(example):
    store, a, _ = _two_runs(example)
    result = diff_runs(store, a, store, a)
    assert result["identical"]
    assert all(not e["checkpoints"] for e in result["conditions"].values())


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lsrep.cli", "diff", *args], capture_output=True, text=True,
                          timeout=120)


def test_the_command_prints_json_and_exits_as_diff_does(example):
    store, a, b = _two_runs(example)
    same = _cli(a, a, "--store", str(store.path), "--json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["identical"] is True
    differ = _cli(a, b, "--store", str(store.path))
    assert differ.returncode == 1, differ.stderr
    assert "shuffled: " in differ.stdout and "recent: 0 of " in differ.stdout
    assert "context of " in differ.stdout
    missing = _cli(a, b, "--store", str(store.path.parent / "nowhere.sqlite"))
    assert missing.returncode != 0 and "no run store" in missing.stderr
