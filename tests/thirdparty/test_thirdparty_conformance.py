"""`lsrep adapters check mem0` / `langmem` pass with no failure, through the CLI (the adapter in its
own host process, the offline memory model), and the report counts the library's model calls."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("system", ["mem0", "langmem"])
def test_adapters_check_passes(system):
    if importlib.util.find_spec(system) is None:
        pytest.skip(f"needs lsrep[{system}]")
    done = subprocess.run([sys.executable, "-m", "lsrep.cli", "adapters", "check", system, "--json"],
                          capture_output=True, text=True, timeout=900)
    report = json.loads(done.stdout)
    failed = {r["name"]: r["reason"] for r in report["results"] if r["status"] == "failed"}
    assert failed == {} and done.returncode == 0, failed or done.stderr[-2000:]
    assert report["memory_calls"] > 100
    assert {r["name"] for r in report["results"] if r["status"] == "passed"} >= {
        "timestamps_reach_system", "determinism", "snapshot_roundtrip", "isolated_probe", "retry_no_duplicate",
        "retrieval_budget", "reset_empties_state"}
