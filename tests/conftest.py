"""Shared fixtures: the repository, the shared data folder and a copy of the bundled example."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the quickstart campaign whose store lives in tmp_path."""
    dest = tmp_path / "campaigns"
    shutil.copytree(REPO / "campaigns" / "quickstart", dest / "quickstart")
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    text = (REPO / "campaigns" / "quickstart.toml").read_text()
    (dest / "quickstart.toml").write_text(text)
    return dest / "quickstart.toml"
