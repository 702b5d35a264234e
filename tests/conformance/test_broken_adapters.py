"""Each deliberately broken adapter fails exactly the check aimed at it, and no other."""

from __future__ import annotations

from datetime import date

import pytest

from lsrep.conformance import CHECKS, carries_date, run_conformance
from tests.conformance.broken_adapters import BROKEN, ReferenceAdapter

INFO_ONLY = {"session_boundaries", "query_side_effects"}
"""Checks that report a fact and never fail, so no adapter can break them."""


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
    assert sorted(BROKEN.values()) == sorted(set(CHECKS) - INFO_ONLY)


@pytest.mark.parametrize("cls", list(BROKEN), ids=lambda c: c.__name__)
def test_broken_adapter_fails_exactly_its_check(cls, reference):
    report = run_conformance(target(cls))
    got = {r.name: r.status for r in report.results}
    expected = {r.name: r.status for r in reference.results} | {BROKEN[cls]: "failed"}
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
