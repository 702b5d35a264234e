"""The conformance suite over every adapter registered in `lsrep.adapters`, one test per check.

Adapters registered later (built-in or pip-installed) are picked up from the registry; one that
cannot be loaded fails with the reason. A known failure is listed below with why, as a strict
xfail: once the adapter is fixed the entry must go.
"""

from __future__ import annotations

import pytest

from lsrep.conformance import CHECKS, ConformanceReport, run_conformance
from lsrep.errors import LsrepError
from lsrep.memory_model.checking import check_relay
from lsrep.protocol.campaign import MemoryModelSpec
from lsrep.registry import ADAPTERS, load_adapter_class
from tests.thirdparty.harness import missing_distributions

REGISTERED = ADAPTERS.entries()

KNOWN_FAILURES: dict[tuple[str, str], str] = {
}

_reports: dict[str, ConformanceReport | LsrepError] = {}


def report_for(name: str) -> ConformanceReport:
    if name not in _reports:
        try:
            load_adapter_class(name)
            if missing := missing_distributions(name):
                pytest.skip(f"{name} wraps {', '.join(missing)}, not installed (its lsrep extra)")
            # The memory model `lsrep adapters check` gives by default (adapters that use none ignore it).
            offline = MemoryModelSpec(kind="offline")
            _reports[name] = run_conformance(name, memory=check_relay(offline, offline))
        except LsrepError as exc:
            _reports[name] = exc
    got = _reports[name]
    if isinstance(got, LsrepError):
        pytest.fail(f"registered adapter {name!r} ({REGISTERED[name]}) cannot be loaded: {got}", pytrace=False)
    return got


def cases():
    for name in REGISTERED:
        for check in CHECKS:
            reason = KNOWN_FAILURES.get((name, check))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, check, marks=marks, id=f"{name}:{check}")


@pytest.mark.parametrize("name", list(REGISTERED))
def test_registered_adapter_loads(name):
    report_for(name)


@pytest.mark.parametrize(("name", "check"), list(cases()))
def test_registered_adapter_conforms(name, check):
    result = report_for(name).result(check)
    assert result.status != "failed", f"{name} fails {check}: {result.reason}"


def test_known_failures_name_real_adapters_and_checks():
    assert {n for n, _ in KNOWN_FAILURES} <= set(REGISTERED)
    assert {c for _, c in KNOWN_FAILURES} <= set(CHECKS)


def test_an_adapter_that_cannot_be_loaded_fails_with_the_reason(monkeypatch):
    monkeypatch.setitem(REGISTERED, "ghost", "no_such_module:GhostAdapter")
    monkeypatch.setitem(ADAPTERS._entries, "ghost", "no_such_module:GhostAdapter")
    monkeypatch.delitem(_reports, "ghost", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"registered adapter 'ghost' \(no_such_module:GhostAdapter\) "
                                                    r"cannot be loaded: .*cannot import 'no_such_module'"):
        report_for("ghost")
    _reports.pop("ghost", None)
