"""EXIA's explicit tools and the cache they rank with, on hand-built pages: memoire_chercher's BM25
pool, limit, concept credit, filters, tie order, trails and event; memoire_lire's sections, trail,
newest-neighbour fallback, date filters and event; Memoire's edge weights, bm25, neighbours_of,
resolve and nodes_with; and admission to a page (pages.py add_fact's source-level dedupe,
supersede, Catalogue.resolve_or_create). Written to kill the mutants of `scripts/mutation/exia-tools.toml`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from lsrep.systems.exia_seed import Fixes, Settings, StageEvent
from lsrep.systems.exia_seed.cache import Memoire, _fts_or
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import write_graph
from lsrep.systems.exia_seed.pages import Catalogue, Fact, Page
from lsrep.systems.exia_seed.tools import _day_number, fact_view, read, search
from test_exia_recall_exact import NOW, build, fact  # the same pages, facts and clock


def fixed(**flags) -> Settings:
    return replace(Settings(), fix=Fixes(**flags))


def chercher(memoire, settings=None, **args):
    events: list[StageEvent] = []
    out = search(memoire, args, NOW, settings or Settings(), Emitter(events.append))
    return out, events


def lire(memoire, settings=None, **args):
    events: list[StageEvent] = []
    out = read(memoire, args, NOW, settings or Settings(), Emitter(events.append))
    return out, events


# ----------------------------------------------------------------------------- cache.py


def test_bm25_returns_positive_scores_best_first_ties_by_id_and_honours_the_limit(tmp_path):
    memoire = build(tmp_path, [Page(slug="p", name="Pets", facts=[
        fact("f3", "Rex likes the park"), fact("f1", "Rex likes the park"),
        fact("f2", "park park park today"), fact("f4", "Nothing relevant here")])])
    assert memoire.bm25([], 10) == []
    rows = memoire.bm25(["park"], 10)
    assert [fid for fid, _ in rows] == ["f2", "f1", "f3"]
    assert all(score > 0 for _, score in rows)
    assert rows[0][1] > rows[1][1] and rows[1][1] == rows[2][1]
    raw = dict(memoire.db.execute("SELECT fid, bm25(faits) FROM faits WHERE faits MATCH '\"park\"'").fetchall())
    assert rows == [(fid, -raw[fid]) for fid in ("f2", "f1", "f3")]
    assert memoire.bm25(["park"], 1) == rows[:1]
    assert {fid for fid, _ in memoire.bm25(["nothing", "today"], 10)} == {"f2", "f4"}  # any of the terms
    assert memoire.bm25(["absent"], 10) == []


def test_fts_or_quotes_each_term_and_drops_inner_quotes():
    assert _fts_or(["a"]) == '"a"'
    assert _fts_or(["a", 'b"c']) == '"a" OR "bc"'


def test_edge_weights_are_proof_counts_over_the_heaviest_and_neighbours_sort_by_weight_then_slug(tmp_path):
    # hub's facts name a (twice), b, c and d once each: weights 1, 0.5, 0.5, 0.5.
    hub = Page(slug="hub", name="Hub", facts=[fact("h1", "Met Alpha today"), fact("h2", "Alpha again"),
                                              fact("h3", "Saw Delta"), fact("h4", "Saw Bravo"),
                                              fact("h5", "Saw Charlie")])
    pages = [hub] + [Page(slug=s, name=s.capitalize(), facts=[fact(s + "1", "quiet")])
                     for s in ("alpha", "bravo", "charlie", "delta")]
    memoire = build(tmp_path, pages)
    assert memoire.neighbours_of("hub") == [("alpha", 1.0), ("bravo", 0.5), ("charlie", 0.5), ("delta", 0.5)]
    assert memoire.neighbours_of("alpha") == [("hub", 1.0)]
    assert memoire.neighbours_of("missing") == []
    assert memoire.edges[("alpha", "hub")] == ["h1", "h2"]


def test_neighbour_ties_sort_by_slug_whatever_order_the_edge_file_lists_them(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    pages = [Page(slug=s, name=s.capitalize(), facts=[fact(s + "1", "quiet")]) for s in ("hub", "alpha", "zulu", "mike")]
    for page in pages:
        page.write(paths.fiches)
    edges = [{"a": "hub", "b": "zulu", "preuves": ["x"]}, {"a": "alpha", "b": "hub", "preuves": ["y"]},
             {"a": "hub", "b": "mike", "preuves": ["z", "w"]}, {"a": "alpha", "b": "mike", "preuves": ["v"]}]
    paths.aretes.parent.mkdir(parents=True, exist_ok=True)
    paths.aretes.write_text(json.dumps({"generation": 1, "aretes": edges}), encoding="utf-8")
    memoire = Memoire(paths)
    assert memoire.neighbours_of("hub") == [("mike", 1.0), ("alpha", 0.5), ("zulu", 0.5)]
    assert memoire.neighbours_of("mike") == [("hub", 1.0), ("alpha", 0.5)]


def test_edges_to_a_page_that_is_gone_are_dropped(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    a = Page(slug="alpha", name="Alpha", facts=[fact("a1", "Alpha met Bravo"), fact("a2", "Alpha met Bravo twice")])
    b = Page(slug="bravo", name="Bravo", facts=[fact("b1", "quiet")])
    c = Page(slug="charlie", name="Charlie", facts=[fact("c1", "Charlie met Alpha")])
    for page in (a, b, c):
        page.write(paths.fiches)
    write_graph(paths, {p.slug: p for p in (a, b, c)}, NOW)
    (paths.fiches / "bravo.md").unlink()
    memoire = Memoire(paths)
    assert set(memoire.edges) == {("alpha", "charlie")}
    assert memoire.neighbours_of("alpha") == [("charlie", 1.0)]  # the gone edge (2 proofs) is not the heaviest


def test_no_edges_at_all(tmp_path):
    memoire = build(tmp_path, [Page(slug="solo", name="Solo", facts=[fact("s1", "alone")])])
    assert memoire.edges == {} and memoire.neighbours_of("solo") == []


def test_resolve_by_slug_name_alias_and_close_name_with_the_075_cutoff(tmp_path):
    memoire = build(tmp_path, [Page(slug="rex", name="Rex the Dog", aliases=["Doggo"], facts=[fact("r1", "x")]),
                               Page(slug="garden", name="Garden", facts=[fact("g1", "y")]),
                               Page(slug="twin", name="Garden", facts=[fact("t1", "z")])])
    assert memoire.resolve("rex") == "rex"
    assert memoire.resolve("REX THE  DOG") == "rex"
    assert memoire.resolve("doggo") == "rex"
    assert memoire.resolve("Garden") == "garden"  # the first page to claim a name keeps it
    assert memoire.resolve("Gardem") == "garden"  # ratio 0.83 >= 0.75
    assert memoire.resolve("Gxrdxn") is None  # ratio 0.67 < 0.75
    assert memoire.resolve("") is None
    assert memoire.resolve("zzzz") is None


def test_nodes_with_finds_pages_by_fact_text_and_by_name(tmp_path):
    memoire = build(tmp_path, [Page(slug="rex", name="Rex", aliases=["Doggo"], facts=[fact("r1", "loves parks")]),
                               Page(slug="tom", name="Tom", facts=[fact("t1", "walks Doggo daily")])])
    assert memoire.nodes_with("doggo") == {"rex", "tom"}
    assert memoire.nodes_with("parks") == {"rex"}
    assert memoire.nodes_with("nothing") == set()


# ----------------------------------------------------------------------------- tools.py search


def pool(tmp_path, n: int = 6) -> Memoire:
    facts = [fact(f"f{i}", "park " * (n - i) + "filler words here") for i in range(n)]
    return build(tmp_path, [Page(slug="p", name="Pets", facts=facts)])


def test_search_limit_defaults_caps_at_the_pool_and_is_at_least_one(tmp_path):
    memoire = pool(tmp_path)
    ids = [f"f{i}" for i in range(6)]
    assert [v["id"] for v in chercher(memoire, requete="park")[0]["faits"]] == ids
    assert [v["id"] for v in chercher(memoire, requete="park", limite=2)[0]["faits"]] == ids[:2]
    assert [v["id"] for v in chercher(memoire, requete="park", limite=1)[0]["faits"]] == ids[:1]
    assert [v["id"] for v in chercher(memoire, requete="park", limite=0)[0]["faits"]] == ids  # 0: the default
    assert [v["id"] for v in chercher(memoire, requete="park", limite=-3)[0]["faits"]] == ids[:1]
    small = replace(Settings(), search_limit=4)
    assert [v["id"] for v in chercher(memoire, small, requete="park")[0]["faits"]] == ids[:4]
    assert [v["id"] for v in chercher(memoire, small, requete="park", limite=5)[0]["faits"]] == ids[:5]
    capped = replace(Settings(), search_pool=3)
    assert [v["id"] for v in chercher(memoire, capped, requete="park", limite=5)[0]["faits"]] == ids[:3]
    assert [v["id"] for v in chercher(memoire, capped, requete="park")[0]["faits"]] == ids[:3]


def test_search_scores_are_the_bm25_scores_rounded_and_ties_go_to_the_smaller_id(tmp_path):
    memoire = build(tmp_path, [Page(slug="p", name="Pets", facts=[
        fact("fb", "Rex likes the park"), fact("fa", "Rex likes the park"), fact("fc", "park park park")])])
    out, _ = chercher(memoire, requete="park")
    bm = dict(memoire.bm25(["park"], 50))
    assert [v["id"] for v in out["faits"]] == ["fc", "fa", "fb"]
    assert [v["score"] for v in out["faits"]] == [round(bm[f], 4) for f in ("fc", "fa", "fb")]
    assert out["faits"][1] == {"id": "fa", "noeud": "Pets", "section": "episodic", "fait": "Rex likes the park",
                               "date": "2026-03-01", "refs": ["brut:b1:fa"], "type": "fait",
                               "score": round(bm["fa"], 4)}


def test_concept_credit_adds_to_matching_facts_only_and_reaches_unmatched_ones(tmp_path):
    filler = [fact(f"z{i}", f"unrelated note {i}") for i in range(8)]
    memoire = build(tmp_path, [Page(slug="g", name="Garden", concepts=["gardening", "fashion"], facts=[
        fact("g1", "Tomatoes need sun", concepts=["gardening"]),
        fact("g2", "Gardening on Sundays", concepts=["gardening"]),
        fact("g3", "Gardening tools broke"),
        fact("g4", "Bought a hat", concepts=["fashion"]), *filler])])
    out, events = chercher(memoire, requete="gardening tips")
    bm = dict(memoire.bm25(["gardening", "tips"], 50))
    scores = {v["id"]: v["score"] for v in out["faits"]}
    assert scores == {"g1": 1.0, "g2": round(bm["g2"] + 1.0, 4), "g3": round(bm["g3"], 4)}
    assert bm["g3"] > 1.0 and [v["id"] for v in out["faits"]] == ["g2", "g3", "g1"]
    assert events[-1].params["concepts"] == ["gardening"]
    out, _ = chercher(memoire, replace(Settings(), concept_credit=2.5), requete="gardening tips")
    assert {v["id"]: v["score"] for v in out["faits"]}["g1"] == 2.5
    out, events = chercher(memoire, requete="tomatoes")
    assert [v["id"] for v in out["faits"]] == ["g1"] and events[-1].params["concepts"] == []


def test_search_filters_future_first_then_expired_when_fixed_then_private_when_fixed(tmp_path):
    memoire = build(tmp_path, [Page(slug="t", name="Trips", facts=[
        fact("a", "trip to Rome", said="2026-03-11"),  # future by utterance
        fact("b", "trip to Oslo", event="2026-03-12"),  # future by event
        fact("c", "trip to Nice", type="prospective", until="2026-03-09"),  # expired
        fact("d", "trip to Bern", type="prospective", until="2026-03-09", said="2026-03-11"),  # future and expired
        fact("e", "trip to Lyon", privacy="private"),
        fact("f", "trip to Pisa", said="2026-03-10", type="prospective", until="2026-03-10")])])
    out, events = chercher(memoire, requete="trip")
    assert sorted(v["id"] for v in out["faits"]) == ["c", "e", "f"]
    ev = events[-1]
    assert ev.params == {"filtered": {"future": 3, "expired": 0, "privacy": 0}, "concepts": [],
                         "expired_returned": 1}
    out, events = chercher(memoire, fixed(search_expiry_filter=True), requete="trip")
    assert sorted(v["id"] for v in out["faits"]) == ["e", "f"]
    assert events[-1].params["filtered"] == {"future": 3, "expired": 1, "privacy": 0}
    assert events[-1].params["expired_returned"] == 0
    out, events = chercher(memoire, fixed(search_expiry_filter=True, enforce_privacy=True), requete="trip")
    assert [v["id"] for v in out["faits"]] == ["f"]
    assert events[-1].params["filtered"] == {"future": 3, "expired": 1, "privacy": 1}
    out, events = chercher(memoire, fixed(enforce_privacy=True), requete="trip")
    assert sorted(v["id"] for v in out["faits"]) == ["c", "f"]
    assert events[-1].params["filtered"] == {"future": 3, "expired": 0, "privacy": 1}


def test_search_trails_name_the_three_heaviest_neighbours_of_each_chosen_node_sorted(tmp_path):
    hub = Page(slug="hub", name="Hub", facts=[fact("h1", "Hub met Alpha at the lake"), fact("h2", "Alpha again"),
                                              fact("h3", "Saw Delta"), fact("h4", "Saw Bravo"),
                                              fact("h5", "Saw Charlie")])
    others = [Page(slug=s, name=s.capitalize(), facts=[fact(s + "1", f"{s} quiet")])
              for s in ("alpha", "bravo", "charlie", "delta")]
    others[0].facts.append(fact("alpha2", "lake swim"))
    memoire = build(tmp_path, [hub, *others])
    out, events = chercher(memoire, requete="lake")
    assert out["pistes"] == [{"noeud": "Alpha", "voisins": ["Hub"]},
                             {"noeud": "Hub", "voisins": ["Alpha", "Bravo", "Charlie"]}]
    ev = events[-1]
    assert (ev.mechanism, ev.stage, ev.count) == ("tool.search", "output", 2)
    assert set(ev.ids) == {"h1", "alpha2"} and set(ev.refs) == {"brut:b1:h1", "brut:b1:alpha2"}


def test_search_with_nothing_found_emits_executed_with_zero(tmp_path):
    memoire = pool(tmp_path)
    out, events = chercher(memoire, requete="volcano")
    assert out == {"faits": [], "pistes": []}
    assert [(e.mechanism, e.stage, e.count, e.ids) for e in events] == [("tool.search", "executed", 0, ())]
    out, events = chercher(memoire, requete="")
    assert out == {"faits": [], "pistes": []} and events[-1].stage == "executed"


def test_fact_view_marks_superseded_facts_and_omits_a_missing_score(tmp_path):
    old = fact("o1", "lives in Paris", superseded_by="n1", event="2026-02-01")
    memoire = build(tmp_path, [Page(slug="u", name="User", facts=[old, fact("n1", "lives in Rome")])])
    view = fact_view(memoire, old)
    assert view == {"id": "o1", "noeud": "User", "section": "episodic", "fait": "lives in Paris",
                    "date": "2026-02-01", "refs": ["brut:b1:o1"], "type": "fait", "remplace_par": "n1"}
    assert fact_view(memoire, old, 0.0)["score"] == 0.0
    assert fact_view(memoire, old, 1.23456)["score"] == 1.2346
    assert "remplace_par" not in fact_view(memoire, memoire.facts["n1"][1])


def test_day_number_reads_the_shown_date_or_zero():
    assert _day_number(fact("a", "x", said="2026-03-01")) == 20260301
    assert _day_number(fact("a", "x", said="2026-03-01", event="2025-01-02")) == 20250102
    assert _day_number(fact("a", "x", said=None)) == 0


# ----------------------------------------------------------------------------- tools.py read


def read_world(tmp_path) -> Memoire:
    rex = Page(slug="rex", name="Rex", facts=[
        fact("r1", "Rex walks with Tom", section="semantic", said="2026-03-02"),
        fact("r2", "Rex will see the vet", said="2026-03-20"),  # future
        fact("r3", "Rex is shy", privacy="private", said="2026-03-03"),
        fact("r4", "Rex met Ann", said="2026-03-04"),
        fact("r5", "Rex saw Bob", said="2026-03-04"),
        fact("r6", "Rex saw Cid", said="2026-03-04")])
    tom = Page(slug="tom", name="Tom", facts=[
        fact("t1", "Tom plays chess", said="2026-03-05"),
        fact("t2", "Tom moves soon", said="2026-03-15"),  # future, newest
        fact("t3", "Tom cooks", said="2026-03-01"),
        fact("t4", "Tom has a secret", privacy="confidential", said="2026-03-09"),
        fact("t5", "Tom reads", said=None),
        fact("t6", "Tom feeds Rex", said="2026-03-02")])
    others = [Page(slug=s, name=s.capitalize(), facts=[fact(s + "1", f"{s} one", said="2026-03-06"),
                                                       fact(s + "2", f"{s} two", said="2026-03-07")])
              for s in ("ann", "bob", "cid")]
    return build(tmp_path, [rex, tom, *others])


def test_read_sections_drop_the_future_and_filter_by_folded_section_name(tmp_path):
    memoire = read_world(tmp_path)
    out, events = lire(memoire, sujet="Rex")
    assert list(out["sections"]) == ["semantic", "episodic"]
    assert [v["id"] for v in out["sections"]["episodic"]] == ["r3", "r4", "r5", "r6"]
    assert out["sujet"] == "Rex" and out["repli"] == []
    out, _ = lire(memoire, sujet="Rex", section="SEMANTIC ")
    assert list(out["sections"]) == ["semantic"]
    out, _ = lire(memoire, fixed(enforce_privacy=True), sujet="rex", section="episodic")
    assert list(out["sections"]) == ["episodic"]  # "semantic" sorts after it and is still left out
    assert [v["id"] for v in out["sections"]["episodic"]] == ["r4", "r5", "r6"]


def test_read_trail_takes_three_neighbours_proofs_first_then_newest_then_id_and_keeps_the_future(tmp_path):
    memoire = read_world(tmp_path)
    assert memoire.neighbours_of("rex") == [("tom", 1.0), ("ann", 0.5), ("bob", 0.5), ("cid", 0.5)]
    out, events = lire(memoire, sujet="Rex")
    assert [t["noeud"] for t in out["pistes"]] == ["Tom", "Ann", "Bob"]
    # Tom's facts: t6 proves the edge (r1, on Rex's page, too); then newest first, the future one included.
    assert [v["id"] for v in out["pistes"][0]["faits"]] == ["t6", "t2", "t4"]
    assert [v["id"] for v in out["pistes"][1]["faits"]] == ["ann2", "ann1"]
    ev = events[-1]
    assert (ev.mechanism, ev.stage, ev.reason) == ("tool.read", "output", "resolved")
    assert ev.params == {"sections": 5, "trail": 7, "fallback": 0, "future_in_trail_or_fallback": 1}
    assert ev.count == 12 and ev.ids[:5] == ("r1", "r3", "r4", "r5", "r6")
    out, events = lire(memoire, fixed(trail_date_filter=True, enforce_privacy=True), sujet="Rex")
    assert [v["id"] for v in out["pistes"][0]["faits"]] == ["t6", "t1", "t3"]
    assert events[-1].params["future_in_trail_or_fallback"] == 0
    two = replace(Settings(), trail_facts_per_neighbour=2)
    out, _ = lire(memoire, two, sujet="Rex")
    assert [len(t["faits"]) for t in out["pistes"]] == [2, 2, 2]


def test_read_trail_puts_the_edge_proofs_first(tmp_path):
    a = Page(slug="alpha", name="Alpha", facts=[fact("a1", "quiet", said="2026-03-01")])
    b = Page(slug="bravo", name="Bravo", facts=[fact("b9", "newest", said="2026-03-09"),
                                                fact("b1", "Bravo called Alpha", said="2026-03-01")])
    memoire = build(tmp_path, [a, b])
    out, _ = lire(memoire, sujet="alpha")
    assert [v["id"] for v in out["pistes"][0]["faits"]] == ["b1", "b9"]


def test_read_fallback_when_no_section_survives_is_the_newest_neighbour_facts(tmp_path):
    lone = Page(slug="lone", name="Lone", facts=[fact("l1", "Lone waits for Tom", said="2026-03-30")])
    tom = Page(slug="tom", name="Tom", facts=[
        fact("t1", "a", said="2026-03-05"), fact("t2", "b", said="2026-03-15"),
        fact("t3", "c", said="2026-03-01"), fact("t0", "d", said="2026-03-05"),
        fact("t5", "e", said=None), fact("t6", "f", said="2026-03-02"), fact("t7", "g", said="2026-03-03")])
    memoire = build(tmp_path, [lone, tom])
    out, events = lire(memoire, sujet="Lone")
    assert out["sections"] == {}
    assert [v["id"] for v in out["repli"]] == ["t2", "t0", "t1", "t7", "t6"]
    assert events[-1].params == {"sections": 0, "trail": 3, "fallback": 5, "future_in_trail_or_fallback": 2}
    out, events = lire(memoire, fixed(trail_date_filter=True), sujet="Lone")
    assert [v["id"] for v in out["repli"]] == ["t0", "t1", "t7", "t6", "t3"]
    assert events[-1].params["future_in_trail_or_fallback"] == 0
    out, _ = lire(memoire, replace(Settings(), fallback_facts=2), sujet="Lone")
    assert [v["id"] for v in out["repli"]] == ["t2", "t0"]


def test_read_of_an_unknown_subject_falls_back_to_pages_naming_its_words(tmp_path):
    memoire = read_world(tmp_path)
    out, events = lire(memoire, sujet="chess club")
    assert out["error"] == "sujet introuvable" and out["sujet"] == "chess club"
    assert [v["id"] for v in out["repli"]] == ["t2", "t4", "t1", "t6", "t3"]
    ev = events[-1]
    assert (ev.stage, ev.reason, ev.count) == ("output", "unresolved", 5)
    assert ev.params == {"sections": 0, "trail": 0, "fallback": 5, "future_in_trail_or_fallback": 1}
    out, events = lire(memoire, sujet="volcano")
    assert out == {"error": "sujet introuvable", "sujet": "volcano", "repli": []}
    assert (events[-1].stage, events[-1].count) == ("executed", 0)
    out, events = lire(memoire, fixed(trail_date_filter=True, enforce_privacy=True), sujet="chess club")
    assert [v["id"] for v in out["repli"]] == ["t1", "t6", "t3", "t5"]


def test_read_of_a_section_that_is_empty_emits_executed(tmp_path):
    memoire = build(tmp_path, [Page(slug="solo", name="Solo", facts=[fact("s1", "x", said="2026-03-20")])])
    out, events = lire(memoire, sujet="solo")
    assert out["sections"] == {} and out["repli"] == [] and out["pistes"] == []
    assert (events[-1].stage, events[-1].count, events[-1].reason) == ("executed", 0, "resolved")
    assert "error" not in out


def test_search_ties_go_to_the_smaller_id_whatever_order_the_scores_arrive_in(tmp_path):
    # Concept-only facts all score the credit and arrive in page order (zb before za); BM25's ties
    # already arrive by id, so only these tell the sort's id key from arrival order.
    memoire = build(tmp_path, [Page(slug="g", name="Garden", concepts=["gardening"], facts=[
        fact("zb", "Tomatoes need sun", concepts=["gardening"]),
        fact("za", "Roses need rain", concepts=["gardening"]),
        fact("zc", "Basil needs warmth", concepts=["gardening"])])])
    out, events = chercher(memoire, requete="gardening")
    assert [(v["id"], v["score"]) for v in out["faits"]] == [("za", 1.0), ("zb", 1.0), ("zc", 1.0)]
    assert events[-1].ids == ("za", "zb", "zc")


# ----------------------------------------------------------------------------- pages.py


def test_add_fact_drops_the_same_text_with_the_same_refs_in_any_order_and_unions_concepts():
    page = Page(slug="p", name="P", concepts=["walks"])
    first = Fact(id="a", text="Rex runs", section="episodic", refs=["brut:b1:2", "brut:b1:1"], concepts=["dogs"])
    assert page.add_fact(first) is True and page.concepts == ["dogs", "walks"]
    again = Fact(id="b", text="Rex runs", section="semantic", refs=["brut:b1:1", "brut:b1:2"], concepts=["zoo"])
    assert page.add_fact(again) is False
    assert [f.id for f in page.facts] == ["a"] and page.concepts == ["dogs", "walks"]
    other_refs = Fact(id="c", text="Rex runs", section="episodic", refs=["brut:b1:3"], concepts=["walks"])
    assert page.add_fact(other_refs) is True
    other_text = Fact(id="d", text="Rex sits", section="episodic", refs=["brut:b1:1", "brut:b1:2"])
    assert page.add_fact(other_text) is True
    assert [f.id for f in page.facts] == ["a", "c", "d"] and page.concepts == ["dogs", "walks"]


def kv(fid: str, value: str | None, said: str | None, key: str | None = "lives_in", **kw) -> Fact:
    return Fact(id=fid, text=f"lives in {value}", section="semantic", refs=[f"brut:b1:{fid}"], said=said,
                key=key, value=value, **kw)


def test_supersede_marks_older_or_same_day_other_values_of_the_key_only():
    new = kv("new", "Rome", "2026-03-05")
    page = Page(slug="u", name="User", facts=[
        kv("older", "Paris", "2026-03-01"),
        kv("same_day", "Oslo", "2026-03-05"),
        kv("undated", "Nice", None),
        kv("later", "Bern", "2026-03-06"),  # a newer statement is not overwritten
        kv("same_value", "ROME", "2026-03-01"),  # the same value, folded
        kv("other_key", "Lyon", "2026-03-01", key="works_in"),
        kv("no_key", "Pisa", "2026-03-01", key=None),
        kv("done", "Riga", "2026-03-01", superseded_by="x"),
        new])
    assert page.supersede(new) == ["older", "same_day", "undated"]
    marks = {f.id: f.superseded_by for f in page.facts}
    assert marks == {"older": "new", "same_day": "new", "undated": "new", "later": None, "same_value": None,
                     "other_key": None, "no_key": None, "done": "x", "new": None}
    assert page.supersede(new) == []  # already marked


def test_supersede_without_a_key_or_a_date_on_the_new_fact():
    page = Page(slug="u", name="User", facts=[kv("old", "Paris", None), kv("dated", "Oslo", "2026-03-01")])
    assert page.supersede(kv("k", "Rome", "2026-03-05", key=None)) == []
    assert page.supersede(kv("k", "Rome", "2026-03-05", key="")) == []
    assert all(f.superseded_by is None for f in page.facts)
    assert page.supersede(kv("n", "Rome", None)) == ["old"]  # undated: only undated ones
    assert page.supersede(kv("v", None, "2026-03-09")) == ["dated"]  # no value differs from "Oslo"


def test_catalogue_resolves_names_and_aliases_folded_first_page_first():
    rex = Page(slug="rex", name="Rex", aliases=["Le Chien"])
    twin = Page(slug="twin", name="rex")
    cat = Catalogue({"rex": rex, "twin": twin})
    assert cat.resolve(" REX ") is rex and cat.resolve("le  chien") is rex
    assert cat.resolve("Tom") is None
    assert cat.resolve_or_create("le chien") == (rex, False)


def test_resolve_or_create_numbers_slug_collisions_and_registers_the_new_name():
    pages = {"rex": Page(slug="rex", name="Rexy"), "rex-2": Page(slug="rex-2", name="Rexo")}
    cat = Catalogue(pages)
    page, created = cat.resolve_or_create("  Rex ")
    assert created is True and (page.slug, page.name) == ("rex-3", "Rex") and pages["rex-3"] is page
    assert cat.resolve_or_create("rex") == (page, False)
    fresh, created = cat.resolve_or_create("Tom  Hanks")
    assert created and (fresh.slug, fresh.name) == ("tom-hanks", "Tom Hanks") and list(pages)[-1] == "tom-hanks"
    solo = Catalogue({"bob": Page(slug="bob", name="Bobby")})
    page, created = solo.resolve_or_create("Bob")
    assert created and page.slug == "bob-2"


def test_a_memoire_built_in_one_thread_answers_in_another(tmp_path):
    # The recall cache is shared: a tool call may run on another thread than the one that built it.
    memoire = build(tmp_path, [Page(slug="rex", name="Rex", facts=[fact("r1", "Rex loves the park")])])
    with ThreadPoolExecutor(max_workers=1) as pool_:
        rows = pool_.submit(memoire.bm25, ["park"], 5).result()
        nodes = pool_.submit(memoire.nodes_with, "rex").result()
    assert [fid for fid, _ in rows] == ["r1"] and nodes == {"rex"}


def test_resolve_or_create_counts_past_a_chain_of_three_collisions():
    pages = {s: Page(slug=s, name=f"Other {s}") for s in ("rex", "rex-2", "rex-3")}
    page, created = Catalogue(pages).resolve_or_create("Rex")
    assert created and page.slug == "rex-4"
