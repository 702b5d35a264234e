"""EXIA recall and checker details the exact tests left open, each pinned by a number or event:
the spreading direction and its value round by round, the work counter, the graph stage's
events, the `reached` threshold, which pages count as activated, deadlines still ahead, and the
strict unknown-ref rule with many citations."""

from __future__ import annotations

import math
from dataclasses import replace

from lsrep.systems.exia_seed import Fixes, Settings
from lsrep.systems.exia_seed.checker import UNKNOWN_REF, check_fact
from lsrep.systems.exia_seed.pages import Fact, Page
from lsrep.systems.exia_seed.prompts import Source
from lsrep.systems.exia_seed.recall import is_expired

from tests.systems.exia_seed.test_exia_recall_exact import TODAY, build, fact, run


def linked(tmp_path):
    """Alpha and Beta share a source line (one edge, weight 1, key ("alpha", "beta")); Gamma is alone."""
    alpha = Page(slug="alpha", name="Alpha", facts=[Fact(id="a1", text="Alpha likes green tea", section="episodic",
                                                         refs=["brut:b1:7"], said="2026-03-01")])
    beta = Page(slug="beta", name="Beta", facts=[Fact(id="b1", text="Beta plays chess weekly", section="episodic",
                                                      refs=["brut:b1:7"], said="2026-03-01")])
    gamma = Page(slug="gamma", name="Gamma", facts=[fact("g1", "Gamma paints boats")])
    return build(tmp_path, [alpha, beta, gamma])


def spread(a: float, b: float, w: float = 1.0, rounds: int = 3) -> tuple[float, float]:
    for _ in range(rounds):
        a, b = math.tanh(a + w * b), math.tanh(b + w * a)
    return a, b


def test_activation_spreads_from_the_first_end_of_an_edge_to_the_second(tmp_path):
    memoire = linked(tmp_path)
    assert list(memoire.edges) == [("alpha", "beta")]
    sel, events = run(memoire, "What about Alpha?")
    assert sel.initial == {"alpha": 1.0}
    a, b = spread(1.0, 0.0)
    assert sel.activation == {"alpha": round(a, 9), "beta": round(b, 9)}  # Gamma: never activated, not listed
    assert sel.graph_reached == ["beta"]
    graph = [(e.stage, e.ids) for e in events if e.mechanism == "recall.graph"]
    assert graph == [("eligible", ()), ("executed", ()), ("output", ("beta",))]


def test_activation_spreads_from_the_second_end_to_the_first(tmp_path):
    sel, _ = run(linked(tmp_path), "What about Beta?")
    b, a = spread(1.0, 0.0)
    assert sel.activation == {"alpha": round(a, 9), "beta": round(b, 9)}


def test_the_work_counter_counts_terms_node_updates_edge_terms_and_facts_scored(tmp_path):
    sel, _ = run(linked(tmp_path), "What about Alpha?")
    terms, pages, edges, rounds = len(sel.terms), 3, 1, 3
    facts_scored = 2  # Alpha's and Beta's facts; Gamma is below the threshold
    assert sel.work == terms + rounds * (pages + 2 * edges) + facts_scored


def test_a_page_reached_exactly_at_the_threshold_is_reported_as_reached(tmp_path):
    memoire = linked(tmp_path)
    _, b = spread(1.0, 0.0)
    at = replace(Settings(), activation_threshold=b)
    _, events = run(memoire, "What about Alpha?", settings=at)
    assert [e.ids for e in events if e.mechanism == "recall.graph" and e.stage == "output"] == [("beta",)]
    above = replace(Settings(), activation_threshold=math.nextafter(b, 2.0))
    _, events = run(memoire, "What about Alpha?", settings=above)
    assert [e for e in events if e.mechanism == "recall.graph" and e.stage == "output"] == []


def test_without_edges_the_graph_stage_is_ineligible(tmp_path):
    _, events = run(build(tmp_path, [Page(slug="rex", name="Rex", facts=[fact("f1", "Rex loves the park")])]),
                    "Rex?")
    assert [(e.stage, e.reason) for e in events if e.mechanism == "recall.graph"] == [("ineligible", "aucune arête")]
    off = replace(Settings(), disabled=frozenset({"recall.graph"}))
    _, events = run(linked(tmp_path / "b"), "What about Alpha?", settings=off)
    assert [(e.stage, e.reason) for e in events if e.mechanism == "recall.graph"] == [("ineligible", "disabled")]


def test_a_deadline_still_ahead_is_not_expired(tmp_path):
    ahead = fact("soon", "Rex must get a leash", type="prospective", until="2026-03-20")
    assert not is_expired(ahead, TODAY)
    sel, events = run(build(tmp_path, [Page(slug="rex", name="Rex", facts=[ahead])]), "What about Rex?")
    assert [s.fact_id for s in sel.selected] == ["soon"]
    assert next(e for e in events if e.mechanism == "recall.filter_expired").count == 0


def test_strict_citations_accept_many_valid_refs_and_reject_one_unknown_among_them():
    sources = {f"brut:b1:{i}": Source(f"brut:b1:{i}", "My sister Alice moved to Lyon with her husband.",
                                      False, "2026-03-01", "09:00") for i in range(300)}
    strict = replace(Settings(), fix=Fixes(strict_citations=True))
    many = {"fait": "Alice moved to Lyon with her husband.", "sources": list(sources)}
    assert check_fact(many, sources, strict).ok  # 300 == 300: equal lengths, not the same int object
    one_unknown = {**many, "sources": [*sources, "brut:zz:9"]}
    assert check_fact(one_unknown, sources, strict).reason == UNKNOWN_REF


def test_a_page_below_the_threshold_does_not_stop_the_pages_after_it(tmp_path):
    memoire = build(tmp_path, [Page(slug="aaa", name="Aaa", facts=[fact("x1", "Aaa keeps bees")]),
                               Page(slug="zed", name="Zed", facts=[fact("z1", "Zed paints boats")])])
    assert list(memoire.pages) == ["aaa", "zed"]
    weak = replace(Settings(), priming_bonus=0.1)  # tanh^3(0.1) < 0.2: activated, below the threshold
    sel, _ = run(memoire, "What about Zed?", settings=weak, primed={"aaa"})
    assert 0.0 < sel.activation["aaa"] < 0.2
    assert [s.fact_id for s in sel.selected] == ["z1"]


def test_the_budget_reports_no_cut_when_everything_fits(tmp_path):
    _, events = run(linked(tmp_path), "What about Alpha?")
    budget = next(e for e in events if e.mechanism == "recall.budget" and e.stage == "executed")
    assert budget.params == {"estimated_tokens": budget.params["estimated_tokens"], "budget": 1200, "cut": 0}
    assert budget.count == 2


def test_term_seeds_are_the_share_of_query_terms_a_page_holds(tmp_path):
    sel, _ = run(linked(tmp_path), "chess boats")
    assert sel.terms == ["chess", "boats"]
    assert sel.initial == {"beta": 0.5, "gamma": 0.5}  # one of two terms each
    sel, _ = run(linked(tmp_path / "b"), "Who plays chess weekly or paints boats?")
    assert sel.terms == ["plays", "chess", "weekly", "paints", "boats"]
    assert sel.initial == {"beta": 3 / 5, "gamma": 2 / 5}


def test_strict_rejection_with_many_user_sources_gives_the_overlap_reason():
    sources = {f"brut:b1:{i}": Source(f"brut:b1:{i}", "My sister Alice moved to Lyon with her husband.",
                                      False, "2026-03-01", "09:00") for i in range(300)}
    strict = replace(Settings(), fix=Fixes(strict_citations=True))
    unsupported = {"fait": "Alice sells bicycles downtown.", "sources": list(sources)}
    assert check_fact(unsupported, sources, strict).reason.startswith("recouvrement insuffisant")


def test_only_the_prospective_type_expires():
    for other in ("fait", "rappel", "souvenir", "prospectives"):  # sorted before and after "prospective"
        assert not is_expired(fact("a", "x", type=other, until="2026-03-01"), TODAY)


def test_a_subject_named_without_query_terms_scores_at_half_its_activation(tmp_path):
    book = Page(slug="1984", name="1984", facts=[fact("b1", "Read 1984 last winter")])
    sel, _ = run(build(tmp_path, [book]), "1984?")
    assert sel.terms == [] and sel.initial == {"1984": 1.0}  # digits are not terms; the name seeds
    (cand,) = sel.candidates
    assert cand.score == sel.activation["1984"] * 0.5  # coverage 0 without terms


def test_the_budget_stops_at_the_first_fact_that_does_not_fit(tmp_path):
    facts = [fact("f1", "Rex park"), fact("f2", "Rex park " + "long " * 40), fact("f3", "Rex park ok")]
    memoire = build(tmp_path, [Page(slug="rex", name="Rex", facts=facts)])
    first = (len("- Rex: Rex park\n") + 3) // 4
    third = (len("- Rex: Rex park ok\n") + 3) // 4
    tight = replace(Settings(), recall_budget_tokens=first + third, facts_per_subject=5)
    sel, events = run(memoire, "Rex park?", settings=tight)
    assert [s.fact_id for s in sel.candidates] == ["f1", "f2", "f3"]  # equal scores: by id
    assert [s.fact_id for s in sel.selected] == ["f1"]  # the walk stops at f2 although f3 would fit
    budget = next(e for e in events if e.mechanism == "recall.budget" and e.stage == "executed")
    assert budget.params["cut"] == 2 and budget.params["estimated_tokens"] == first
    selected = [e for e in events if e.mechanism == "recall.budget" and e.stage == "selected"]
    assert [e.ids for e in selected] == [("f1",)]


def test_no_selected_event_when_nothing_is_selected(tmp_path):
    sel, events = run(linked(tmp_path), "nothing matches here")
    assert sel.selected == []
    assert [e.stage for e in events if e.mechanism == "recall.budget"] == ["executed"]


def test_a_full_subject_is_skipped_and_the_walk_goes_on_to_other_subjects(tmp_path):
    rex = Page(slug="rex", name="Rex", facts=[fact(f"r{i}", f"Rex park walk {i}") for i in range(4)])
    ana = Page(slug="ana", name="Ana", facts=[fact("a1", "Ana likes the park")])
    sel, _ = run(build(tmp_path, [rex, ana]), "Rex park walk Ana")
    per_node = [s.node for s in sel.selected]
    assert per_node.count("rex") == 3 and "a1" in [s.fact_id for s in sel.selected]
    assert [s.node for s in sel.candidates][:4] == ["rex"] * 4  # Rex's fourth fact comes before Ana's
    for cap in (0, -1):  # no fact per subject: nothing is selected
        assert run(build(tmp_path / f"c{cap}", [rex, ana]), "Rex park walk Ana",
                   settings=replace(Settings(), facts_per_subject=cap))[0].selected == []


def test_scored_candidates_are_immutable():
    import dataclasses

    import pytest
    from lsrep.systems.exia_seed.recall import RecallLine, Scored

    with pytest.raises(dataclasses.FrozenInstanceError):
        Scored("f", "n", 1.0).score = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        RecallLine("x", "fact", "n").text = "y"  # type: ignore[misc]


def test_the_phase2_ceiling_keeps_the_longest_prefix_that_fits(tmp_path):
    from lsrep.systems.exia_seed.recall import souvenirs
    from lsrep.systems.exia_seed.text import estimate_tokens

    pages = [Page(slug=f"s{i}", name=f"Subject{i}", summary="x" * 400,
                  facts=[fact(f"f{i}", f"Subject{i} likes the park")]) for i in range(15)]
    memoire = build(tmp_path, pages)
    sel, _ = run(memoire, " ".join(f"Subject{i}" for i in range(15)) + " park")
    free = souvenirs(memoire, sel, Settings())
    budget = Settings().recall_budget_tokens
    fits = [n for n in range(len(free) + 1) if estimate_tokens("\n".join(x.text for x in free[:n])) <= budget]
    capped = souvenirs(memoire, sel, replace(Settings(), fix=Fixes(phase2_ceiling=True)))
    assert capped == free[: max(fits)] and 0 < max(fits) < len(free)


def test_a_withheld_fact_does_not_hide_the_facts_after_it(tmp_path):
    rex = Page(slug="rex", name="Rex", facts=[fact("p1", "Rex secret vet record", privacy="private"),
                                               fact("n1", "Rex loves the park")])
    private = replace(Settings(), fix=Fixes(enforce_privacy=True))
    sel, _ = run(build(tmp_path, [rex]), "What about Rex?", settings=private)
    assert [s.fact_id for s in sel.candidates] == ["n1"]


def test_the_missing_number_named_is_the_first_in_sorted_order():
    source = Source("brut:b1:1", "My sister Alice moved to Lyon.", False, "2026-03-01", "09:00")
    verdict = check_fact({"fait": "Alice moved to Lyon in 2019 with 3 cats.", "sources": ["brut:b1:1"]},
                         {source.ref: source}, Settings())
    assert verdict.reason == "nombre absent des sources: 2019"  # sorted("2019", "3"): "2019" first


def test_phase2_lists_a_subjects_facts_best_first_within_a_section(tmp_path):
    from lsrep.systems.exia_seed.recall import souvenirs

    rex = Page(slug="rex", name="Rex", facts=[fact("e1", "Rex sleeps"), fact("e2", "Rex loves the park daily")])
    memoire = build(tmp_path, [rex])
    sel, _ = run(memoire, "Rex park daily?")
    scores = {s.fact_id: s.score for s in sel.candidates}
    assert scores["e2"] > scores["e1"]
    lines = [line.fact_ids for line in souvenirs(memoire, sel, Settings()) if line.kind == "fact"]
    assert lines == [("e2",), ("e1",)]


def test_a_page_exactly_at_the_threshold_contributes_its_facts(tmp_path):
    memoire = linked(tmp_path)
    beta = run(memoire, "What about Alpha?")[0].activation["beta"]
    sel, _ = run(memoire, "What about Alpha?", settings=replace(Settings(), activation_threshold=beta))
    assert sel.activation["beta"] == beta and "b1" in {s.fact_id for s in sel.candidates}


def test_a_fact_that_is_only_a_date_is_rejected():
    source = Source("brut:b1:1", "We met Alice on 2026-03-01 in Lyon.", False, "2026-03-01", "09:00")
    verdict = check_fact({"fait": "2026-03-01", "sources": ["brut:b1:1"]}, {source.ref: source}, Settings())
    assert (verdict.ok, verdict.reason) == (False, "fait réduit à une date")


def test_phase2_points_to_the_three_strongest_neighbours(tmp_path):
    from lsrep.systems.exia_seed.recall import souvenirs

    hub = Page(slug="rex", name="Rex", facts=[fact("r1", "Rex met Anna, Boris, Cyril and Diane at the park")])
    others = [Page(slug=n.lower(), name=n, facts=[fact(f"{n}1", f"{n} has a garden")]) for n in ("Anna", "Boris", "Cyril", "Diane")]
    memoire = build(tmp_path, [hub, *others])
    sel, _ = run(memoire, "Rex park?")
    pointer = [line.text for line in souvenirs(memoire, sel, Settings()) if line.kind == "pointer" and line.node == "rex"]
    assert pointer == ["  → see also: Anna, Boris, Cyril"]  # four neighbours of equal weight: the first three by name


def test_checker_verdicts_at_the_overlap_boundary_and_on_rejection():
    from lsrep.systems.exia_seed.text import roots

    source = Source("brut:b1:1", "My sister Alice moved to Lyon.", False, "2026-03-01", "09:00")
    sources = {source.ref: source}
    half = "Alice moved purple bicycles"
    assert roots(half, 5) == {"alice", "moved", "purpl", "bicyc"}  # 2 of 4 roots in the source: exactly 0.5
    assert check_fact({"fait": half, "sources": ["brut:b1:1"]}, sources, Settings()).ok
    under = check_fact({"fait": "Alice painted purple bicycles", "sources": ["brut:b1:1"]}, sources, Settings())
    assert (under.ok, under.reason) == (False, "recouvrement insuffisant (1/4)")
    empty = check_fact({"fait": " ", "sources": ["brut:b1:1"]}, sources, Settings())
    assert (empty.ok, empty.reason) == (False, "fait vide")


def test_a_name_of_two_letters_does_not_seed_by_name(tmp_path):
    sel, _ = run(build(tmp_path, [Page(slug="bo", name="Bo", facts=[fact("b1", "Bo likes tea")])]), "Bo tea?")
    assert sel.seeded == set()


def test_phase2_fact_lines_show_their_date_and_none_without_one(tmp_path):
    from lsrep.systems.exia_seed.recall import souvenirs

    rex = Page(slug="rex", name="Rex", facts=[fact("e1", "Rex loves the park", event="2026-03-02"),
                                               fact("e2", "Rex sleeps in the park", said="")])
    memoire = build(tmp_path, [rex])
    sel, _ = run(memoire, "Rex park?")
    texts = {line.fact_ids: line.text for line in souvenirs(memoire, sel, Settings()) if line.kind == "fact"}
    assert texts == {("e1",): "  - Rex loves the park (2026-03-02)", ("e2",): "  - Rex sleeps in the park"}
