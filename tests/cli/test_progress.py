"""The overall progress line: units, observations, failures, tokens and cost of uncached calls, ETA."""

from __future__ import annotations

import io

from lsrep.engine import UnitResult
from lsrep.progress import RunProgress


def _unit(status: str, calls: list[dict], n_obs: int = 4) -> UnitResult:
    return UnitResult(unit={"status": status}, tables={"observations": [{}] * n_obs, "llm_calls": calls})


def test_log_lines_count_uncached_tokens_and_cost():
    out = io.StringIO()
    bar = RunProgress(total=3, done=1, mode="log", log_every=0.0, stream=out)
    bar.unit_done(_unit("finished", [
        {"cached": 0, "prompt_tokens": 100, "completion_tokens": 20, "cost": 0.002},
        {"cached": 1, "prompt_tokens": 900, "completion_tokens": 90, "cost": None},  # a hit spends nothing
    ]))
    bar.unit_done(_unit("failed", [{"cached": 0, "prompt_tokens": 30, "completion_tokens": None, "cost": 0.001}]))
    lines = out.getvalue().splitlines()
    assert lines[0] == "lsrep: 2 unit(s) to replay (1 already stored)"
    assert lines[1].startswith("lsrep: units 2/3 (67%), 4 obs, 120 tokens, $0.0020, elapsed ")
    assert lines[2].startswith("lsrep: units 3/3 (100%), 8 obs, 1 failed, 150 tokens, $0.0030, elapsed ")
    assert lines[2].endswith("ETA 0s")


def test_log_lines_are_rate_limited_but_the_last_always_shows():
    out = io.StringIO()
    bar = RunProgress(total=50, mode="log", log_every=3600.0, stream=out)
    for _ in range(50):
        bar.unit_done(_unit("finished", []))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # the start, the first unit, the last
    assert lines[-1].startswith("lsrep: units 50/50 (100%), 200 obs, elapsed")


def test_no_prices_declared_says_cost_na():
    out = io.StringIO()
    bar = RunProgress(total=1, mode="log", stream=out)
    bar.unit_done(_unit("finished", [{"cached": 0, "prompt_tokens": 10, "completion_tokens": 5, "cost": None}]))
    assert "15 tokens, cost n/a" in out.getvalue()
