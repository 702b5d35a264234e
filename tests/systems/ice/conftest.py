"""Fixtures for the ICE tests (helpers live in ice_testkit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ice_testkit import Harness


@pytest.fixture
def harness(tmp_path: Path):
    """Factory of fresh ICE instances, each in its own state directory under tmp_path."""
    count = {"n": 0}

    def make(**config) -> Harness:
        count["n"] += 1
        return Harness(tmp_path / f"ice-{count['n']}", **config)

    return make
