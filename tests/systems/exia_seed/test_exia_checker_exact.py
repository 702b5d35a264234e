"""The citation checker (admission): each seed rule on its own, with the exact reason it gives."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from lsrep.systems.exia_seed import Fixes, Settings
from lsrep.systems.exia_seed.checker import (
    AGENT_ONLY,
    NO_VALID_SOURCE,
    UNKNOWN_REF,
    USER_UNSUPPORTED,
    Verdict,
    check_fact,
    cited_refs,
)
from lsrep.systems.exia_seed.prompts import Source

USER = Source("brut:b1:1", "My sister Alice moved to Lyon in 2019 with her husband.", False, "2026-03-01", "09:00")
AGENT = Source("brut:b1:2", "Lyon is lovely; Alice must enjoy the river walks near 42 Quai.", True, "2026-03-01", "09:01")
SOURCES = {s.ref: s for s in (USER, AGENT)}
LENIENT = Settings()
STRICT = replace(Settings(), fix=Fixes(strict_citations=True))


def fact(text: str, *refs: str, **extra) -> dict:
    return {"fait": text, "sources": list(refs), **extra}


def test_cited_refs_accepts_a_string_or_a_list_and_drops_blanks():
    assert cited_refs({"sources": " brut:b1:1 "}) == ["brut:b1:1"]
    assert cited_refs({"sources": ["brut:b1:1", " ", ""]}) == ["brut:b1:1"]
    assert cited_refs({"sources": 7}) == [] and cited_refs({}) == []


def test_a_supported_fact_is_accepted():
    verdict = check_fact(fact("Alice moved to Lyon in 2019.", "brut:b1:1"), SOURCES, LENIENT)
    assert verdict == Verdict(True, "accepté", None, None, ())


def test_empty_and_unsourced_facts_are_rejected():
    assert check_fact({"fait": "  ", "sources": ["brut:b1:1"]}, SOURCES, LENIENT).reason == "fait vide"
    assert check_fact({"fait": 3, "sources": ["brut:b1:1"]}, SOURCES, LENIENT).reason == "fait vide"
    assert check_fact(fact("Alice moved to Lyon."), SOURCES, LENIENT).reason == NO_VALID_SOURCE
    assert check_fact(fact("Alice moved to Lyon.", "brut:zz:9"), SOURCES, LENIENT).reason == NO_VALID_SOURCE


def test_unknown_refs_are_ignored_unless_strict():
    mixed = fact("Alice moved to Lyon in 2019.", "brut:b1:1", "brut:zz:9")
    assert check_fact(mixed, SOURCES, LENIENT).ok
    assert check_fact(mixed, SOURCES, STRICT) == Verdict(False, UNKNOWN_REF)


def test_agent_only_sources_reject_and_strict_needs_the_users_words():
    assert check_fact(fact("Alice enjoys the river walks.", "brut:b1:2"), SOURCES, LENIENT).reason == AGENT_ONLY
    both = fact("Alice enjoys the river walks in Lyon.", "brut:b1:1", "brut:b1:2")
    assert check_fact(both, SOURCES, LENIENT).ok  # the agent's words count when a user line is cited too
    assert check_fact(both, SOURCES, STRICT).reason == USER_UNSUPPORTED


def test_every_number_must_appear_in_the_cited_text():
    assert check_fact(fact("Alice moved to Lyon in 2018.", "brut:b1:1"), SOURCES, LENIENT).reason == \
        "nombre absent des sources: 2018"
    assert check_fact(fact("Alice lives at 42 Quai in Lyon.", "brut:b1:1"), SOURCES, LENIENT).reason == \
        "nombre absent des sources: 42"


def test_names_must_appear_in_the_cited_text():
    verdict = check_fact(fact("Alice moved to Lyon with Bernard.", "brut:b1:1"), SOURCES, LENIENT)
    assert verdict.reason == "nom absent des sources: Bernard"


def test_roots_must_overlap_by_count_and_by_share():
    # Enough shared five-letter roots (sister, moved, husband), by count and by share: accepted.
    assert check_fact(fact("My sister moved with her husband.", "brut:b1:1"), SOURCES, LENIENT).ok
    # One shared root only: below checker_min_roots (2).
    low = check_fact(fact("A husband bakes bread daily.", "brut:b1:1"), SOURCES, LENIENT)
    assert low.reason == "recouvrement insuffisant (1/4)"
    # Two shared roots but under half of the fact's roots.
    share = check_fact(fact("Sister husband bakes sourdough bread every morning.", "brut:b1:1"), SOURCES, LENIENT)
    assert share.reason.startswith("recouvrement insuffisant (2/")
    looser = replace(LENIENT, checker_min_overlap=0.2)
    assert check_fact(fact("Sister husband bakes sourdough bread every morning.", "brut:b1:1"), SOURCES, looser).ok
    assert check_fact(fact("2019", "brut:b1:1"), SOURCES, LENIENT).reason == "fait réduit à une date"


def test_dates_are_kept_only_when_a_source_supports_them():
    said_that_day = check_fact(fact("Alice moved to Lyon in 2019.", "brut:b1:1", date_evenement="2026-03-01"),
                               SOURCES, LENIENT)
    assert said_that_day.ok and said_that_day.event == date(2026, 3, 1) and said_that_day.stripped == ()
    unsupported = check_fact(fact("Alice moved to Lyon in 2019.", "brut:b1:1", date_evenement="2025-06-07",
                                  echeance="2027-01-02"), SOURCES, LENIENT)
    assert unsupported.ok and unsupported.event is None and unsupported.until is None
    assert unsupported.stripped == ("date_evenement", "echeance")
    named = {**SOURCES, "brut:b1:3": Source("brut:b1:3", "Alice arrives in Lyon on June 7.", False, "2026-03-01")}
    kept = check_fact(fact("Alice arrives in Lyon on June 7.", "brut:b1:3", date_evenement="2026-06-07"), named, LENIENT)
    assert kept.ok and kept.event == date(2026, 6, 7)
    # A kept date's parts count as numbers the fact may state.
    dated = check_fact(fact("Alice arrives in Lyon on 2026-06-07.", "brut:b1:3", date_evenement="2026-06-07"),
                       named, LENIENT)
    assert dated.ok
