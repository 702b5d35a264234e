"""One replay of the bundled example per session; each test gets its own copy of the store."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def replayed(tmp_path_factory) -> tuple[Path, str]:
    """(store path, run id) of the quickstart campaign, judge of record `human`."""
    base = tmp_path_factory.mktemp("rating-example")
    shutil.copytree(REPO / "campaigns" / "quickstart", base / "campaigns" / "quickstart")
    shutil.copytree(REPO / "schedules", base / "schedules")
    text = (REPO / "campaigns" / "quickstart.toml").read_text()
    campaign = base / "campaigns" / "quickstart.toml"
    campaign.write_text(text.replace('answer_mode = "context"', 'answer_mode = "context"\njudge_of_record = "human"'))
    outcome = run_campaign(campaign, store_path=base / "runs" / "lsrep.sqlite")
    return outcome.store_path, outcome.run_id


@pytest.fixture
def store_copy(replayed, tmp_path) -> tuple[RunStore, str]:
    """A private copy of the replayed store and its run id."""
    source, run_id = replayed
    path = tmp_path / "lsrep.sqlite"
    src, dst = sqlite3.connect(source), sqlite3.connect(path)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return RunStore(path), run_id
