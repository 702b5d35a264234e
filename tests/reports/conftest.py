"""A replayed example run (with a script planted in a turn) and a synthetic run, built once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lsrep.store import RunStore
from tests.reports.synthetic import write_synthetic_run

REPO = Path(__file__).resolve().parents[2]
PLANTED = "<script>document.title='pwned'</script>"


@pytest.fixture(scope="session")
def example_run(tmp_path_factory) -> tuple[RunStore, str]:
    """The bundled quickstart campaign, replayed, with a script planted in an evidence turn."""
    from lsrep.runner import run_campaign

    root = tmp_path_factory.mktemp("example")
    shutil.copytree(REPO / "campaigns" / "quickstart", root / "campaigns" / "quickstart")
    shutil.copytree(REPO / "schedules", root / "schedules")
    shutil.copy(REPO / "campaigns" / "quickstart.toml", root / "campaigns" / "quickstart.toml")
    trajectory = root / "campaigns" / "quickstart" / "trajectory.jsonl"
    lines = [json.loads(line) for line in trajectory.read_text().splitlines() if line.strip()]
    lines[0]["content"] += " " + PLANTED  # t0001 is the evidence of several probes
    trajectory.write_text("".join(json.dumps(t) + "\n" for t in lines))
    store_path = root / "lsrep.sqlite"
    outcome = run_campaign(root / "campaigns" / "quickstart.toml", store_path=store_path, fresh=True)
    return RunStore(store_path), outcome.run_id


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory) -> RunStore:
    return write_synthetic_run(tmp_path_factory.mktemp("synthetic") / "lsrep.sqlite")
