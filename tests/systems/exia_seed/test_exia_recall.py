"""Automatic recall, the explicit tools and their per-branch filters, cache and summary writer."""

from __future__ import annotations

from exia_testkit import at, fact
from lsrep.systems.exia_seed.files import file_lock
from lsrep.systems.exia_seed.text import estimate_tokens

MARCH_1 = at()


def remember(r, facts: list[tuple[str, str, dict]], now=MARCH_1):
    """Note each text, then consolidate with one scripted fact per note (node, extras)."""
    proposals = []
    for text, node, extra in facts:
        ref = r.note(text, now)
        proposals.append(fact(text, [ref], node, **extra))
    r.model.push({"faits": proposals})
    report = r.provider.consolidate(now)
    assert report["admis"] == len(facts), report


def test_e14_fact_said_today_is_recalled_only_after_the_day_changes(rig):
    r = rig(phase=2)
    r.provider.sync_turn("My dog Rex loves the big park near the river.", "Lovely.", now=at())
    assert r.provider.prefetch("Where does Rex like to go?", now=at(minutes=30)) == ""
    assert "loves the big park" not in r.tool("memoire_chercher", at(minutes=30), requete="Rex park")["faits"].__repr__()
    r.provider.sync_turn("Good morning, new day here.", "Morning!", now=at(days=1))
    block = r.provider.prefetch("Where does Rex like to go?", now=at(days=1, minutes=1))
    assert "My dog Rex loves the big park near the river." in block


def test_nightly_forced_consolidation_closes_today(rig):
    r = rig(phase=2)
    r.provider.sync_turn("My dog Rex loves the big park near the river.", "Lovely.", now=at())
    r.provider.consolidate(at(minutes=10), force=True)
    assert "big park" in r.provider.prefetch("Where does Rex like to go?", now=at(minutes=20))


def test_phase1_computes_and_journals_but_returns_nothing(rig):
    r = rig(scripted=True)
    remember(r, [("Rex the dog loves the big park near the river.", "Rex", {})])
    assert r.provider.prefetch("Where does Rex like to go?", now=at(minutes=1)) == ""
    status = r.provider.recall_status()
    assert status.phase == 1 and status.selected and status.lines == ()
    assert '"phase": 1' in (r.root / "journal" / "rappel.jsonl").read_text()
    assert "big park" in str(r.tool("memoire_chercher", at(minutes=1), requete="Rex park"))  # tools still read


def test_e3_phase2_additions_exceed_the_ceiling_and_fix_bounds_them(rig):
    names = ["Aaron", "Bella", "Cyril", "Dalia", "Ethan", "Fiona", "Gavin", "Helga", "Ivan", "Julia",
             "Karim", "Leona", "Milo", "Nadia", "Oscar"]

    def build(**kw):
        r = rig(scripted=True, phase=2, **kw)
        r.model.summary = lambda subject: f"{subject} is a person who " + "really enjoys gardening and reading books, " * 9
        remember(r, [(f"{n} enjoys gardening and reading books.", n, {}) for n in names])
        r.provider.prefetch("who enjoys gardening and reading books", now=at(minutes=1))
        return r

    seed = build()
    budget = [e for e in seed.stages("recall.budget") if e.stage == "executed"][-1]
    assert budget.params["estimated_tokens"] <= 1200 and budget.count == 15
    assert seed.provider.recall_status().tokens > 1200
    fixed = build(fix={"phase2_ceiling": True})
    assert fixed.provider.recall_status().tokens <= 1200


def test_e4_future_fact_leaks_through_read_trail_and_fallback(rig):
    def build(**kw):
        r = rig(scripted=True, **kw)
        remember(r, [("Alice plays guitar in a band with Bob.", "Alice", {}),
                     ("Bob has a concert on 2026-06-01 at the Olympia.", "Bob", {"date_evenement": "2026-06-01"})])
        return r

    seed = build()
    page = seed.tool("memoire_lire", at(minutes=1), sujet="Alice")
    dates = lambda views: [v["date"] for v in views]  # noqa: E731
    assert "2026-06-01" not in dates(v for vs in page["sections"].values() for v in vs)
    assert "2026-06-01" in dates(v for t in page["pistes"] for v in t["faits"])
    assert "2026-06-01" in dates(seed.tool("memoire_lire", at(minutes=1), sujet="Alice", section="procedural")["repli"])
    bob = seed.tool("memoire_lire", at(minutes=1), sujet="Bob")
    assert bob["sections"] == {}  # the section filter does apply
    # The event says so (the report's E-4 count): Alice's trail (1), her trail and fallback with no
    # matching section (2), Bob's page whose trail is Alice's present-day facts (0).
    told = [e.params["future_in_trail_or_fallback"] for e in seed.stages("tool.read") if e.stage == "output"]
    assert told == [1, 2, 0]
    fixed = build(fix={"trail_date_filter": True})
    page = fixed.tool("memoire_lire", at(minutes=1), sujet="Alice")
    assert "2026-06-01" not in dates(v for t in page["pistes"] for v in t["faits"])
    assert "2026-06-01" not in dates(fixed.tool("memoire_lire", at(minutes=1), sujet="Alice", section="x")["repli"])
    assert {e.params["future_in_trail_or_fallback"] for e in fixed.stages("tool.read") if e.stage == "output"} <= {0}


def test_e5_expired_prospective_fact_returned_by_search_not_recall(rig):
    def build(**kw):
        r = rig(scripted=True, phase=2, **kw)
        remember(r, [("I have a dentist appointment on 2026-02-10 for a checkup.", "dentist",
                      {"type": "prospective", "echeance": "2026-02-10", "date_evenement": "2026-02-10"})],
                 now=at(days=-28))
        return r

    seed = build()
    assert "dentist" not in seed.provider.prefetch("when is my dentist appointment", now=MARCH_1)
    assert [e.count for e in seed.stages("recall.filter_expired")] == [1]
    assert seed.tool("memoire_chercher", MARCH_1, requete="dentist appointment")["faits"]
    assert [e.params["expired_returned"] for e in seed.stages("tool.search") if e.stage == "output"] == [1]
    fixed = build(fix={"search_expiry_filter": True})
    assert fixed.tool("memoire_chercher", MARCH_1, requete="dentist appointment")["faits"] == []
    assert [e.params["filtered"]["expired"] for e in fixed.stages("tool.search")
            if e.stage in ("output", "executed")] == [1]


def test_e15_confidential_fact_is_returned_everywhere_unless_fixed(rig):
    def build(**kw):
        r = rig(scripted=True, phase=2, **kw)
        remember(r, [("Marc earns a large salary at the Lyon bank.", "Marc", {"confidentialite": "confidential"})])
        return r

    for fixed, expected in ((False, True), (True, False)):
        r = build(fix={"enforce_privacy": fixed})
        recalled = "salary" in r.provider.prefetch("What is Marc's salary?", now=at(minutes=1))
        searched = bool(r.tool("memoire_chercher", at(minutes=1), requete="Marc salary")["faits"])
        read = bool(r.tool("memoire_lire", at(minutes=1), sujet="Marc")["sections"])
        assert (recalled, searched, read) == (expected, expected, expected)


def test_e10_page_only_change_leaves_the_cache_stale_until_the_graph_changes(rig):
    def build(**kw):
        r = rig(scripted=True, phase=2, **kw)
        r.model.summary = lambda subject: f"{subject} is the family dog."
        remember(r, [("Rex the dog loves the big park near the river.", "Rex", {})])
        r.provider.prefetch("Tell me about Rex", now=at(minutes=1))
        r.model.summary = lambda subject: f"{subject} is an old and lazy dog."
        r.provider.refresh_summaries(at(minutes=2), all_pages=True)
        return r

    seed = build()
    assert "old and lazy" in (seed.root / "fiches" / "rex.md").read_text()
    assert "family dog" in seed.provider.prefetch("Tell me about Rex", now=at(minutes=3))
    assert seed.stages("recall.cache")[-1].reason == "reused"
    seed.provider.rebuild_graph(at(minutes=4))
    assert "old and lazy" in seed.provider.prefetch("Tell me about Rex", now=at(minutes=5))
    fixed = build(fix={"cache_key_pages": True})
    assert "old and lazy" in fixed.provider.prefetch("Tell me about Rex", now=at(minutes=3))


def test_e16_summary_writer_takes_no_lock_unless_fixed(rig):
    for fixed in (False, True):
        r = rig(scripted=True, fix={"summary_lock": fixed})
        remember(r, [("Rex the dog loves the big park near the river.", "Rex", {})])
        r.model.summary = lambda subject: f"{subject} is a dog."
        with file_lock(r.provider.paths.lock, blocking=False):  # a consolidation holds the lock
            report = r.provider.refresh_summaries(at(minutes=1), all_pages=True)
        assert (report["statut"] == "verrou occupé") is fixed
        assert ("Rex is a dog." in (r.root / "fiches" / "rex.md").read_text()) is not fixed


def test_e16_detector_reports_the_facts_a_concurrent_consolidation_loses(rig):
    lyon = "Rex was born in Lyon during the spring."
    for fixed in (False, True):
        r = rig(scripted=True, fix={"summary_lock": fixed})
        remember(r, [("Rex the dog loves the big park near the river.", "Rex", {})])
        r.model.summary = lambda subject: f"{subject} is a dog."
        ref = r.note(lyon, at(minutes=1))
        r.model.push({"faits": [fact(lyon, [ref], "Rex")]})
        report = r.provider.refresh_during_consolidation(at(minutes=2))
        page = (r.root / "fiches" / "rex.md").read_text()
        lost = [e for e in r.events if e.mechanism == "maintenance.refresh_summaries" and e.stage == "error"]
        if fixed:  # the refresh holds the lock: the consolidation defers, nothing is overwritten
            assert report["statut"] == "ok" and report["ecrasements"] == {} and not lost
            assert lyon not in page
            assert r.provider.consolidate(at(minutes=3))["admis"] == 1
            assert lyon in (r.root / "fiches" / "rex.md").read_text()
        else:  # the seed's race: the consolidation wrote the fact, the refresh erased it, and says so
            assert lyon not in page and "Rex is a dog." in page
            assert len(lost) == 1 and lost[0].params["page"] == "rex" and len(lost[0].ids) == 1
            assert report["ecrasements"] == {"rex": list(lost[0].ids)}
            assert "E-16" in lost[0].reason


def test_e16_detector_is_silent_without_a_concurrent_writer(rig):
    r = rig(scripted=True)
    remember(r, [("Rex the dog loves the big park near the river.", "Rex", {})])
    r.model.summary = lambda subject: f"{subject} is a dog."
    report = r.provider.refresh_summaries(at(minutes=1), all_pages=True)
    assert report["ecrasements"] == {}
    assert not [e for e in r.events if e.stage == "error"]
    assert "Rex is a dog." in (r.root / "fiches" / "rex.md").read_text()


def test_e18_procedural_first_truncation_hides_the_answer(rig):
    r = rig(scripted=True, phase=2, facts_per_subject=1)
    remember(r, [("Always greet Rex with a small treat.", "Rex", {"section": "procedural"}),
                 ("Rex was born in Lyon during the spring.", "Rex", {})])
    r.provider.prefetch("Where was Rex born?", now=at(minutes=1))
    status = r.provider.recall_status()
    assert r.provider.cache.memoire.facts[status.selected[0]][1].text.startswith("Rex was born")
    shown = [line.text for line in status.lines if line.kind == "fact"]
    assert len(shown) == 1 and "greet Rex" in shown[0]


def test_e19_priming_lasts_the_configured_minutes(rig):
    r = rig(scripted=True, phase=2)
    remember(r, [("Rex the dog loves the big park near the river.", "Rex", {}),
                 ("Gardening needs patience and good compost soil.", "gardening", {})])
    r.provider.prefetch("Tell me about Rex", now=at(minutes=1))
    r.provider.prefetch("Any compost advice?", now=at(minutes=5))
    assert r.provider.recall_status().primed == ("rex",)
    r.provider.prefetch("Any compost advice?", now=at(minutes=30))
    assert r.provider.recall_status().primed == ()


def test_graph_propagation_reaches_a_linked_subject(rig):
    r = rig(scripted=True, phase=2)
    remember(r, [("Alice plays guitar in a band with Bob.", "Alice", {}),
                 ("Bob repairs vintage motorcycles in his garage.", "Bob", {})])
    block = r.provider.prefetch("What instrument does Alice play?", now=at(minutes=1))
    assert "Bob repairs vintage motorcycles" in block
    assert r.provider.recall_status().graph_reached == ("bob",)
    r2 = rig(scripted=True, phase=2, disabled=frozenset({"recall.graph"}))
    remember(r2, [("Alice plays guitar in a band with Bob.", "Alice", {}),
                  ("Bob repairs vintage motorcycles in his garage.", "Bob", {})])
    assert "motorcycles" not in r2.provider.prefetch("What instrument does Alice play?", now=at(minutes=1))


def test_budget_and_trivial_prompt(rig):
    r = rig(scripted=True, phase=2, recall_budget_tokens=20)
    remember(r, [(f"Rex chased the red ball number {i} across the park.", "Rex", {}) for i in range(3)])
    r.provider.prefetch("What did Rex chase?", now=at(minutes=1))
    budget = [e for e in r.stages("recall.budget") if e.stage == "executed"][-1]
    assert budget.params["estimated_tokens"] <= 20 and budget.params["cut"] > 0
    assert estimate_tokens("x" * 8) == 2
    assert r.provider.prefetch("thanks!", now=at(minutes=2)) == ""
    assert r.stages("recall.phase2")[-1].reason == "trivial"
