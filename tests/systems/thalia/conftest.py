"""Fixtures for the THALIA tests (helpers live in thalia_testkit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from thalia_testkit import Recorder, open_thalia


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make(tmp_path: Path, recorder: Recorder):
    """Factory of fresh THALIA instances, each in its own state directory under tmp_path."""
    opened = []

    def build(name: str = "state", **config):
        t = open_thalia(tmp_path / name, recorder, **config)
        opened.append(t)
        return t

    yield build
    for t in opened:
        t.close()
