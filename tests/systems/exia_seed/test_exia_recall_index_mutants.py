"""Exact tests of recall's per-page index (recall_index.py) and what the exia-scale branch changed
around it (recall.py's pools and indexed `select`, cache.py's derived `Memoire`, summaries.py's lazy
`veto`), written for the `exia-recall-index` mutation session: outputs, orders and scores on
hand-built facts whose answers are known, and the work the fast paths exist to save (items sorted,
indexes built, structures shared rather than copied or rebuilt, FTS5 rows kept, pages folded),
beside the randomized equivalence of `test_exia_recall_index.py`."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from lsrep.systems.exia_seed import Fixes, Settings, StageEvent, recall_index, summaries
from lsrep.systems.exia_seed.cache import Memoire, RecallCache
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import write_graph
from lsrep.systems.exia_seed.pages import Fact, Page, PageReader
from lsrep.systems.exia_seed.recall import ListPool, Scored, Selection, select, souvenirs
from lsrep.systems.exia_seed.recall_index import IndexPool, PageIndex
from lsrep.systems.exia_seed.text import term_set

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def fact(fid: str, text: str = "words", **kw) -> Fact:
    return Fact(id=fid, text=text, section=kw.pop("section", "episodic"), refs=kw.pop("refs", [f"brut:b1:{fid}"]), **kw)


def state(index: PageIndex):
    return (index.by_id, {t: sorted(ids) for t, ids in index.terms.items() if ids}, index.ids,
            index.dated, index.due, index.private)


def plain(facts: list[Fact], level: float, terms: set[str], excluded: frozenset[str] = frozenset()):
    """The plain rule's (−score, id) list of one page, written out."""
    n = len(terms)
    return sorted((-(level * (0.5 + 0.5 * (len(terms & term_set(f.text)) / n if terms else 0.0))), f.id)
                  for f in facts if f.id not in excluded)


# -- PageIndex -------------------------------------------------------------------------------------

def test_future_and_expired_at_the_day_boundary():
    index = PageIndex([fact("a", said="2026-03-10"), fact("b", event="2026-03-11"), fact("c", said="2026-03-09"),
                       fact("d", type="prospective", until="2026-03-09"), fact("e", type="prospective", until="2026-03-10"),
                       fact("f", until="2026-01-01"), fact("g"), fact("h", said="2026-03-01", event="2026-03-12")])
    assert index.future("2026-03-10") == ["b", "h"]
    assert index.future("2026-03-09") == ["a", "b", "h"]
    assert index.future("2026-03-12") == []
    assert index.expired("2026-03-10") == ["d"]
    assert index.expired("2026-03-11") == ["d", "e"]
    assert index.expired("2026-03-09") == []
    assert index.dated == [("2026-03-09", "c"), ("2026-03-10", "a"), ("2026-03-11", "b"), ("2026-03-12", "h")]
    assert index.due == [("2026-03-09", "d"), ("2026-03-10", "e")]


def test_a_page_index_holds_every_fact_by_term_group_date_deadline_and_privacy():
    facts = [fact("f3", "garden river", section="procedural", privacy="private"),
             fact("f1", "river coffee", privacy="confidential"), fact("f2", "Café garden", section="semantic"),
             fact("f0", "piano", section="procedural", privacy="normal")]
    index = PageIndex(facts)
    assert index.by_id == {f.id: f for f in facts}
    assert {t: sorted(v) for t, v in index.terms.items()} == {
        "garden": ["f2", "f3"], "river": ["f1", "f3"], "coffee": ["f1"], "cafe": ["f2"], "piano": ["f0"]}
    assert index.ids == {"all": ["f0", "f1", "f2", "f3"], "procedural": ["f0", "f3"], "other": ["f1", "f2"]}
    assert index.private == {"f1", "f3"}
    assert (index.dated, index.due) == ([], [])


def test_deriving_for_a_supersession_shares_every_structure_and_swaps_the_fact():
    facts = [fact(f"f{i}", f"garden word{i}", said="2026-03-0" + str(i + 1), privacy="private" if i == 2 else "normal",
                  type="prospective" if i == 1 else "fait", until="2026-05-01" if i == 1 else None) for i in range(4)]
    index = PageIndex(facts)
    before = state(index)
    new = replace(facts[1], superseded_by="f9")
    derived = index.derive([facts[1]], [new])
    assert derived.by_id["f1"] is new
    assert state(derived) == state(PageIndex([facts[0], new, *facts[2:]]))
    # Nothing copied but the fact map: the lists and sets are the same objects (no rebuild).
    assert derived.dated is index.dated and derived.due is index.due and derived.private is index.private
    assert all(derived.ids[g] is index.ids[g] for g in index.ids)
    assert all(derived.terms[t] is index.terms[t] for t in index.terms)
    assert state(index) == before


def test_deriving_for_a_new_fact_copies_only_what_it_touches():
    facts = [fact("f1", "garden river", said="2026-03-01"), fact("f2", "coffee", section="procedural",
                                                                   type="prospective", until="2026-04-01"),
             fact("f3", "piano", privacy="confidential")]
    index = PageIndex(facts)
    before = state(index)
    plain_new = fact("f0", "garden violin")
    derived = index.derive([], [plain_new])
    assert state(derived) == state(PageIndex([*facts, plain_new]))
    assert derived.terms["garden"] is not index.terms["garden"]
    assert derived.terms["river"] is index.terms["river"] and derived.terms["coffee"] is index.terms["coffee"]
    assert derived.ids["all"] is not index.ids["all"] and derived.ids["other"] is not index.ids["other"]
    assert derived.ids["procedural"] is index.ids["procedural"]
    assert derived.dated is index.dated and derived.due is index.due and derived.private is index.private
    rich = fact("f5", "harbour garden", section="procedural", said="2026-03-05", type="prospective",
                until="2026-03-20", privacy="private")
    derived2 = index.derive([], [rich])
    assert state(derived2) == state(PageIndex([*facts, rich]))
    assert derived2.ids["other"] is index.ids["other"] and derived2.ids["procedural"] is not index.ids["procedural"]
    assert derived2.dated is not index.dated and derived2.due is not index.due
    assert derived2.private is not index.private
    assert state(index) == before


def test_deriving_past_256_added_facts_still_shares_the_untouched_structures():
    index = PageIndex([fact("a0", "garden", section="procedural")])
    added = [fact(f"b{i:03d}", "river") for i in range(300)]
    derived = index.derive([], added)
    assert state(derived) == state(PageIndex([*index.by_id.values(), *added]))
    assert derived.ids["procedural"] is index.ids["procedural"] and derived.terms["garden"] is index.terms["garden"]


def test_deriving_rebuilds_for_two_added_facts_with_one_id_a_known_id_or_a_foreign_removal():
    facts = [fact("f1", "garden"), fact("f2", "river")]
    index = PageIndex(facts)
    twins = [fact("f3", "coffee"), fact("f3", "piano")]
    assert state(index.derive([], twins)) == state(PageIndex([*facts, *twins]))
    known = fact("f1", "violin")  # an id already on the page, its old line not removed
    assert state(index.derive([], [known])) == state(PageIndex([*facts, known]))
    foreign = fact("f1", "garden")  # equal to f1 but not the indexed object: nothing of the page removed
    swapped = replace(foreign, superseded_by="x")
    assert state(index.derive([foreign], [swapped])) == state(PageIndex([*facts, swapped]))
    edited = replace(facts[0], text="garden harbour")
    assert state(index.derive([facts[0]], [edited])) == state(PageIndex([edited, facts[1]]))
    gone = index.derive([facts[1]], [])
    assert state(gone) == state(PageIndex([facts[0]]))
    assert state(index) == state(PageIndex(facts))


# -- IndexPool -------------------------------------------------------------------------------------

PAGE_A = [fact("a5", "garden river coffee", section="procedural"), fact("a1", "garden river"), fact("a2", "garden"),
          fact("a3", "coffee piano"), fact("a4", "violin", section="procedural"), fact("a0", "river"),
          fact("a6", "piano", section="procedural")]
PAGE_B = [fact("b1", "garden"), fact("b2", "harbour"), fact("b0", "river garden", section="procedural")]
TERMS = {"garden", "river"}


def pool_of(*pages, excluded=frozenset()) -> IndexPool:
    pool = IndexPool()
    for slug, facts, level in pages:
        assert pool.add(slug, PageIndex(facts), level, TERMS, set(excluded)) == len(
            [f for f in facts if f.id not in excluded])
    return pool


def expected(*pages, excluded=frozenset()):
    return sorted((neg, fid, slug) for slug, facts, level in pages for neg, fid in plain(facts, level, TERMS, excluded))


@pytest.mark.parametrize("levels", [(0.8, 0.8), (0.8, 0.6), (0.3, 0.9), (1.0, 0.5)])
def test_the_pool_orders_caps_and_tops_as_the_plain_rule(levels):
    pages = (("a", PAGE_A, levels[0]), ("b", PAGE_B, levels[1]))
    pool = pool_of(*pages)
    want = expected(*pages)
    assert list(pool.ordered()) == want
    assert pool.count == len(PAGE_A) + len(PAGE_B)
    for cap in (0, 1, 2, 3, 5, 50):
        taken: dict[str, int] = {}
        capped = []
        for item in want:
            if taken.get(item[2], 0) < cap:
                taken[item[2]] = taken.get(item[2], 0) + 1
                capped.append(item)
        assert list(pool.capped(cap)) == capped, cap
    for slug, facts, _level in pages:
        mine = [(neg, fid) for neg, fid, s in want if s == slug]
        procedural = {f.id for f in facts if f.section == "procedural"}
        first = [c for c in mine if c[1] in procedural] + [c for c in mine if c[1] not in procedural]
        for n in (0, 1, 2, 3, 4, 20):
            assert pool.top(slug, n) == first[:n]
    assert pool.top("zz", 5) == []


def test_the_pool_leaves_out_excluded_facts_matching_or_not():
    pages = (("a", PAGE_A, 0.7), ("b", PAGE_B, 0.7))
    excluded = frozenset({"a1", "a3", "b0"})
    pool = IndexPool()
    assert pool.add("a", PageIndex(PAGE_A), 0.7, TERMS, {"a1", "a3"}) == len(PAGE_A) - 2
    assert pool.add("b", PageIndex(PAGE_B), 0.7, TERMS, {"b0"}) == len(PAGE_B) - 1
    assert pool.count == len(PAGE_A) + len(PAGE_B) - 3
    assert list(pool.ordered()) == expected(*pages, excluded=excluded)
    assert pool.top("a", 10) == [(neg, fid) for neg, fid, s in expected(*pages, excluded=excluded)
                                 if s == "a" and fid in {"a5", "a4", "a6"}] + \
        [(neg, fid) for neg, fid, s in expected(*pages, excluded=excluded) if s == "a" and fid in {"a0", "a2"}]


def test_a_query_without_terms_gives_every_fact_half_the_level():
    pool = IndexPool()
    pool.add("a", PageIndex(PAGE_A), 0.6, set(), set())
    assert list(pool.ordered()) == [(-0.3, fid, "a") for fid in sorted(f.id for f in PAGE_A)]


def test_scores_tied_across_counts_two_apart_keep_the_plain_order():
    """4 terms at an activation of two ulps: 3 and 2 matched terms give one score, 1 a lower one:
    facts of counts 3 and 2 interleave by id (comparing counts two apart would not see the tie)."""
    level = 1e-323
    terms = {"alpha", "beta", "gamma", "delta"}
    facts = [fact("x1", "alpha beta gamma"), fact("x0", "alpha beta"), fact("x2", "alpha"), fact("x3", "omega")]
    pool = IndexPool()
    pool.add("p", PageIndex(facts), level, terms, set())
    assert [fid for _neg, fid, _slug in pool.ordered()] == ["x0", "x1", "x2", "x3"]
    assert [(neg, fid) for neg, fid, _ in pool.ordered()] == plain(facts, level, terms)


def test_reading_the_best_candidate_sorts_only_the_best_count(monkeypatch):
    """The work the lazy path saves: the first candidate sorts the distinct counts and the facts of
    the highest count, not every matching fact."""
    facts = [fact("m0", "garden river")] + [fact(f"m{i:02d}", "garden") for i in range(1, 40)]
    pool = IndexPool()
    pool.add("p", PageIndex(facts), 0.9, TERMS, set())
    sorted_items = []

    def counting(items, *args, **kwargs):
        items = list(items)
        sorted_items.append(len(items))
        return sorted(items, *args, **kwargs)

    monkeypatch.setattr(recall_index, "sorted", counting, raising=False)
    first = next(pool.ordered())
    assert first == (-0.9, "m0", "p")
    assert sorted_items == [2, 1]
    assert len(list(pool.ordered())) == 40
    assert sorted_items == [2, 1, 2, 1, 39]


# -- recall.py: select's two paths -----------------------------------------------------------------

def build(root, pages: list[Page]) -> Memoire:
    paths = MemoryPaths(root)
    for page in pages:
        page.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in pages}, NOW)
    return Memoire(paths)


def run(memoire: Memoire, query: str, settings: Settings, *, indexed: bool, primed=()):
    events: list[StageEvent] = []
    sel = select(memoire, query, NOW, settings, set(primed), Emitter(events.append), indexed=indexed)
    return sel, events


def test_the_plain_rule_builds_no_index_and_the_indexed_one_only_the_activated_pages(tmp_path):
    pages = [Page(slug="a", name="Alpha", facts=[fact("a1", "garden river"), fact("a2", "coffee")]),
             Page(slug="b", name="Bravo", facts=[fact("b1", "harbour")]),
             Page(slug="c", name="Charlie", facts=[fact("c1", "garden")])]
    memoire = build(tmp_path / "m", pages)
    settings = Settings(fcm_iterations=0)
    sel, _ = run(memoire, "garden", settings, indexed=False)
    assert memoire._index == {}
    assert isinstance(sel.pool, ListPool)
    assert sel.work == 1 + 3  # one query term, three facts scored
    sel2, _ = run(memoire, "garden", settings, indexed=True)
    assert sorted(memoire._index) == ["a", "c"]
    assert isinstance(sel2.pool, IndexPool)
    assert sel2.candidates == sel.candidates and sel2.work == sel.work
    dup = build(tmp_path / "d", [Page(slug="a", name="Alpha", facts=[fact("x", "garden")]),
                                 Page(slug="b", name="Bravo", facts=[fact("x", "garden river")])])
    assert not dup.unique_ids
    sel3, _ = run(dup, "garden", settings, indexed=True)
    assert dup._index == {} and isinstance(sel3.pool, ListPool)
    assert Selection(terms=[]).candidates == []


@pytest.mark.parametrize("indexed", [True, False])
def test_a_page_exactly_at_the_threshold_contributes(tmp_path, indexed):
    pages = [Page(slug="a", name="Alpha", facts=[fact("a1", "garden"), fact("a2", "coffee")]),
             Page(slug="b", name="Bravo", facts=[fact("b1", "garden piano")])]
    memoire = build(tmp_path / "m", pages)
    settings = Settings(fcm_iterations=0, activation_threshold=0.5, facts_per_subject=50)
    sel, _ = run(memoire, "garden piano", settings, indexed=indexed)
    assert sel.activation == {"a": 0.5, "b": 1.0}
    assert [(s.fact_id, s.node, s.score) for s in sel.candidates] == [
        ("b1", "b", 1.0), ("a1", "a", 0.375), ("a2", "a", 0.25)]
    assert sel.work == 2 + 3


@pytest.mark.parametrize("indexed", [True, False])
def test_a_fact_both_future_and_expired_counts_once_as_future(tmp_path, indexed):
    both = fact("f1", "garden", said="2026-04-01", type="prospective", until="2026-03-01")
    late = fact("f2", "garden river", type="prospective", until="2026-03-09")
    ahead = fact("f3", "garden", event="2026-03-11")
    memoire = build(tmp_path / "m", [Page(slug="a", name="Alpha", facts=[both, late, ahead, fact("f4", "garden")])])
    for disabled, future, expired in ((frozenset(), ["f1", "f3"], ["f2"]),
                                      (frozenset({"recall.filter_future"}), [], ["f1", "f2"]),
                                      (frozenset({"recall.filter_expired"}), ["f1", "f3"], []),
                                      (frozenset({"recall.filter_future", "recall.filter_expired"}), [], [])):
        sel, events = run(memoire, "garden", Settings(disabled=disabled, facts_per_subject=50), indexed=indexed)
        got = {e.mechanism: (e.count, e.ids) for e in events if e.mechanism.startswith("recall.filter")}
        assert got == {"recall.filter_future": (len(future), tuple(future)),
                       "recall.filter_expired": (len(expired), tuple(expired))}
        assert sorted(s.fact_id for s in sel.candidates) == sorted({"f1", "f2", "f3", "f4"} - {*future, *expired})
        assert sel.pool.count == 4 - len(future) - len(expired)


@pytest.mark.parametrize("indexed", [True, False])
def test_withheld_facts_are_left_out_also_when_future_and_counted_once(tmp_path, indexed):
    facts = [fact("f1", "garden", privacy="private", said="2026-04-01"), fact("f2", "garden", privacy="confidential"),
             fact("f3", "garden river"), fact("f4", "coffee", privacy="private", type="prospective", until="2026-01-01")]
    memoire = build(tmp_path / "m", [Page(slug="a", name="Alpha", facts=facts)])
    settings = Settings(facts_per_subject=50, recall_budget_tokens=8, fix=Fixes(enforce_privacy=True))
    sel, events = run(memoire, "garden river", settings, indexed=indexed)
    assert [s.fact_id for s in sel.candidates] == ["f3"]
    assert sel.pool.count == 1
    budget = [e for e in events if e.mechanism == "recall.budget"][0]
    assert budget.params["cut"] == 0 and [s.fact_id for s in sel.selected] == ["f3"]
    open_settings = replace(settings, fix=Fixes(enforce_privacy=False))
    sel, events = run(memoire, "garden river", open_settings, indexed=indexed)
    assert [s.fact_id for s in sel.candidates] == ["f3", "f2"]
    budget = [e for e in events if e.mechanism == "recall.budget"][0]
    assert budget.params["cut"] == 1 and [s.fact_id for s in sel.selected] == ["f3"]


@pytest.mark.parametrize("indexed", [True, False])
def test_phase_two_reads_procedural_facts_first_per_subject(tmp_path, indexed):
    pages = [Page(slug="a", name="Alpha", facts=[fact("a1", "garden river"), fact("a2", "garden", section="procedural"),
                                                  fact("a3", "coffee", section="procedural"), fact("a4", "garden")]),
             Page(slug="b", name="Bravo", facts=[fact("b1", "river"), fact("b0", "piano", section="procedural")])]
    memoire = build(tmp_path / "m", pages)
    settings = Settings(facts_per_subject=3, phase=2)
    sel, _ = run(memoire, "garden river", settings, indexed=indexed)
    lines = [(ln.kind, ln.node, ln.fact_ids) for ln in souvenirs(memoire, sel, settings) if ln.kind == "fact"]
    assert lines == [("fact", "a", ("a2",)), ("fact", "a", ("a3",)), ("fact", "a", ("a1",)),
                     ("fact", "b", ("b0",)), ("fact", "b", ("b1",))]


def test_the_list_pool_caps_and_tops_by_its_own_order(tmp_path):
    memoire = build(tmp_path / "m", [Page(slug="a", name="Alpha", facts=[fact("a1"), fact("a2", section="procedural")]),
                                     Page(slug="b", name="Bravo", facts=[fact("b1")])])
    pool = ListPool([Scored("b1", "b", 0.5), Scored("a1", "a", 0.9), Scored("a2", "a", 0.5)], memoire)
    assert pool.count == 3
    assert list(pool.ordered()) == [(-0.9, "a1", "a"), (-0.5, "a2", "a"), (-0.5, "b1", "b")]
    assert list(pool.capped(1)) == [(-0.9, "a1", "a"), (-0.5, "b1", "b")]
    assert list(pool.capped(0)) == []
    assert pool.top("a", 1) == [(-0.5, "a2")] and pool.top("a", 5) == [(-0.5, "a2"), (-0.9, "a1")]


# -- cache.py: a Memoire derived from the previous one -----------------------------------------------

def memory(tmp_path, pages: list[Page]):
    paths = MemoryPaths(tmp_path / "mem")
    for page in pages:
        page.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in pages}, NOW)
    return paths


def fts(m: Memoire):
    return sorted(m.db.execute("SELECT fid, node, texte FROM faits").fetchall())


def test_a_derived_memoire_takes_the_connection_rows_and_untouched_indexes(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact("a1", "garden river"), fact("a2", "coffee")])
    b = Page(slug="b", name="Bravo", facts=[fact("b1", "harbour", key="lives_in", value="Porto"), fact("b2", "piano")])
    paths = memory(tmp_path, [a, b])
    reader = PageReader()
    first = Memoire(paths, reader)
    db = first.db
    rows = dict(first._rowid)
    ia, ib = first.index("a"), first.index("b")
    b.facts[0] = replace(b.facts[0], superseded_by="b3")
    b.facts.append(fact("b3", "violin museum"))
    b.facts.remove(b.facts[1])  # b2 gone
    b.write(paths.fiches)
    c = Page(slug="c", name="Charlie", facts=[fact("c1", "lantern")])
    c.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in (a, b, c)}, NOW)
    second = Memoire(paths, reader, first)
    fresh = Memoire(paths)
    assert second._db is db and first._db is None and first._rowid == {}
    assert second.unique_ids and second.facts == fresh.facts and second.total == 5
    assert second._index["a"] is ia and second._index["b"] is not ib and "c" not in second._index
    assert state(second._index["b"]) == state(fresh.index("b"))
    assert second._rowid["b1"] == rows["b1"] and second._rowid["a1"] == rows["a1"] and "b2" not in second._rowid
    # New rows numbered on from the last (pages walked in set order: b3 and c1 in either order).
    assert {second._rowid["b3"], second._rowid["c1"]} == {max(rows.values()) + 1, max(rows.values()) + 2}
    assert fts(second) == fts(fresh)
    assert db.execute("SELECT count(*) FROM faits").fetchone()[0] == 5
    assert second.nodes_with("charlie") == {"c"} and second.nodes_with("violin") == {"b"}
    assert second.nodes_with("piano") == set()
    # The previous memory, used again, builds its own tables from its own pages.
    assert first.nodes_with("piano") == {"b"} and first.db is not db
    # A text changed in place: its old row goes, the new one comes in.
    a2 = Page.read(paths.fiches / "a.md")
    a2.facts[1] = replace(a2.facts[1], text="coffee market")
    a2.write(paths.fiches)
    third = Memoire(paths, reader, second)
    assert third._db is db and fts(third) == fts(Memoire(paths))
    assert third.nodes_with("market") == {"a"}


def test_a_fact_id_moving_onto_a_second_line_falls_back_to_a_fresh_memoire(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact("x1", "garden")])
    b = Page(slug="b", name="Bravo", facts=[fact("b1", "river")])
    paths = memory(tmp_path, [a, b])
    reader = PageReader()
    first = Memoire(paths, reader)
    db = first.db
    b.facts.append(fact("x1", "violin"))
    b.write(paths.fiches)
    second = Memoire(paths, reader, first)
    fresh = Memoire(paths)
    assert second._db is None and first._db is db  # nothing taken
    assert not second.unique_ids and second.facts == fresh.facts
    assert second.nodes_with("violin") == fresh.nodes_with("violin") == {"b"}
    # From a memory without ids twice (or without tables), nothing is derived either.
    third = Memoire(paths, reader, second)
    assert third._db is None and second._db is not None
    clean = Memoire(paths, reader, Memoire(paths, reader))
    assert clean._db is None


def test_the_cache_hands_the_previous_memoire_over_only_with_a_reader(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact("a1", "garden")])
    paths = memory(tmp_path, [a])
    events: list[StageEvent] = []
    settings = Settings()
    for reader in (PageReader(), None):
        cache = RecallCache(paths, settings, Emitter(events.append), reader)
        m1 = cache.get()
        db = m1.db
        a.facts.append(fact(f"a{len(a.facts) + 1}", "river"))
        a.write(paths.fiches)
        write_graph(paths, {"a": a}, NOW)
        st = paths.aretes.stat()
        os.utime(paths.aretes, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        m2 = cache.get()
        assert m2 is not m1
        if reader is not None:
            assert m2._db is db and m1._db is None
        else:
            assert m2._db is None and m1._db is db
        assert m2.nodes_with("river") == {"a"}


# -- summaries.py: the page text folded only when needed ---------------------------------------------

def test_veto_folds_the_page_only_for_names_or_numbers(monkeypatch):
    calls = []
    real = summaries.fold_joined

    def counting(parts):
        calls.append(1)
        return real(parts)

    monkeypatch.setattr(summaries, "fold_joined", counting)
    page = Page(slug="a", name="Alpha", aliases=["Ally"], facts=[fact("a1", "Lives in Porto since 2019"),
                                                                 fact("a2", "has 3 cats")])
    settings = Settings()
    assert summaries.veto("likes the garden a lot.", page, settings) is None and calls == []
    assert summaries.veto("She met Porto people and Ally.", page, settings) is None and len(calls) == 1
    assert summaries.veto("since 2019 with 3 cats.", page, settings) is None and len(calls) == 2
    assert summaries.veto("She met Porto friends in 2019.", page, settings) is None and len(calls) == 3
    assert summaries.veto("She met Braga friends.", page, settings) == "nom absent de la fiche: Braga"
    assert summaries.veto("has 4 cats, since 2019.", page, settings) == "nombre absent de la fiche: 4"
    assert summaries.veto("She met Porto friends 7 times.", page, settings) == "nombre absent de la fiche: 7"
    assert len(calls) == 6


# -- counts past 256 (no small-int identity), negative caps, slugs equal but not identical ------------

def many_words(n: int) -> list[str]:
    letters = "bcdfghjklmnpqrstvwz"
    return [f"q{letters[i // len(letters)]}{letters[i % len(letters)]}x" for i in range(n)]


def test_caps_and_tops_past_256_and_below_one():
    facts = [fact(f"f{i:03d}", "garden" if i % 2 else "river") for i in range(310)]
    pool = IndexPool()
    pool.add("p", PageIndex(facts), 0.5, TERMS, set())
    want = [(neg, fid, "p") for neg, fid in plain(facts, 0.5, TERMS)]
    assert list(pool.capped(300)) == want[:300]
    assert list(pool.capped(-1)) == [] and list(pool.capped(0)) == []
    assert pool.top("p", 300) == [(neg, fid) for neg, fid, _ in want[:300]]
    assert pool.top("p", 0) == [] and pool.top("p", -1) == []
    assert pool.top("".join(["", "p"]), 2) == [(neg, fid) for neg, fid, _ in want[:2]]  # equal, not the same str
    listed = ListPool([Scored(fid, "p", -neg) for neg, fid, _ in want], None)
    assert list(listed.capped(300)) == want[:300]
    assert list(listed.capped(-1)) == [] and list(listed.capped(0)) == []


def test_facts_matching_more_than_256_terms_are_ranked_by_their_count():
    vocabulary = many_words(300)
    terms = set(vocabulary)
    facts = [fact("c", " ".join(vocabulary)), fact("a", " ".join(vocabulary)), fact("b", " ".join(vocabulary[:280])),
             fact("d", " ".join(vocabulary[:280])), fact("e", "garden")]
    pool = IndexPool()
    pool.add("p", PageIndex(facts), 0.8, terms, set())
    assert [(neg, fid) for neg, fid, _ in pool.ordered()] == plain(facts, 0.8, terms)
    assert [fid for _neg, fid, _ in pool.ordered()] == ["a", "c", "b", "d", "e"]


def test_a_memoire_of_more_than_256_facts_has_unique_ids(tmp_path):
    page = Page(slug="a", name="Alpha", facts=[fact(f"f{i:03d}", "garden") for i in range(300)])
    memoire = build(tmp_path / "m", [page])
    assert memoire.total == 300 and memoire.unique_ids


def test_a_memoire_derived_from_pages_read_afresh_holds_the_new_fact_objects(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact("a1", "garden")])
    early = Page(slug="0early", name="Early", facts=[fact("e1", "river")])
    b = Page(slug="b", name="Bravo", facts=[fact("b1", "river coffee")])
    paths = memory(tmp_path, [a, early, b])
    reader = PageReader()
    first = Memoire(paths, reader)
    assert first.db is not None
    ib = first.index("b")  # "0early" and "a" have no index: the walk goes on past them
    b.facts.append(fact("b2", "piano"))
    b.write(paths.fiches)
    second = Memoire(paths, reader, first)
    assert list(second.pages)[0] == "0early" and "0early" not in second._index and "a" not in second._index
    assert second._index["b"] is not ib and state(second._index["b"]) == state(PageIndex(second.pages["b"].facts))
    third = Memoire(paths, None, second)  # every page a new object, equal to the previous one
    assert all(third.facts[f.id][1] is f for p in third.pages.values() for f in p.facts)
    assert fts(third) == fts(Memoire(paths))


# -- more shapes: fresh facts before and after, smaller edits, other fact types, no query terms ----

def test_deriving_two_fresh_facts_of_each_kind_before_and_after_the_existing_ones():
    facts = [fact("f5", "garden", section="procedural", said="2026-03-05", type="prospective", until="2026-03-15",
                  privacy="private"),
             fact("f6", "river", said="2026-03-06", type="prospective", until="2026-03-16", privacy="private")]
    index = PageIndex(facts)
    before = state(index)
    for ids, days, dues in ((("f1", "f2"), ("2026-03-01", "2026-03-02"), ("2026-03-03", "2026-03-04")),
                            (("f8", "f9"), ("2026-03-08", "2026-03-09"), ("2026-04-08", "2026-04-09"))):
        for section in ("procedural", "episodic"):
            added = [fact(fid, "coffee", section=section, said=day, type="prospective", until=due, privacy="confidential")
                     for fid, day, due in zip(ids, days, dues, strict=True)]
            derived = index.derive([], added)
            assert state(derived) == state(PageIndex([*facts, *added])), (ids, section)
            assert state(index) == before


def test_deriving_an_edit_to_a_smaller_or_larger_text_rebuilds():
    facts = [fact("f1", "river"), fact("f2", "garden")]
    index = PageIndex(facts)
    for text in ("apple", "violin", "river museum", "rive"):
        edited = replace(facts[0], text=text)
        assert state(index.derive([facts[0]], [edited])) == state(PageIndex([edited, facts[1]])), text
    dated = replace(facts[0], said="2026-01-01")
    assert state(index.derive([facts[0]], [dated])) == state(PageIndex([dated, facts[1]]))


def test_only_prospective_facts_expire_whatever_the_other_types_are_called():
    from lsrep.systems.exia_seed.recall import is_expired
    facts = [fact("a", type="rappel", until="2026-03-01"), fact("b", type="fait", until="2026-03-01"),
             fact("c", type="prospective", until="2026-03-01"), fact("d", type="aaa", until="2026-03-01"),
             fact("e", type="prospective"), fact("f", type="prospective", until="")]
    index = PageIndex(facts)
    assert index.expired("2026-03-10") == ["c"] == [f.id for f in facts if is_expired(f, "2026-03-10")]
    assert index.due == [("2026-03-01", "c")]


@pytest.mark.parametrize("indexed", [True, False])
def test_a_query_without_terms_scores_a_primed_page_at_half_its_level(tmp_path, indexed):
    memoire = build(tmp_path / "m", [Page(slug="a", name="Alpha", facts=[fact("a2", "garden"), fact("a1", "river")]),
                                     Page(slug="b", name="Bravo", facts=[fact("b1", "coffee")])])
    settings = Settings(fcm_iterations=0, facts_per_subject=50)
    sel, _ = run(memoire, "and the?", settings, indexed=indexed, primed={"a"})
    assert sel.terms == [] and sel.activation == {"a": 0.3}
    assert [(s.fact_id, s.node, s.score) for s in sel.candidates] == [("a1", "a", 0.15), ("a2", "a", 0.15)]


def test_the_list_pool_tops_a_slug_equal_but_not_identical(tmp_path):
    memoire = build(tmp_path / "m", [Page(slug="ab", name="Alpha", facts=[fact("a1"), fact("a2", section="procedural")])])
    pool = ListPool([Scored("a1", "ab", 0.9), Scored("a2", "ab", 0.5)], memoire)
    assert pool.top("".join(["a", "b"]), 5) == [(-0.5, "a2"), (-0.9, "a1")]


# -- the derived Memoire's work: which facts lists it walks, and its rows ----------------------------

class Walked(list):
    """A page's facts that count how many times they are walked (iterated)."""

    walks = 0

    def __iter__(self):
        self.walks += 1
        return super().__iter__()


class StubReader:
    def __init__(self, pages: dict[str, Page]) -> None:
        self.pages = pages

    def load(self, fiches) -> dict[str, Page]:
        return dict(self.pages)


def test_a_derivation_walks_only_the_changed_pages_facts_once_per_side(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    paths.fiches.mkdir(parents=True)
    pages = {f"p{i:02d}": Page(slug=f"p{i:02d}", name=f"Name{i:02d}",
                               facts=Walked([fact(f"f{i:02d}a", "garden"), fact(f"f{i:02d}b", "river")]))
             for i in range(60)}
    write_graph(paths, pages, NOW)
    first = Memoire(paths, StubReader(pages))
    assert first.db is not None
    grown_from = pages["p07"]
    grown = Page(slug="p07", name="Name07", facts=Walked([*grown_from.facts, fact("new1", "violin")]))
    after = {**pages, "p07": grown}
    for p in [*pages.values(), grown]:
        p.facts.walks = 0
    second = Memoire(paths, StubReader(after), first)
    assert second._db is not None and first._db is None
    assert {s: p.facts.walks for s, p in pages.items() if p.facts.walks} == {"p07": 1}  # the old list: its ids
    assert grown.facts.walks == 2  # its ids, then the facts that came in
    assert second.facts == Memoire(paths, StubReader(after)).facts and second.nodes_with("violin") == {"p07"}
    shrunk_from = after["p33"]
    shrunk = Page(slug="p33", name="Name33", facts=Walked([shrunk_from.facts[1]]))
    later = {**after, "p33": shrunk}
    for p in [*later.values(), shrunk_from]:
        p.facts.walks = 0
    third = Memoire(paths, StubReader(later), second)
    assert shrunk_from.facts.walks == 2 and shrunk.facts.walks == 1
    assert {s: p.facts.walks for s, p in later.items() if s != "p33" and p.facts.walks} == {}
    assert third.facts == Memoire(paths, StubReader(later)).facts and third.nodes_with("river") == set(later)
    assert "f33a" not in third.facts and third.nodes_with("garden") == set(later) - {"p33"}


def test_rows_derived_from_an_empty_memory_are_numbered_as_a_fresh_build_numbers_them(tmp_path):
    paths = memory(tmp_path, [Page(slug="a", name="Alpha")])
    reader = PageReader()
    first = Memoire(paths, reader)
    assert first.db is not None and first._rowid == {}
    page = Page(slug="a", name="Alpha", facts=[fact("a1", "garden"), fact("a2", "river"), fact("a3", "coffee")])
    page.write(paths.fiches)
    second = Memoire(paths, reader, first)
    fresh = Memoire(paths)
    assert fresh.db is not None
    assert second._db is not None and second._rowid == fresh._rowid == {"a1": 1, "a2": 2, "a3": 3}
    assert fts(second) == fts(fresh)


def test_rows_after_an_odd_last_row_and_an_edit_to_a_smaller_text(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact(f"a{i}", w) for i, w in enumerate(["garden", "river", "coffee",
                                                                                      "piano", "violin"])])
    paths = memory(tmp_path, [a])
    reader = PageReader()
    first = Memoire(paths, reader)
    db = first.db
    assert max(first._rowid.values()) == 5
    a.facts[1] = replace(a.facts[1], text="apple")  # a smaller text: its row replaced
    a.facts.append(fact("a9", "museum"))
    a.write(paths.fiches)
    second = Memoire(paths, reader, first)
    assert second._db is db and fts(second) == fts(Memoire(paths))
    assert sorted(second._rowid.values()) == [1, 3, 4, 5, 6, 7]
    assert second.nodes_with("apple") == {"a"} and second.nodes_with("river") == set()


# -- randomized: accents, other types and sections, ties, and deletions through derived memories ----

ACCENTED = ["café", "cafe", "crème", "creme", "Zoë", "garden", "river", "piano", "noël", "harbour"]


def random_accented_fact(rng, fid: str) -> Fact:
    return fact(fid, " ".join(rng.sample(ACCENTED, rng.randint(1, 3))),
                section=rng.choice(["episodic", "procedural", "autre", "semantic"]),
                said=rng.choice([None, "2026-03-01", "2026-03-10", "2026-03-11"]),
                event=rng.choice([None, None, "2026-03-09", "2026-03-12"]),
                until=rng.choice([None, "2026-03-05", "2026-03-10", "2026-03-20"]),
                type=rng.choice(["fait", "prospective", "rappel"]),
                privacy=rng.choice(["normal", "normal", "private", "confidential"]),
                superseded_by=rng.choice([None, None, "fz"]))


@pytest.mark.parametrize("seed", range(8))
def test_derived_memories_recall_as_fresh_ones_read_by_the_plain_rule(tmp_path, seed):
    import random
    rng = random.Random(seed)
    paths = MemoryPaths(tmp_path / "mem")
    pages = {s: Page(slug=s, name=n, facts=[random_accented_fact(rng, f"{s}{i:02d}") for i in range(rng.randint(0, 8))])
             for s, n in (("a", "Alpha"), ("b", "Bravo"), ("c", "Crème"))}
    reader = PageReader()
    previous = None
    n = 100
    for _step in range(5):
        for page in pages.values():
            roll = rng.random()
            if roll < 0.3 and page.facts:  # a deletion
                del page.facts[rng.randrange(len(page.facts))]
            elif roll < 0.5 and page.facts:  # a supersession (an unindexed field)
                i = rng.randrange(len(page.facts))
                page.facts[i] = replace(page.facts[i], superseded_by=f"s{n}")
            elif roll < 0.6 and page.facts:  # an edit
                i = rng.randrange(len(page.facts))
                page.facts[i] = replace(page.facts[i], text=" ".join(rng.sample(ACCENTED, 2)))
            for _ in range(rng.randint(0, 3)):
                n += 1
                page.facts.append(random_accented_fact(rng, f"n{rng.randint(0, 999):03d}{n}"))
            page.write(paths.fiches)
        write_graph(paths, pages, NOW)
        derived = Memoire(paths, reader, previous)
        fresh = Memoire(paths)
        for slug in rng.sample(sorted(derived.pages), 2):
            derived.index(slug)
        for _ in range(4):
            query = " ".join(rng.sample(ACCENTED + ["Alpha", "Bravo", "Creme"], rng.randint(0, 3)))
            settings = Settings(facts_per_subject=rng.choice([1, 2, 50]), recall_budget_tokens=rng.choice([8, 1200]),
                                activation_threshold=rng.choice([0.0, 0.2]), phase=2,
                                fix=Fixes(enforce_privacy=rng.random() < 0.5))
            primed = set(rng.sample(sorted(pages), rng.randint(0, 2)))
            fast, fast_events = run(derived, query, settings, indexed=True, primed=primed)
            plain_sel, plain_events = run(fresh, query, settings, indexed=False, primed=primed)
            assert fast.candidates == plain_sel.candidates and fast_events == plain_events, (seed, query)
            assert (fast.selected, fast.work, fast.pool.count) == (plain_sel.selected, plain_sel.work, plain_sel.pool.count)
            assert souvenirs(derived, fast, settings) == souvenirs(fresh, plain_sel, settings)
        previous = derived


@pytest.mark.parametrize("level", [-0.5, 0.0, -1e-323])
def test_the_pool_keeps_the_plain_order_at_any_level(level):
    """`IndexPool.add` takes any level: at zero every score ties, below zero more terms score lower."""
    facts = [fact("x1", "garden river"), fact("x0", "garden"), fact("x2", "river"), fact("x3", "piano"),
             fact("x4", "garden river", section="procedural")]
    pool = IndexPool()
    pool.add("p", PageIndex(facts), level, TERMS, set())
    assert [(neg, fid) for neg, fid, _ in pool.ordered()] == plain(facts, level, TERMS)
    procedural = [c for c in plain(facts, level, TERMS) if c[1] == "x4"]
    assert pool.top("p", 2) == procedural + [c for c in plain(facts, level, TERMS) if c[1] != "x4"][:1]


@pytest.mark.parametrize("indexed", [True, False])
def test_the_selection_carries_the_candidates_scores_and_the_cut_counts_the_rest(tmp_path, indexed):
    facts = [fact(f"a{i}", "garden river" if i < 2 else "garden") for i in range(6)]
    memoire = build(tmp_path / "m", [Page(slug="a", name="Alpha", facts=facts)])
    settings = Settings(facts_per_subject=50, recall_budget_tokens=12, fcm_iterations=0)
    sel, events = run(memoire, "garden river", settings, indexed=indexed)
    assert [(s.fact_id, s.score) for s in sel.selected] == [(s.fact_id, s.score) for s in sel.candidates[:2]]
    assert [s.score for s in sel.selected] == [1.0, 1.0]
    budget = [e for e in events if e.mechanism == "recall.budget"][0]
    assert budget.params == {"estimated_tokens": 12, "budget": 12, "cut": 4}
    assert sel.subjects == ["a"]


def test_tables_built_on_one_thread_answer_on_another_also_after_a_derivation(tmp_path):
    """The FTS5 tables are built on first use, and a derived memory takes the previous one's: the
    recall cache is shared, so a tool call on another thread reads tables another thread built."""
    from concurrent.futures import ThreadPoolExecutor
    a = Page(slug="a", name="Alpha", facts=[fact("a1", "garden river")])
    paths = memory(tmp_path, [a])
    reader = PageReader()
    first = Memoire(paths, reader)
    assert first.nodes_with("garden") == {"a"}  # built here, on the main thread
    with ThreadPoolExecutor(max_workers=1) as pool_:
        assert pool_.submit(first.nodes_with, "river").result() == {"a"}
        assert [fid for fid, _ in pool_.submit(first.bm25, ["garden"], 5).result()] == ["a1"]
    a.facts.append(fact("a2", "violin"))
    a.write(paths.fiches)
    second = Memoire(paths, reader, first)
    with ThreadPoolExecutor(max_workers=1) as pool_:
        assert pool_.submit(second.nodes_with, "violin").result() == {"a"}
