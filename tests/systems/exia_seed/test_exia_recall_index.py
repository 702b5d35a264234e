"""Recall's index (recall_index.py) against the plain rule (`select(..., indexed=False)`: every fact
of every activated page scored) on randomized memories: the same candidates in the same order
with the same scores, the same selection, events, work count and phase-2 block, over facts with
shared and disjoint words, procedural facts, future and expired dates, privacy labels, aliases,
equal scores across pages, and settings that cap, cut, filter or withhold. Also the index derived
after pages change (`PageIndex.derive`) against one built afresh."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from lsrep.systems.exia_seed import Fixes, Settings, StageEvent
from lsrep.systems.exia_seed.cache import Memoire
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import write_graph
from lsrep.systems.exia_seed.pages import Fact, Page
from lsrep.systems.exia_seed.recall import select, souvenirs
from lsrep.systems.exia_seed.recall_index import PageIndex

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WORDS = "garden river coffee budget violin harbour museum lantern market kitchen office piano".split()
NAMES = ["Rex", "Ana", "Lisbon", "Porto Club", "Marie"]
DAYS = ["2026-02-01", "2026-03-01", "2026-03-09", "2026-03-10", "2026-03-11", "2026-04-01"]


def random_fact(rng: random.Random, fid: str, page_names: list[str]) -> Fact:
    words = rng.sample(WORDS, rng.randint(1, 4))
    if rng.random() < 0.3:
        words.append(rng.choice(page_names))
    return Fact(
        id=fid, text=" ".join(words), refs=[f"brut:b{rng.randint(1, 3)}:{rng.randint(1, 9)}"],
        section=rng.choice(["episodic", "semantic", "procedural", "etat_agent"]),
        said=rng.choice([None, *DAYS]), event=rng.choice([None, None, *DAYS]),
        until=rng.choice([None, *DAYS]), type=rng.choice(["fait", "prospective"]),
        privacy=rng.choice(["normal", "normal", "private", "confidential"]),
        key=rng.choice([None, "lives_in"]), value=rng.choice([None, "Porto"]),
        superseded_by=rng.choice([None, None, "fz"]),
    )


def random_pages(rng: random.Random, *, duplicate_ids: bool = False) -> list[Page]:
    pages = []
    n = 0
    for i, name in enumerate(rng.sample(NAMES, rng.randint(1, len(NAMES)))):
        page = Page(slug=f"p{i}", name=name, aliases=[f"{name} alias"] if rng.random() < 0.4 else [])
        for _ in range(rng.randint(0, 25)):
            n += 1
            # Ids in a shuffled order so id order differs from page order.
            page.facts.append(random_fact(rng, f"f{rng.randint(0, 10**6):07d}{n:03d}", NAMES))
        pages.append(page)
    if duplicate_ids and len(pages) > 1 and pages[0].facts:
        pages[1].facts.append(replace(pages[0].facts[0], text="a copy elsewhere"))
    return pages


def build(root, pages: list[Page]) -> Memoire:
    paths = MemoryPaths(root)
    for page in pages:
        page.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in pages}, NOW)
    return Memoire(paths)


def random_settings(rng: random.Random) -> Settings:
    disabled = frozenset(m for m in ("recall.filter_future", "recall.filter_expired", "recall.budget",
                                     "recall.graph") if rng.random() < 0.25)
    return Settings(facts_per_subject=rng.choice([0, 1, 3, 50]), recall_budget_tokens=rng.choice([5, 40, 1200]),
                    activation_threshold=rng.choice([0.0, 0.2, 0.5]), disabled=disabled,
                    fix=Fixes(enforce_privacy=rng.random() < 0.5, phase2_ceiling=rng.random() < 0.3))


def outcome(memoire: Memoire, query: str, settings: Settings, primed: set[str], *, indexed: bool):
    events: list[StageEvent] = []
    sel = select(memoire, query, NOW, settings, set(primed), Emitter(events.append), indexed=indexed)
    lines = souvenirs(memoire, sel, settings)
    return ([(s.fact_id, s.node, s.score) for s in sel.candidates], sel.pool.count, sel.selected,
            sel.generic_lines, sel.tokens, sel.work, sel.subjects, events, lines)


def random_query(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(0, 3)) + rng.sample(NAMES, rng.randint(0, 2))
    return "What about " + " and ".join(words) + "?"


@pytest.mark.parametrize("seed", range(40))
def test_the_index_gives_the_plain_rules_candidates_selection_events_and_block(tmp_path, seed):
    rng = random.Random(seed)
    memoire = build(tmp_path / "mem", random_pages(rng))
    assert memoire.unique_ids
    for _ in range(12):
        settings = random_settings(rng)
        query = random_query(rng)
        primed = set(rng.sample(sorted(memoire.pages), rng.randint(0, len(memoire.pages))))
        plain = outcome(memoire, query, settings, primed, indexed=False)
        fast = outcome(memoire, query, settings, primed, indexed=True)
        assert fast == plain, (seed, query, settings)
        assert plain[0] == sorted(plain[0], key=lambda c: (-c[2], c[0]))  # the plain order, checked too


def test_equal_scores_on_two_pages_interleave_by_fact_id(tmp_path):
    """Two pages both named in the query, facts sharing no word with it: one score, id order."""
    a = Page(slug="a", name="Alpha", facts=[Fact(id=i, text="plain words", section="episodic", refs=[f"r{i}"])
                                            for i in ("f1", "f4", "f5")])
    b = Page(slug="b", name="Bravo", facts=[Fact(id=i, text="other words", section="episodic", refs=[f"s{i}"])
                                            for i in ("f2", "f3", "f6")])
    memoire = build(tmp_path / "mem", [a, b])
    settings = Settings(facts_per_subject=50)
    fast = outcome(memoire, "Alpha Bravo", settings, set(), indexed=True)
    assert [c[0] for c in fast[0]] == ["f1", "f2", "f3", "f4", "f5", "f6"]
    assert fast == outcome(memoire, "Alpha Bravo", settings, set(), indexed=False)


def test_a_fact_id_on_two_pages_falls_back_to_the_plain_rule(tmp_path):
    rng = random.Random(5)
    pages = random_pages(rng, duplicate_ids=True)
    while len(pages) < 2 or not pages[0].facts:
        pages = random_pages(rng, duplicate_ids=True)
    memoire = build(tmp_path / "mem", pages)
    assert not memoire.unique_ids
    settings = Settings(facts_per_subject=50)
    assert outcome(memoire, "garden river", settings, set(), indexed=True) == \
        outcome(memoire, "garden river", settings, set(), indexed=False)


def index_state(index: PageIndex):
    return (index.by_id, {t: sorted(ids) for t, ids in index.terms.items() if ids}, index.ids,
            index.dated, index.due, index.private)


@pytest.mark.parametrize("seed", range(30))
def test_a_derived_page_index_is_the_index_built_afresh(seed):
    rng = random.Random(seed)
    facts = [random_fact(rng, f"f{i:03d}", NAMES) for i in rng.sample(range(200), 30)]
    index = PageIndex(facts)
    before = index_state(index)
    current = list(facts)
    for step in range(6):
        # Removed facts not added back (a page edited by hand) make the derivation rebuild.
        removed = rng.sample(current, rng.randint(0, min(3, len(current))))
        added = []
        for old in removed:
            if rng.random() < 0.5:  # the same fact with only `superseded_by` changed (a supersession)
                added.append(replace(old, superseded_by=f"x{step}"))
        added += [random_fact(rng, f"g{step}{k}", NAMES) for k in range(rng.randint(0, 4))]
        derived = index.derive(removed, added)
        current = [f for f in current if f not in removed] + added
        assert index_state(derived) == index_state(PageIndex(current))
        assert index_state(index) == before  # the index derived from is left as it was
        index, before = derived, index_state(derived)


@pytest.mark.parametrize("level", [5e-324, 1e-323, 0.3])
def test_scores_that_round_together_keep_the_plain_order(level):
    """At a subnormal activation, one and two matched terms can give the same score (and the base
    score can equal them): the index then sorts by the plain key instead of by count."""
    from lsrep.systems.exia_seed.recall_index import IndexPool
    rng = random.Random(3)
    facts = [Fact(id=f"f{i:02d}", text=" ".join(rng.sample(["alpha", "beta", "gamma", "delta"], rng.randint(1, 3))),
                  section=rng.choice(["episodic", "procedural"]), refs=[]) for i in range(30)]
    rng.shuffle(facts)
    terms = {"alpha", "beta", "omega"}
    pool = IndexPool()
    pool.add("p", PageIndex(facts), level, terms, set())
    plain = sorted((-(level * (0.5 + 0.5 * (len(terms & set(f.text.split())) / len(terms)))), f.id) for f in facts)
    assert [(neg, fid) for neg, fid, _slug in pool.ordered()] == plain
    procedural = {f.id for f in facts if f.section == "procedural"}
    assert pool.top("p", 40) == [c for c in plain if c[1] in procedural] + [c for c in plain if c[1] not in procedural]
