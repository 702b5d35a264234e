"""EXIA automatic recall on hand-built pages: seeds, priming, the future and expiry filters,
scoring, the per-subject cap, the budget and the phase-2 block (pointers, procedural first)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from lsrep.systems.exia_seed import Fixes, Settings, StageEvent
from lsrep.systems.exia_seed.cache import Memoire
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import write_graph
from lsrep.systems.exia_seed.pages import Fact, Page
from lsrep.systems.exia_seed.recall import is_expired, is_future, select, souvenirs

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TODAY = "2026-03-10"


def fact(fid: str, text: str, *, section: str = "episodic", **kw) -> Fact:
    return Fact(id=fid, text=text, section=section, refs=[f"brut:b1:{fid}"], said=kw.pop("said", "2026-03-01"), **kw)


def build(tmp_path, pages: list[Page]) -> Memoire:
    paths = MemoryPaths(tmp_path / "mem")
    for page in pages:
        page.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in pages}, NOW)
    return Memoire(paths)


def run(memoire, query, settings=None, primed=frozenset()):
    events: list[StageEvent] = []
    sel = select(memoire, query, NOW, settings or Settings(), set(primed), Emitter(events.append))
    return sel, events


def test_future_and_expiry_rules_are_strict_about_today():
    assert is_future(fact("a", "x", event="2026-03-11"), TODAY)
    assert not is_future(fact("a", "x", event=TODAY), TODAY)
    assert is_future(fact("a", "x", said="2026-03-11"), TODAY)
    assert not is_future(fact("a", "x", said=TODAY), TODAY)
    assert is_expired(fact("a", "x", type="prospective", until="2026-03-09"), TODAY)
    assert not is_expired(fact("a", "x", type="prospective", until=TODAY), TODAY)
    assert not is_expired(fact("a", "x", until="2026-03-01"), TODAY)  # only prospective facts expire
    assert not is_expired(fact("a", "x", type="prospective"), TODAY)


def test_a_named_subject_seeds_at_one_and_facts_score_by_coverage(tmp_path):
    rex = Page(slug="rex", name="Rex", facts=[fact("f1", "Rex loves the park"), fact("f2", "Rex sleeps a lot")])
    sel, events = run(build(tmp_path, [rex]), "Does Rex love the park?")
    assert sel.initial["rex"] == 1.0 and sel.seeded == {"rex"}
    level = round(math.tanh(math.tanh(math.tanh(1.0))), 9)  # three FCM rounds, no edges
    assert sel.activation["rex"] == level
    scores = {s.fact_id: s.score for s in sel.candidates}
    terms = set(sel.terms)
    assert scores["f1"] == pytest.approx(level * (0.5 + 0.5 * len(terms & {"rex", "loves", "park"}) / len(terms)))
    assert scores["f1"] > scores["f2"] and [s.fact_id for s in sel.selected] == ["f1", "f2"]


def test_priming_adds_its_bonus_and_lifts_an_unmatched_page_over_the_threshold(tmp_path):
    memoire = build(tmp_path, [Page(slug="rex", name="Rex", facts=[fact("f1", "Rex loves the park")]),
                               Page(slug="garden", name="Garden", facts=[fact("g1", "Compost needs patience")])])
    sel, _ = run(memoire, "Any news about Rex?")
    assert "garden" not in sel.subjects
    sel, events = run(memoire, "Any news about Rex?", primed={"garden"})
    assert sel.initial["garden"] == 0.3 and sel.primed == {"garden"}
    assert sel.activation["garden"] == round(math.tanh(math.tanh(math.tanh(0.3))), 9)
    assert "garden" in sel.subjects
    assert [e.ids for e in events if e.mechanism == "recall.priming" and e.stage == "output"] == [("garden",)]
    low = replace(Settings(), priming_bonus=0.1)  # tanh^3(0.1) < 0.2: below the threshold
    sel, _ = run(memoire, "Any news about Rex?", settings=low, primed={"garden"})
    assert "garden" not in sel.subjects
    off = replace(Settings(), disabled=frozenset({"recall.priming"}))
    sel, events = run(memoire, "Any news about Rex?", settings=off, primed={"garden"})
    assert sel.primed == set() and not [e for e in events if e.mechanism == "recall.priming"]


def test_future_and_expired_facts_are_dropped_and_reported(tmp_path):
    rex = Page(slug="rex", name="Rex", facts=[
        fact("now", "Rex loves the park"), fact("fut", "Rex visits the vet", event="2026-04-01"),
        fact("old", "Rex must get a collar", type="prospective", until="2026-03-01"),
        fact("due", "Rex must get a leash", type="prospective", until=TODAY)])
    sel, events = run(build(tmp_path, [rex]), "What about Rex?")
    assert {s.fact_id for s in sel.candidates} == {"now", "due"}
    future = next(e for e in events if e.mechanism == "recall.filter_future")
    expired = next(e for e in events if e.mechanism == "recall.filter_expired")
    assert (future.count, future.ids) == (1, ("fut",)) and (expired.count, expired.ids) == (1, ("old",))
    off = replace(Settings(), disabled=frozenset({"recall.filter_future", "recall.filter_expired"}))
    sel, _ = run(build(tmp_path / "b", [rex]), "What about Rex?", settings=off)
    assert {s.fact_id for s in sel.candidates} == {"now", "fut", "old", "due"}


def test_the_per_subject_cap_and_the_token_budget(tmp_path):
    facts = [fact(f"f{i}", f"Rex fact number word{i} park") for i in range(5)]
    memoire = build(tmp_path, [Page(slug="rex", name="Rex", facts=facts)])
    sel, _ = run(memoire, "Rex park?")
    assert len(sel.selected) == 3  # facts_per_subject
    line_cost = (len("- Rex: Rex fact number word0 park\n") + 3) // 4
    tight = replace(Settings(), recall_budget_tokens=2 * line_cost, facts_per_subject=5)
    sel, events = run(memoire, "Rex park?", settings=tight)
    assert len(sel.selected) == 2 and sel.tokens == 2 * line_cost
    budget = next(e for e in events if e.mechanism == "recall.budget" and e.stage == "executed")
    assert budget.params["cut"] == 3 and budget.params["estimated_tokens"] == 2 * line_cost
    exact = replace(tight, recall_budget_tokens=2 * line_cost + 1)
    assert len(run(memoire, "Rex park?", settings=exact)[0].selected) == 2
    unlimited = replace(tight, disabled=frozenset({"recall.budget"}))
    assert len(run(memoire, "Rex park?", settings=unlimited)[0].selected) == 5


def test_phase2_block_summary_procedural_first_and_pointers(tmp_path):
    rex = Page(slug="rex", name="Rex", summary="Rex is the family dog.", summary_sources=["p1"], facts=[
        fact("e1", "Rex loves the park near Lyon"), fact("p1", "Always give Rex water", section="procedural")])
    lyon = Page(slug="lyon", name="Lyon", facts=[fact("l1", "Lyon has a big park")])
    memoire = build(tmp_path, [rex, lyon])
    sel, _ = run(memoire, "Rex park?")
    lines = souvenirs(memoire, sel, Settings())
    rex_lines = [line for line in lines if line.node == "rex"]
    assert [line.kind for line in rex_lines] == ["subject", "summary", "fact", "fact", "pointer"]
    assert rex_lines[2].fact_ids == ("p1",)  # procedural first
    assert rex_lines[1].text == "  Rex is the family dog." and rex_lines[1].fact_ids == ("p1",)
    assert rex_lines[-1].text == "  → see also: Lyon"
    assert souvenirs(memoire, sel, replace(Settings(), language="fr"))[4].text == "  → voir aussi: Lyon"
    one = [line for line in souvenirs(memoire, sel, replace(Settings(), facts_per_subject=0)) if line.node == "rex"]
    assert [line.kind for line in one].count("fact") == 1  # max(1, facts_per_subject)


def test_phase2_ceiling_applies_only_with_the_fix(tmp_path):
    pages = [Page(slug=f"s{i}", name=f"Subject{i}", summary="x" * 400,
                  facts=[fact(f"f{i}", f"Subject{i} likes the park")]) for i in range(15)]
    memoire = build(tmp_path, pages)
    sel, _ = run(memoire, " ".join(f"Subject{i}" for i in range(15)) + " park")
    free = souvenirs(memoire, sel, Settings())
    capped = souvenirs(memoire, sel, replace(Settings(), fix=Fixes(phase2_ceiling=True)))
    budget = Settings().recall_budget_tokens
    assert sum(len(line.text) for line in free) // 4 > budget  # E-3: the block overruns the budget
    assert (sum(len(line.text) + 1 for line in capped) + 3) // 4 <= budget < (
        sum(len(line.text) + 1 for line in free) + 3) // 4
