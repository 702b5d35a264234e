"""`lsrep adapters check`: the table, the JSON, the exit codes, the options (one run as a real process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lsrep.cli import main
from lsrep.commands.adapters import parse_options
from lsrep.conformance import CHECKS
from lsrep.errors import ConfigError
from tests.conformance.broken_adapters import ReferenceAdapter, ReversedOrderAdapter
from tests.conftest import REPO


def lsrep(*args):
    return subprocess.run([sys.executable, "-m", "lsrep.cli", *args], capture_output=True, text=True, cwd=REPO)


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def test_a_conformant_adapter_prints_every_check_and_exits_0():
    res = lsrep("adapters", "check", name(ReferenceAdapter))
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"conformance of {name(ReferenceAdapter)}")
    rows = {line.split()[0]: line.split()[1] for line in lines[3:-1]}
    assert rows == {c: "info" if c == "query_side_effects" else "passed" for c in CHECKS}
    assert lines[-1] == f"{len(CHECKS) - 1} passed, 0 failed, 0 skipped, 1 info"


def test_a_failing_check_exits_1_with_its_reason_in_json(capsys):
    code, out, _ = run(capsys, "adapters", "check", name(ReversedOrderAdapter), "--json")
    assert code == 1
    report = json.loads(out)
    failed = {r["name"]: r["reason"] for r in report["results"] if r["status"] == "failed"}
    assert list(failed) == ["ingest_order"] and "c04 after c05" in failed["ingest_order"]
    assert report["ok"] is False and report["adapter"] == name(ReversedOrderAdapter)


def test_options_are_validated_against_the_options_model(capsys):
    code, _, err = run(capsys, "adapters", "check", "vector-rag", "--option", "top_kk=3")
    assert code == 2 and "top_kk: unknown field" in err
    code, out, err = run(capsys, "adapters", "check", "vector-rag", "--option", "top_k=2", "--option",
                         "chronological=true", "--check", "options_model", "--json")
    assert code == 0, err
    assert json.loads(out)["options"] == {"top_k": 2, "chronological": True}


def test_unknown_system_and_check_are_one_line_errors(capsys):
    code, _, err = run(capsys, "adapters", "check", "vectr-rag")
    assert code == 2 and "did you mean 'vector-rag'" in err
    code, _, err = run(capsys, "adapters", "check", "null", "--check", "determinsm")
    assert code == 2 and "did you mean 'determinism'" in err


def test_options_parse_json_values_strings_and_dotted_keys():
    assert parse_options(["top_k=3", "name=abc", "flag=true", "limits=[1, 2]", "config.decay=0.5",
                          "config.mode=fast"]) == {
        "top_k": 3, "name": "abc", "flag": True, "limits": [1, 2], "config": {"decay": 0.5, "mode": "fast"}}
    for bad in (["novalue"], ["=3"], ["a=1", "a=2"], ["a=1", "a.b=2"]):
        with pytest.raises(ConfigError):
            parse_options(bad)


def test_checks_lists_every_check_with_what_it_catches(capsys):
    code, out, _ = run(capsys, "adapters", "checks")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == list(CHECKS)


def test_json_lists_every_check_with_a_status_and_reason_and_the_host(capsys):
    from tests.conformance.broken_adapters import StackPeekingAdapter

    code, out, _ = run(capsys, "adapters", "check", name(StackPeekingAdapter), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["adapter_host"] == "process"
    assert [r["name"] for r in report["results"]] == list(CHECKS)
    assert all(r["status"] in {"passed", "failed", "info", "skipped"} and r["reason"] for r in report["results"])
    code, out, _ = run(capsys, "adapters", "check", name(StackPeekingAdapter), "--json", "--check",
                       "gold_unreachable", "--adapter-host", "in-process")
    (result,) = json.loads(out)["results"]
    assert code == 1 and result["status"] == "failed" and "reached the output" in result["reason"]


def test_hostile_text_in_an_adapter_failure_neither_crashes_the_table_nor_spreads_over_lines():
    res = lsrep("adapters", "check", "tests.host.host_adapters:HostileMessageAdapter", "--check", "replay_runs")
    assert res.returncode == 1, res.stderr
    (row,) = [line for line in res.stdout.splitlines() if line.startswith("replay_runs")]
    assert "failed" in row and "line one line two" in row and "\\ud800" in row and "\\x00" in row
