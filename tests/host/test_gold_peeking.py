"""The gold-peeking routes, tried from adapters in a real campaign run from the command line.

In the default mode (each adapter in its adapter host) the peekers find nothing and score exactly
what the honest reference adapter scores; in the explicit in-process mode the same peekers do find
the gold — so the test proves the protection, not a broken peeker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsrep.host.launch import isolation
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-canary-0123456789abcdef"
PEEKERS = {"stack": "StackPeekingAdapter", "heap": "HeapPeekingAdapter", "file": "FilePeekingAdapter",
           "disk": "DiskSearchingAdapter", "env": "EnvPeekingAdapter"}


def _with_peekers(example: Path) -> Path:
    conditions = "".join(f'[[conditions]]\nname = "{name}"\nsystem = "tests.conformance.broken_adapters:{cls}"\n\n'
                         for name, cls in {"reference": "ReferenceAdapter", **PEEKERS}.items())
    text = example.read_text()
    head, _, tail = text.partition("[[conditions]]")
    tail = tail[tail.index("[answerer]"):]
    example.write_text(head + conditions + tail)
    return example


def _run(campaign: Path, mode: str) -> dict[str, dict]:
    store = campaign.parent / f"{mode}.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO), "LSREP_TEST_API_KEY": KEY}
    # As a user runs it: the campaign path is on the harness's command line, its folder the cwd.
    done = subprocess.run([sys.executable, "-m", "lsrep.cli", "run", str(campaign), "--quiet", "--store", str(store),
                           "--adapter-host", mode], cwd=campaign.parent, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    db = RunStore(store)
    run_id = db.rows("select run_id from runs")[0]["run_id"]
    manifest = json.loads(db.rows("select manifest from runs")[0]["manifest"])
    assert manifest["adapter_host"]["mode"] == mode
    out = {}
    for row in db.rows("select o.condition, avg(j.correct) as accuracy, count(*) as n from observations o join "
                       "judgements j using (obs_id) where o.run_id = ? and j.judge = 'deterministic' "
                       "group by o.condition", [run_id]):
        peeked = db.rows("select coalesce(t.text, f.text) as text from fragments f join observations o using (obs_id) "
                         "left join fragment_texts t on t.sha256 = f.text_sha256 where o.run_id = ? "
                         "and o.condition = ? and f.kind = 'peeked'", [run_id, row["condition"]])
        out[row["condition"]] = {"accuracy": row["accuracy"], "n": row["n"], "peeked": [r["text"] for r in peeked]}
    failures = db.rows("select count(*) as n from failures where run_id = ?", [run_id])[0]["n"]
    assert failures == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from tests.conftest import REPO as ROOT

    tmp = tmp_path_factory.mktemp("peeking")
    import shutil

    shutil.copytree(ROOT / "campaigns" / "quickstart", tmp / "campaigns" / "quickstart")
    shutil.copytree(ROOT / "schedules", tmp / "schedules")
    (tmp / "campaigns" / "quickstart.toml").write_text((ROOT / "campaigns" / "quickstart.toml").read_text())
    campaign = _with_peekers(tmp / "campaigns" / "quickstart.toml")
    return {mode: _run(campaign, mode) for mode in ("in-process", "process")}


@pytest.mark.parametrize("route", ["stack", "heap", "file", "disk"])
def test_in_process_the_peeker_finds_gold_and_gains(runs, route):
    got, honest = runs["in-process"][route], runs["in-process"]["reference"]
    assert len(got["peeked"]) > got["n"] // 2, got["peeked"][:3]
    # The gold adds a clear gain over the honest reference (answerer v3 reads the honest context better, so
    # the gain on the quickstart is about .1, no longer above it).
    assert got["accuracy"] > honest["accuracy"] + 0.05, (got["accuracy"], honest["accuracy"])


def test_in_process_the_environment_holds_the_key(runs):
    assert any(KEY in text for text in runs["in-process"]["env"]["peeked"])


@pytest.mark.parametrize("route", list(PEEKERS))
def test_in_the_adapter_host_every_route_finds_nothing(runs, route):
    if route == "file" and isolation() == "process":
        pytest.skip("no PID namespace on this machine: /proc shows the harness's command line (see docs)")
    if route == "disk" and isolation() != "sandbox":
        pytest.skip("no mount namespace on this machine: the host sees the disk (see docs)")
    got, honest = runs["process"][route], runs["process"]["reference"]
    assert got["peeked"] == []
    assert got["accuracy"] == honest["accuracy"]


def test_the_host_changes_nothing_for_an_honest_adapter(runs):
    assert runs["process"]["reference"] == runs["in-process"]["reference"]
