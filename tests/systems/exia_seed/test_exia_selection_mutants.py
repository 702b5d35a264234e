"""The last survivors of the `exia` mutation session (checker.py, recall.py), each pinned by an
output: a verdict is a value, both kept dates come back in their own fields, a section named
after "procedural" in sort order is no procedure, and the phase-2 ceiling keeps a line that
lands exactly on it."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import date

import pytest
from lsrep.systems.exia_seed import Fixes, Settings
from lsrep.systems.exia_seed.checker import Verdict, check_fact
from lsrep.systems.exia_seed.pages import Page
from lsrep.systems.exia_seed.prompts import Source
from lsrep.systems.exia_seed.recall import souvenirs
from lsrep.systems.exia_seed.text import estimate_tokens

from tests.systems.exia_seed.test_exia_recall_exact import build, fact, run


def test_a_verdict_is_an_immutable_hashable_value():
    verdict = Verdict(True, "accepté", date(2026, 3, 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.ok = False  # type: ignore[misc]
    assert {verdict, Verdict(True, "accepté", date(2026, 3, 1))} == {verdict}


def test_an_event_date_and_a_deadline_both_kept_stay_in_their_own_fields():
    source = Source("brut:b1:1", "Alice flies to Lyon on June 7 and must book the hotel by May 2.", False,
                    "2026-03-01", "09:00")
    verdict = check_fact({"fait": "Alice flies to Lyon and must book the hotel.", "sources": [source.ref],
                          "date_evenement": "2026-06-07", "echeance": "2026-05-02"}, {source.ref: source}, Settings())
    assert verdict.ok and verdict.stripped == ()
    assert (verdict.event, verdict.until) == (date(2026, 6, 7), date(2026, 5, 2))


def test_only_the_procedural_section_goes_first_whatever_the_other_sections_names(tmp_path):
    # "semantic" sorts after "procedural": it is still an ordinary section, listed by score.
    rex = Page(slug="rex", name="Rex", facts=[fact("s1", "Rex sleeps", section="semantic"),
                                              fact("e1", "Rex loves the park daily", section="episodic"),
                                              fact("p1", "Rex never eats grapes", section="procedural")])
    memoire = build(tmp_path, [rex])
    sel, _ = run(memoire, "Rex park daily?")
    scores = {s.fact_id: s.score for s in sel.candidates}
    assert scores["e1"] > scores["s1"]
    lines = [line.fact_ids for line in souvenirs(memoire, sel, Settings()) if line.kind == "fact"]
    assert lines == [("p1",), ("e1",), ("s1",)]


def test_the_phase2_ceiling_keeps_a_line_that_lands_exactly_on_it(tmp_path):
    pages = [Page(slug=f"s{i}", name=f"Subject{i}", summary="x" * 40,
                  facts=[fact(f"f{i}", f"Subject{i} likes the park")]) for i in range(4)]
    memoire = build(tmp_path, pages)
    sel, _ = run(memoire, " ".join(f"Subject{i}" for i in range(4)) + " park")
    free = souvenirs(memoire, sel, Settings())
    for n in (3, len(free)):
        budget = estimate_tokens("\n".join(line.text for line in free[:n]))
        capped = souvenirs(memoire, sel, replace(Settings(), recall_budget_tokens=budget,
                                                 fix=Fixes(phase2_ceiling=True)))
        assert capped == free[:n]
