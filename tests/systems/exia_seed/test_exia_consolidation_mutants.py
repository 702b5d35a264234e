"""EXIA consolidation (consolidation.py), pinned where the `exia-consolidation` mutation session
found it loose. Every test goes through the public surface (`parse_proposal`, `select_lots`, the
provider's `consolidate`) and checks outputs, files and events, so it holds however the run is
organised inside (e.g. an incremental consolidation)."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest
from exia_testkit import at, fact
from lsrep.systems.exia_seed import ExiaSeedProvider, Settings, StageEvent
from lsrep.systems.exia_seed.consolidation import parse_proposal, select_lots
from lsrep.systems.exia_seed.files import file_lock
from lsrep.systems.exia_seed.ingestion import Lot, load_progress
from lsrep.systems.exia_seed.pages import load_pages
from lsrep.systems.exia_seed.prompts import Source

B = "brut:2026-03-01-001"
ALICE = "My sister Alice lives in Lyon with her husband Bob."
TOM = "My cat Tom sleeps on the red sofa all day."
PARK = "We walked in the big park near the river yesterday."


def day_of(r, *lines: str, minutes: int = 0) -> None:
    """One closed batch of user lines (refs B:1, B:2, ...)."""
    for i, text in enumerate(lines):
        r.provider.sync_turn(text, "", now=at(minutes=minutes + i))
    r.provider.close_batch(at(minutes=minutes + len(lines)))


def pages(r) -> dict:
    return load_pages(r.root / "fiches")


# -- parse and salvage -------------------------------------------------------------------------------

def test_a_reply_parses_as_an_object_a_bare_list_or_nothing():
    obj = parse_proposal('```json\n{"faits": [{"fait": "A"}, 3, "x"], "nouveaux_concepts": ["pets", 4]}\n```')
    assert (obj.status, obj.facts, obj.concepts) == ("json", [{"fait": "A"}], ["pets"])
    bare = parse_proposal('[{"fait": "A"}, {"fait": "B"}]')
    assert (bare.status, bare.facts, bare.concepts) == ("json", [{"fait": "A"}, {"fait": "B"}], [])
    scalar = parse_proposal("42")
    assert (scalar.status, scalar.facts, scalar.concepts) == ("json", [], [])


def test_salvage_keeps_complete_fact_objects_after_broken_and_foreign_ones():
    reply = ('{"faits": [{"fait": "A", "sources": ["x"]}, {"meta": {"fait": "inner"}}, '
             '{"fait": "B"}, {"fait": "C", "sour')
    proposal = parse_proposal(reply)
    assert proposal.status == "salvaged"
    assert proposal.facts == [{"fait": "A", "sources": ["x"]}, {"fait": "inner"}, {"fait": "B"}]
    assert parse_proposal('{"x": 1} {"fait": "D"} trailing {').facts == [{"fait": "D"}]
    assert parse_proposal('{{"fait": "E"} ,').facts == [{"fait": "E"}]  # a brace right after a broken one
    assert parse_proposal('x{"broken" {"fait": "F"}').facts == [{"fait": "F"}]  # a broken brace at an odd offset
    assert parse_proposal('x{"meta": 1} {"fait": "G"}').facts == [{"fait": "G"}]  # a foreign object at an odd offset


def test_salvaged_concepts_come_from_a_complete_list_only():
    good = parse_proposal('{"fait": "A"} "nouveaux_concepts": ["pets", 3, "home"], {"fait"')
    assert good.concepts == ["pets", "home"]
    broken = parse_proposal('{"fait": "A"} "nouveaux_concepts": ["pets", ] {')
    assert broken.facts == [{"fait": "A"}] and broken.concepts == []
    nothing = parse_proposal('no json at all "nouveaux_concepts": ["pets"]')
    assert (nothing.status, nothing.facts, nothing.concepts) == ("invalid", [], ["pets"])


# -- budget selection --------------------------------------------------------------------------------

def lot(name: str, chars: int) -> Lot:
    return Lot(name, "2026-03-01", (Source(f"brut:{name}:1", "x" * (chars - 1), False, "2026-03-01"),))


def test_lots_are_taken_in_order_while_they_fit_exactly():
    lots = [lot("a", 10), lot("b", 10), lot("c", 1)]
    assert select_lots(lots, 20) == (lots[:2], False)
    assert select_lots(lots, 21) == (lots, False)
    assert select_lots(lots, 19) == (lots[:1], False)  # b does not fit; c after it is not taken either
    assert select_lots(lots, 15) == (lots[:1], False)


def test_the_first_lot_always_goes_and_overruns_only_when_larger_than_the_budget():
    lots = [lot("a", 10), lot("b", 2)]
    assert select_lots(lots, 10) == (lots[:1], False)
    assert select_lots(lots, 9) == (lots[:1], True)
    assert select_lots([], 9) == ([], False)


# -- one run: events and report -------------------------------------------------------------------

def test_a_run_reports_and_emits_what_it_selected_called_checked_and_wrote(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE, "ok fine")
    note = r.note("Tom the cat sleeps on the red sofa all day.", at(minutes=5))
    reply = {"faits": [fact(ALICE, [f"{B}:1"], "Alice"),
                       fact("Alice owns 7 boats.", [f"{B}:1"], "Alice"),
                       fact("Tom the cat sleeps on the red sofa.", [note], "Tom")],
             "nouveaux_concepts": []}
    r.model.push(reply)
    report = r.provider.consolidate(at(minutes=6))
    ids = sorted(f.id for p in pages(r).values() for f in p.facts)
    assert report == {
        "statut": "ok", "lot": "c0001", "parse": "json", "admis": 2, "doublons": 0,
        "rejetes": [("Alice owns 7 boats.", "nombre absent des sources: 7")], "fiches": ["alice", "tom"],
        "aretes": 0, "en_attente": [], "nouveaux_concepts": [],
        "response_sha256": report["response_sha256"]}
    select = r.stages("consolidate.select")
    assert [(e.stage, e.count, e.ids) for e in select] == [("executed", 3, ("2026-03-01-001", note[9:]))]
    chars = len(f"User: {ALICE}") + 1 + len("User: ok fine") + 1
    assert select[0].params == {"chars": chars, "budget": 24_000, "first_lot_overrun": False, "notes": 1}
    llm = r.stages("consolidate.llm")
    assert [(e.stage, e.count) for e in llm] == [("eligible", 2), ("output", 3)]
    assert llm[1].params["parse"] == "json" and llm[1].params["response_sha256"] == report["response_sha256"]
    checker = [(e.stage, e.count) for e in r.stages("checker")]
    assert checker == [("eligible", 3), ("executed", 3), ("selected", 2)]
    executed = r.stages("checker")[1].params
    assert executed == {"accepted": 2, "rejected": [["Alice owns 7 boats.", "nombre absent des sources: 7"]]}
    assert sorted(r.stages("checker")[2].ids) == ids
    write = r.stages("consolidate.write")
    assert [(e.stage, e.count, dict(e.params)) for e in write] == [
        ("output", 2, {"pages": ["alice", "tom"], "duplicates": 0})]
    alias = r.stages("consolidate.alias")
    assert [(e.count, e.ids, dict(e.params)) for e in alias] == [
        (2, ("alice", "tom"), {"created": ["alice", "tom"]})]
    journal = r.stages("consolidate.journal")
    assert journal[0].ids == (f"{B}:1", f"{B}:2", note)
    assert journal[0].params == {"integrated_without_fact": 1, "held": [], "rejected_integrated": 0}
    assert [(e.stage, e.count) for e in r.stages("consolidate") if e.stage != "eligible"] == [("output", 2)]
    assert [e.stage for e in r.stages("consolidate.git")] == ["skipped"]
    integrated = [json.loads(x) for x in (r.root / "registre" / "integres.jsonl").read_text().splitlines()]
    assert integrated == [{"note_id": note[9:], "cite_dans": "tom", "lot_id": "c0001"}]
    assert load_progress(r.provider.paths)["integres"] == {"2026-03-01-001": [1, 2]}
    assert not (r.root / "concepts" / "thesaurus.json").exists()  # no concept used, none written


def test_the_second_run_is_lot_c0002_and_a_run_writing_nothing_is_executed_not_output(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice")]})
    assert r.provider.consolidate(at(minutes=2))["lot"] == "c0001"
    day_of(r, TOM, minutes=3)
    r.model.push({"faits": []})
    report = r.provider.consolidate(at(minutes=5))
    assert report["lot"] == "c0002" and report["admis"] == 0
    assert [(e.stage, e.count) for e in r.stages("consolidate") if e.stage != "eligible"][-1] == ("executed", 0)
    assert [e.stage for e in r.stages("consolidate.write")][-1] == "executed"
    assert [e.stage for e in r.stages("checker")][-2:] == ["eligible", "executed"]  # nothing selected
    assert load_progress(r.provider.paths)["consolidations"] == 2


def test_nothing_pending_is_ineligible_and_a_note_alone_is_enough(rig):
    r = rig(scripted=True, auto_consolidate=False)
    assert r.provider.consolidate(at()) == {"statut": "rien à consolider"}
    assert [(e.stage, e.reason) for e in r.stages("consolidate.select")] == [("ineligible", "rien en attente")]
    only_note = rig(scripted=True, auto_consolidate=False)
    only_note.note("Tom the cat sleeps on the red sofa all day.", at())
    only_note.model.push({"faits": []})
    assert only_note.provider.consolidate(at(minutes=1))["statut"] == "ok"


def test_a_model_error_is_reported_and_leaves_the_inputs_pending(tmp_path):
    def boom(messages):
        raise RuntimeError("y" * 300)

    events: list[StageEvent] = []
    provider = ExiaSeedProvider(Settings(auto_consolidate=False), complete=boom, on_event=events.append)
    provider.initialize("s1", hermes_home=tmp_path, platform="test", agent_context="primary")
    provider.sync_turn(ALICE, "", now=at())
    provider.close_batch(at(minutes=1))
    report = provider.consolidate(at(minutes=2))
    assert report == {"statut": "erreur modèle", "erreur": "y" * 200}
    assert [(e.stage, e.reason) for e in events if e.mechanism == "consolidate.llm"] == [
        ("eligible", None), ("error", "y" * 200)]
    assert load_progress(provider.paths)["integres"] == {}


def test_an_invalid_reply_leaves_the_inputs_pending_and_names_its_hash(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    r.model.push("not json at all")
    report = r.provider.consolidate(at(minutes=2))
    digest = hashlib.sha256(b"not json at all").hexdigest()
    assert report == {"statut": "json invalide", "response_sha256": digest}
    assert [(e.stage, e.reason, dict(e.params)) for e in r.stages("consolidate.llm")][-1] == (
        "error", "json invalide", {"response_sha256": digest})
    assert load_progress(r.provider.paths)["integres"] == {}


# -- the checker gate ---------------------------------------------------------------------------------

def test_with_the_checker_disabled_a_fact_needs_a_known_ref_and_text_and_keeps_its_dates(rig):
    r = rig(scripted=True, auto_consolidate=False, disabled=frozenset({"checker"}))
    day_of(r, ALICE)
    r.model.push({"faits": [
        fact("Alice owns 7 boats.", [f"{B}:1"], "Alice", date_evenement="2025-01-02", echeance="2027-03-04"),
        fact("Unknown ref only.", ["brut:nope:1"], "Alice"),
        fact("   ", [f"{B}:1"], "Alice")]})
    report = r.provider.consolidate(at(minutes=2))
    assert report["admis"] == 1
    assert report["rejetes"] == [("Unknown ref only.", "contrôle désactivé"), ("   ", "contrôle désactivé")]
    assert [(e.stage, e.reason) for e in r.stages("checker")] == [("ineligible", "disabled"), ("selected", None)]
    written = pages(r)["alice"].facts[0]
    assert (written.text, written.event, written.until) == ("Alice owns 7 boats.", "2025-01-02", "2027-03-04")


def test_a_rejected_facts_text_is_cut_to_120_characters(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    long = "Zanzibar " * 20
    r.model.push({"faits": [fact(long, [f"{B}:1"], "Alice")]})
    assert r.provider.consolidate(at(minutes=2))["rejetes"][0][0] == long[:120]


# -- writing pages -------------------------------------------------------------------------------------

def test_nodes_aliases_sections_and_fact_fields(rig):
    r = rig(scripted=True, auto_consolidate=False)
    r.provider.sync_turn(ALICE, "", now=at())
    r.provider.sync_turn(TOM, "", now=at(days=1))
    r.provider.sync_turn(PARK, "", now=at(days=1, minutes=1))
    r.provider.close_batch(at(days=1, minutes=2))
    d1, d2 = "brut:2026-03-01-001:1", "brut:2026-03-02-001:1"
    r.model.push({"faits": [
        fact(ALICE + " " + TOM, [d1, d2], "  Alice  ", section="Etat Agent", type="",
             confidentialite="Confidentiel"),
        fact(TOM, [d2], "   ", section="123", concepts=["pets", "unknown"]),
        fact("The cat Tom sleeps on the red sofa.", [d2], "Kitty", alias_de="tom"),
        fact(PARK, ["brut:2026-03-02-001:2"], "Alice", alias_de=" alice "),
        fact(PARK + " Again.", ["brut:2026-03-02-001:2"], "Parc", alias_de="   "),
    ], "nouveaux_concepts": ["pets"]})
    r.provider.consolidate(at(days=1, minutes=3))
    got = pages(r)
    assert sorted(got) == ["alice", "parc", "tom", "user"]
    alice = got["alice"]
    first = alice.facts[0]
    assert (first.section, first.type, first.privacy, first.said, first.refs, first.lot) == (
        "etat_agent", "fait", "confidential", "2026-03-02", sorted([d1, d2]), "c0001")
    assert alice.privacy == "confidential" and alice.aliases == []  # alias_de equal to the node: no alias
    user = got["user"].facts[0]
    assert (user.section, user.concepts) == ("episodic", ["pets"])
    assert got["tom"].aliases == ["Kitty"] and got["tom"].facts[0].text == "The cat Tom sleeps on the red sofa."
    assert got["parc"].aliases == []
    assert json.loads((r.root / "concepts" / "thesaurus.json").read_text()) == {"vocabulaire": ["pets"]}


def test_an_alias_de_naming_the_node_itself_keeps_the_nodes_spelling(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice Martin", alias_de="alice martin")]})
    r.provider.consolidate(at(minutes=2))
    page = pages(r)["alice-martin"]
    assert (page.name, page.aliases) == ("Alice Martin", [])


def test_french_facts_without_node_go_to_the_users_page(rig):
    r = rig(scripted=True, auto_consolidate=False, language="fr")
    r.provider.sync_turn("Mon chat Tom dort sur le canapé rouge toute la journée.", "", now=at())
    r.provider.close_batch(at(minutes=1))
    r.model.push({"faits": [{"fait": "Mon chat Tom dort sur le canapé rouge.", "sources": [f"{B}:1"]}]})
    r.provider.consolidate(at(minutes=2))
    assert list(pages(r)) == ["utilisateur"]


def test_a_duplicate_is_counted_and_the_facts_after_it_are_still_written(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE, TOM)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice"), fact(ALICE, [f"{B}:1"], "Alice", concepts=["family"]),
                            fact(TOM, [f"{B}:2"], "Tom")], "nouveaux_concepts": ["family"]})
    report = r.provider.consolidate(at(minutes=3))
    assert (report["admis"], report["doublons"], report["fiches"]) == (2, 1, ["alice", "tom"])
    assert report["nouveaux_concepts"] == []  # only the duplicate used it
    assert r.stages("consolidate.write")[0].params == {"pages": ["alice", "tom"], "duplicates": 1}


def test_a_page_privacy_is_never_lowered_nor_replaced_by_an_equal_rank(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE, TOM, PARK)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice", confidentialite="private"),
                            fact(TOM, [f"{B}:2"], "Alice", confidentialite="normal")]})
    r.provider.consolidate(at(minutes=4))
    alice = pages(r)["alice"]
    assert alice.privacy == "private"
    alice.privacy = "interne"  # a label this version does not rank (e.g. written by hand)
    alice.write(r.root / "fiches")
    r.provider.sync_turn(PARK + " Truly.", "", now=at(minutes=5))
    r.provider.close_batch(at(minutes=6))
    r.model.push({"faits": [fact(PARK, ["brut:2026-03-01-002:1"], "Alice")]})
    r.provider.consolidate(at(minutes=7))
    assert pages(r)["alice"].privacy == "interne"
    # A private fact does outrank the unranked label.
    r.provider.sync_turn(PARK + " Surely.", "", now=at(minutes=8))
    r.provider.close_batch(at(minutes=9))
    r.model.push({"faits": [fact(PARK + " Surely.", ["brut:2026-03-01-003:1"], "Alice", confidentialite="private")]})
    r.provider.consolidate(at(minutes=10))
    assert pages(r)["alice"].privacy == "private"


def test_a_superseded_value_is_reported(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, "I live in Lisbon these days with my family.", "I live in Porto these days with my family.")
    r.model.push({"faits": [
        fact("I live in Lisbon these days.", [f"{B}:1"], "user", attribut="lives in", valeur="Lisbon"),
        fact("I live in Porto these days.", [f"{B}:2"], "user", attribut="  lives   in ", valeur=" Porto "),
        fact("I live in Porto these days with my family.", [f"{B}:2"], "user", attribut="lives in", valeur=""),
    ]})
    r.provider.consolidate(at(minutes=3))
    facts = pages(r)["user"].facts
    assert [(f.key, f.value) for f in facts] == [("lives in", "Lisbon"), ("lives in", "Porto"), (None, None)]
    assert facts[0].superseded_by == facts[1].id
    params = r.stages("consolidate.write")[0].params
    assert params == {"pages": ["user"], "duplicates": 0, "superseded": [facts[0].id]}


def test_summaries_are_written_with_the_pages_unless_switched_off(rig):
    on = rig(scripted=True, auto_consolidate=False)
    day_of(on, ALICE)
    on.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice")]})
    on.provider.consolidate(at(minutes=2))
    assert pages(on)["alice"].summary == ALICE
    for settings in ({"summaries_on_consolidate": False}, {"disabled": frozenset({"summaries"})}):
        off = rig(scripted=True, auto_consolidate=False, **settings)
        day_of(off, ALICE)
        off.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice")]})
        off.provider.consolidate(at(minutes=2))
        assert pages(off)["alice"].summary == ""


def test_a_fact_from_a_note_is_said_on_the_notes_day(rig):
    r = rig(scripted=True, auto_consolidate=False)
    note = r.note("Tom the cat sleeps on the red sofa all day.", at(days=3))
    r.model.push({"faits": [fact("Tom the cat sleeps on the red sofa.", [note], "Tom")]})
    r.provider.consolidate(at(days=3, minutes=1))
    assert pages(r)["tom"].facts[0].said == "2026-03-04"


def test_the_assistants_lines_are_agent_sources(rig):
    r = rig(scripted=True, auto_consolidate=False)
    r.provider.sync_turn("thanks", "Your flight to Oslo departs at seven from gate twelve.", now=at())
    r.provider.close_batch(at(minutes=1))
    r.model.push({"faits": [fact("The flight to Oslo departs at seven from gate twelve.", [f"{B}:2"], "Oslo")]})
    report = r.provider.consolidate(at(minutes=2))
    assert report["rejetes"] == [("The flight to Oslo departs at seven from gate twelve.",
                                  "repose seulement sur des paroles de l'agent")]


# -- journals (E-9 and its repair) ----------------------------------------------------------------

@pytest.mark.parametrize("retries", [2, 3])
def test_the_repair_holds_inputs_behind_rejected_facts_for_max_retries_runs(rig, retries):
    r = rig(scripted=True, auto_consolidate=False, fix={"journal_only_admitted": True}, max_retries=retries)
    day_of(r, ALICE, TOM)
    note = r.note("An uncited note about the garden shed.", at(minutes=3))
    held_by_run = []
    for run in range(retries):
        r.model.push({"faits": [fact("Alice owns 7 boats.", [f"{B}:1"], "Alice"), fact(TOM, [f"{B}:2"], "Tom")]})
        report = r.provider.consolidate(at(minutes=4 + run))
        held_by_run.append(report["en_attente"])
        journal = r.stages("consolidate.journal")[-1]
        assert journal.params["held"] == report["en_attente"]
    assert held_by_run == [[f"{B}:1", note]] * (retries - 1) + [[]]
    progress = load_progress(r.provider.paths)
    assert progress["tentatives"] == {f"{B}:1": retries, note: retries}
    assert progress["integres"] == {"2026-03-01-001": [1, 2]}
    assert journal.params["rejected_integrated"] == 0
    integrated = [json.loads(x) for x in (r.root / "registre" / "integres.jsonl").read_text().splitlines()]
    assert integrated == [{"note_id": note[9:], "cite_dans": "", "lot_id": f"c{retries:04d}"}]


def test_the_seed_journal_integrates_inputs_behind_rejected_facts_and_counts_them(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE, TOM)
    r.model.push({"faits": [fact("Alice owns 7 boats.", [f"{B}:1"], "Alice"), fact(TOM, [f"{B}:2"], "Tom"),
                            fact("Tom owns 9 sofas.", [f"{B}:2"], "Tom")]})
    report = r.provider.consolidate(at(minutes=3))
    assert report["en_attente"] == []
    assert r.stages("consolidate.journal")[-1].params == {
        "integrated_without_fact": 1, "held": [], "rejected_integrated": 1}
    assert load_progress(r.provider.paths)["tentatives"] == {}


def test_a_repair_limit_of_zero_or_one_holds_nothing(rig):
    for retries in (0, 1):
        r = rig(scripted=True, auto_consolidate=False, fix={"journal_only_admitted": True}, max_retries=retries)
        day_of(r, ALICE)
        r.model.push({"faits": [fact("Alice owns 7 boats.", [f"{B}:1"], "Alice")]})
        assert r.provider.consolidate(at(minutes=2))["en_attente"] == []
        assert load_progress(r.provider.paths)["integres"] == {"2026-03-01-001": [1]}


def test_a_confidential_fact_raises_a_private_page(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE, TOM)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice", confidentialite="private"),
                            fact(TOM, [f"{B}:2"], "Alice", confidentialite="confidential")]})
    r.provider.consolidate(at(minutes=3))
    assert pages(r)["alice"].privacy == "confidential"


def test_new_concepts_are_only_the_ones_this_run_added_to_the_vocabulary(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice", concepts=["family"])], "nouveaux_concepts": ["family"]})
    assert r.provider.consolidate(at(minutes=2))["nouveaux_concepts"] == ["family"]
    day_of(r, TOM, minutes=3)
    r.model.push({"faits": [fact(TOM, ["brut:2026-03-01-002:1"], "Tom", concepts=["pets"])],
                  "nouveaux_concepts": ["pets"]})
    assert r.provider.consolidate(at(minutes=5))["nouveaux_concepts"] == ["pets"]
    day_of(r, PARK, minutes=6)
    r.model.push({"faits": [fact(PARK, ["brut:2026-03-01-003:1"], "Park", concepts=["family"])],
                  "nouveaux_concepts": ["family"]})  # proposed again though known: still a known concept
    assert r.provider.consolidate(at(minutes=8))["nouveaux_concepts"] == []
    assert pages(r)["park"].facts[0].concepts == ["family"]
    assert json.loads((r.root / "concepts" / "thesaurus.json").read_text()) == {"vocabulaire": ["family", "pets"]}


def test_the_journal_waits_for_the_raw_writers_lock(rig):
    r = rig(scripted=True, auto_consolidate=False)
    day_of(r, ALICE)
    r.model.push({"faits": [fact(ALICE, [f"{B}:1"], "Alice")]})
    result: dict = {}
    with file_lock(r.root / "brut" / ".verrou", blocking=True):
        worker = threading.Thread(target=lambda: result.setdefault("report", r.provider.consolidate(at(minutes=2))))
        worker.start()
        time.sleep(0.3)
        waited = worker.is_alive()
    worker.join(120)
    assert waited and result["report"]["statut"] == "ok" and result["report"]["admis"] == 1
    assert load_progress(r.provider.paths)["integres"] == {"2026-03-01-001": [1]}
