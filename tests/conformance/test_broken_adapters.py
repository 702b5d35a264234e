"""Each deliberately broken adapter fails exactly the check aimed at it, and no other."""

from __future__ import annotations

from datetime import date

import pytest

from lsrep.conformance import CHECKS, carries_date, run_conformance
from tests.conformance.broken_adapters import BROKEN, PEEKING, ReferenceAdapter

INFO_ONLY = {"query_side_effects"}
"""Checks that report a fact and never fail, so no adapter can break them."""


ALSO = {
    # Nondeterminism makes the effect of sessions unjudgeable, and the suite says so rather than guess.
    "NondeterministicAdapter": {"session_boundaries": "skipped", "no_wall_clock": "skipped"},
}
"""Verdicts besides the targeted failure that a broken adapter rightly changes."""
WALL_CLOCK = {"WallClockAdapter", "WallClockDigestAdapter"}
"""Adapters reading the machine's clock: checked with the host's clock patch off (`--wall-clock`); with
it on they see the simulated `now` and pass (tests/host/test_clock.py)."""


def target(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@pytest.fixture(scope="module")
def reference():
    return run_conformance(target(ReferenceAdapter))


def test_reference_adapter_exercises_and_passes_every_check(reference):
    statuses = {r.name: r.status for r in reference.results}
    assert list(statuses) == list(CHECKS)
    assert statuses == {name: "info" if name == "query_side_effects" else "passed" for name in CHECKS}, [
        r for r in reference.results if r.status != "passed"]
    assert reference.ok


def test_every_check_that_can_fail_has_a_broken_adapter():
    assert set(BROKEN.values()) | set(PEEKING.values()) == set(CHECKS) - INFO_ONLY


def test_every_check_names_a_test_adapter_it_catches():
    by_name = {cls.__name__: check for cls, check in (BROKEN | PEEKING).items()}
    for c in CHECKS.values():
        assert c.catches
        if c.name in INFO_ONLY:
            assert not c.example
        else:
            assert by_name.get(c.example) == c.name, (c.name, c.example)


@pytest.mark.parametrize("cls", list(PEEKING), ids=lambda c: c.__name__)
def test_peeking_adapter_gains_nothing_in_its_host_and_is_caught_in_process(cls, reference):
    hosted = run_conformance(target(cls))
    assert {r.name: r.status for r in hosted.results} == {r.name: r.status for r in reference.results}
    in_process = run_conformance(target(cls), checks=[PEEKING[cls]], adapter_host="in-process")
    assert in_process.results[0].status == "failed", in_process.results[0].reason
    assert in_process.adapter_host == "in-process"


@pytest.mark.parametrize("cls", list(BROKEN), ids=lambda c: c.__name__)
def test_broken_adapter_fails_exactly_its_check(cls, reference):
    report = run_conformance(target(cls), simulated_clock=cls.__name__ not in WALL_CLOCK)
    got = {r.name: r.status for r in report.results}
    expected = {r.name: r.status for r in reference.results} | ALSO.get(cls.__name__, {}) | {BROKEN[cls]: "failed"}
    assert got == expected, {r.name: r.reason for r in report.results if got[r.name] != expected[r.name]}
    assert not report.ok


def test_checks_can_be_selected(reference):
    report = run_conformance(target(ReferenceAdapter), checks=["determinism", "reset_empties_state"])
    assert [r.name for r in report.results] == ["determinism", "reset_empties_state"]


@pytest.mark.parametrize("text", ["[2026-03-02 12:00] Ana", "on 2 March 2026", "March 2, 2026", "02/03/2026",
                                  "2026/03/02", "le 2 mars 2026", "(2026-03-02)"])
def test_dates_are_recognised_in_common_forms(text):
    assert carries_date(text, date(2026, 3, 2))


@pytest.mark.parametrize("text", ["12 March 2026", "2026-03-12", "2026-03-20", "March 22, 2026", "no date"])
def test_other_dates_are_not_mistaken_for_it(text):
    assert not carries_date(text, date(2026, 3, 2))
