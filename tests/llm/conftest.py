"""Fixtures for the LLM layer: a real in-process OpenAI-compatible server and specs for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lsrep.llm.config import EndpointSpec
from lsrep.llm.server import OpenAITestServer

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # pyproject declares slow tests excluded by default; enforce it for this folder.
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow test: run with -m slow")
    for item in items:
        if "slow" in item.keywords and _HERE in item.path.parents:
            item.add_marker(skip)


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as srv:
        yield srv


def _spec_for(srv: OpenAITestServer, **overrides: object) -> EndpointSpec:
    fields: dict[str, object] = dict(
        base_url=srv.base_url, model="test-model", backoff_base_s=0.01, backoff_max_s=0.2,
        timeout_s=5.0, max_retries=3, concurrency=4,
    )
    fields.update(overrides)
    return EndpointSpec(**fields)


@pytest.fixture
def spec_for():
    """Build a spec for a test server, with fast retries: spec_for(srv, **overrides)."""
    return _spec_for
