"""EXIA identity summaries (summaries.py), pinned where the `exia-ingest` mutation session found
them loose: the excerpt budget at its exact boundary, each summary control and its reason, what a
pass sets and reports, which pages a refresh picks, the lock with `fix.summary_lock`, and the
E-16 detector's lost facts."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lsrep.systems.exia_seed import Fixes, Settings, StageEvent
from lsrep.systems.exia_seed.events import Emitter
from lsrep.systems.exia_seed.files import MemoryPaths, file_lock
from lsrep.systems.exia_seed.pages import Fact, Page, load_pages
from lsrep.systems.exia_seed.summaries import _parse, excerpt, refresh_summaries, summarise, veto

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def fact(fid: str, text: str, section: str = "episodic") -> Fact:
    return Fact(id=fid, text=text, section=section, refs=[f"brut:b1:{fid}"], said="2026-03-01")


def rex_page() -> Page:
    page = Page(slug="rex", name="Rex", aliases=["Rexy"], facts=[
        fact("e1", "Rex loves the park near Lyon"), fact("e2", "Rex was born in 2019"),
        fact("p1", "Always give Rex water", "procedural")])
    page.rechain()
    return page


class Model:
    """Answers summary requests with a fixed reply and records the excerpts it was shown."""

    def __init__(self, reply: str | dict | Exception) -> None:
        self.reply = reply
        self.seen: list[list[str]] = []

    def __call__(self, messages):
        body = messages[-1]["content"].splitlines()
        self.seen.append(body[2:])
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply if isinstance(self.reply, str) else json.dumps(self.reply)


def collect() -> tuple[Emitter, list[StageEvent]]:
    events: list[StageEvent] = []
    return Emitter(events.append), events


# -- excerpt budget -------------------------------------------------------------------------------

def test_the_excerpt_takes_procedural_lines_first_while_len_plus_3_fits():
    page = rex_page()
    lines = ["- Always give Rex water", "- Rex loves the park near Lyon", "- Rex was born in 2019"]
    full = sum(len(x) + 3 for x in lines)
    assert excerpt(page, full) == (lines, ["p1", "e1", "e2"])
    assert excerpt(page, full - 1) == (lines[:2], ["p1", "e1"])
    assert excerpt(page, len(lines[0]) + 3) == (lines[:1], ["p1"])
    assert excerpt(page, len(lines[0]) + 2) == ([], [])


def test_the_excerpt_stops_at_the_first_line_that_does_not_fit():
    page = Page(slug="a", name="A", facts=[fact("x1", "a rather long first line here"), fact("x2", "short")])
    assert excerpt(page, len("- short") + 3 + 5) == ([], [])


# -- summary controls -----------------------------------------------------------------------------

@pytest.mark.parametrize(("summary", "reason"), [
    ("", "résumé vide"),
    ("   ", "résumé vide"),
    ("Rex is a dog who likes Paris.", "nom absent de la fiche: Paris"),
    ("Rex, born in 2019, has 4 toys and 12 balls.", "nombre absent de la fiche: 12"),
    ("Rex is described in notes/rex.md of the archive.", "chemin dans le résumé"),
    ("Rex is a dog near Lyon, born 2019.", None),
    ("The dog Rexy loves the park.", None),  # an alias is a name of the page
    ("Rex drinks water, always.", None),
])
def test_each_summary_control_gives_its_reason(summary, reason):
    assert veto(summary, rex_page(), Settings()) == reason


def test_the_length_control_allows_exactly_the_maximum():
    settings = replace(Settings(), summary_max_chars=20)
    assert veto("Rex loves the park!!", rex_page(), settings) is None  # 20 characters
    assert veto("Rex loves the park!!!", rex_page(), settings) == "résumé trop long"


# -- one summary pass -----------------------------------------------------------------------------

def test_a_pass_sets_summary_keywords_sources_and_reports_a_change():
    page, (emit, events) = rex_page(), collect()
    model = Model({"resume": "  Rex   is a dog near Lyon. ", "mots_cles": ["dog", 7, None, ["x"], *"abcdefgh"]})
    assert summarise(page, model, Settings(), emit) is True
    assert page.summary == "Rex is a dog near Lyon."
    assert page.keywords == ["dog", "7", "a", "b", "c", "d", "e", "f"]
    assert page.summary_sources == ["p1", "e1", "e2"] and page.summary_of == page.hash
    assert model.seen == [["- Always give Rex water", "- Rex loves the park near Lyon", "- Rex was born in 2019"]]
    assert [(e.mechanism, e.stage, e.ids, e.count, dict(e.params)) for e in events] == [
        ("summaries", "output", ("rex",), 1, {"changed": True})]
    events.clear()
    assert summarise(page, model, Settings(), emit) is False  # same summary and keywords again
    assert [dict(e.params) for e in events] == [{"changed": False}]


def test_a_new_keyword_alone_is_a_change():
    page, (emit, _) = rex_page(), collect()
    summarise(page, Model({"resume": "Rex is a dog.", "mots_cles": ["dog"]}), Settings(), emit)
    assert summarise(page, Model({"resume": "Rex is a dog.", "mots_cles": ["pet"]}), Settings(), emit) is True


def test_a_page_without_excerpt_lines_is_not_summarised():
    model, (emit, events) = Model({"resume": "Empty."}), collect()
    assert summarise(Page(slug="e", name="E"), model, Settings(), emit) is False
    assert model.seen == [] and events == []


def test_a_failed_or_vetoed_pass_keeps_the_older_summary():
    page, (emit, events) = rex_page(), collect()
    page.summary = "Rex is a dog."
    assert summarise(page, Model(RuntimeError("x" * 300)), Settings(), emit) is False
    assert summarise(page, Model("not json"), Settings(), emit) is False
    assert summarise(page, Model({"resume": "Rex lives in Paris."}), Settings(), emit) is False
    assert page.summary == "Rex is a dog."
    assert [(e.stage, e.reason, e.ids) for e in events] == [
        ("error", "x" * 200, ("rex",)),
        ("error", "Expecting value: line 1 column 1 (char 0)", ("rex",)),
        ("skipped", "nom absent de la fiche: Paris", ("rex",))]


def test_the_reply_may_come_in_a_code_fence_but_must_be_an_object():
    assert _parse('```json\n{"resume": "Rex."}\n```') == {"resume": "Rex."}
    assert _parse('```\n{"resume": "Rex."}```') == {"resume": "Rex."}
    with pytest.raises(ValueError, match="non conforme"):
        _parse('["Rex."]')


# -- the refresh writer ---------------------------------------------------------------------------

def store(tmp_path: Path, *pages: Page) -> MemoryPaths:
    paths = MemoryPaths(tmp_path / "mem")
    for page in pages:
        page.write(paths.fiches)
    return paths


def stale_and_fresh(tmp_path: Path) -> MemoryPaths:
    fresh = rex_page()
    fresh.summary, fresh.summary_of = "Rex is a dog.", fresh.hash
    stale = Page(slug="lyon", name="Lyon", summary="Old.", summary_of="0" * 64,
                 facts=[fact("l1", "Lyon has a big park")])
    stale.rechain()
    missing = Page(slug="oslo", name="Oslo", facts=[fact("o1", "Oslo has a fjord")])
    missing.rechain()
    missing.summary_of = missing.hash  # current hash, but no summary yet
    # Stale hashes on both sides of the current one in string order.
    later = Page(slug="nice", name="Nice", summary="Old.", summary_of="f" * 64,
                 facts=[fact("n1", "Nice has a long beach")])
    later.rechain()
    return store(tmp_path, fresh, stale, missing, later)


def test_a_refresh_picks_stale_and_missing_summaries_or_every_page(tmp_path):
    paths, (emit, events) = stale_and_fresh(tmp_path), collect()
    model = Model({"resume": "A place."})
    report = refresh_summaries(paths, Settings(), model, emit, NOW)
    assert report == {"statut": "ok", "propositions": {"lyon": "A place.", "nice": "A place.", "oslo": "A place."},
                      "ecrit": True, "ecrasements": {}}
    assert sorted(model.seen) == [["- Lyon has a big park"], ["- Nice has a long beach"], ["- Oslo has a fjord"]]
    assert [(e.stage, e.count, e.ids) for e in events if e.mechanism == "maintenance.refresh_summaries"] == [
        ("eligible", None, ()), ("executed", 3, ("lyon", "nice", "oslo"))]
    assert events[0].params == {"write": True, "all": False, "lock": False}
    assert load_pages(paths.fiches)["lyon"].summary == "A place."
    assert not paths.index.exists() and not paths.aretes.exists()  # the seed's writer rebuilds nothing (E-16)
    every = Model({"resume": "A thing."})
    refresh_summaries(paths, Settings(), every, emit, NOW, all_pages=True, write=False)
    assert len(every.seen) == 4
    assert load_pages(paths.fiches)["rex"].summary == "Rex is a dog."  # not written


def test_without_write_nothing_is_written(tmp_path):
    paths, (emit, _) = stale_and_fresh(tmp_path), collect()
    before = {p.name: p.read_text() for p in paths.fiches.glob("*.md")}
    report = refresh_summaries(paths, Settings(), Model({"resume": "A place."}), emit, NOW, write=False)
    assert report["ecrit"] is False and sorted(report["propositions"]) == ["lyon", "nice", "oslo"]
    assert {p.name: p.read_text() for p in paths.fiches.glob("*.md")} == before


def test_the_locked_writer_rebuilds_index_and_graph_or_reports_the_lock(tmp_path):
    locked = replace(Settings(), fix=Fixes(summary_lock=True))
    paths, (emit, events) = stale_and_fresh(tmp_path), collect()
    refresh_summaries(paths, locked, Model({"resume": "A place."}), emit, NOW)
    assert "A place." in paths.index.read_text() and json.loads(paths.aretes.read_text())["generation"] == 1
    assert events[0].params == {"write": True, "all": False, "lock": True}
    events.clear()
    with file_lock(paths.lock, blocking=True):
        report = refresh_summaries(paths, locked, Model({"resume": "A place."}), emit, NOW, all_pages=True)
    assert report == {"statut": "verrou occupé"}
    assert [(e.stage, e.reason) for e in events] == [("eligible", None), ("skipped", "verrou occupé")]
    # Without the flag the lock is not taken, so a held lock does not stop the writer (E-16).
    with file_lock(paths.lock, blocking=True):
        assert refresh_summaries(paths, Settings(), Model({"resume": "A place."}), emit, NOW,
                                 all_pages=True)["statut"] == "ok"


def test_e16_a_concurrent_write_is_reported_with_the_facts_it_erases(tmp_path):
    paths, (emit, events) = stale_and_fresh(tmp_path), collect()

    def consolidation_writes():
        lyon = load_pages(paths.fiches)["lyon"]
        lyon.add_fact(fact("l2", "Lyon hosts a light festival"))
        lyon.add_fact(fact("l0", "Lyon sits on two rivers"))
        lyon.write(paths.fiches)
        rex = load_pages(paths.fiches)["rex"]  # not proposed: its write is not overwritten
        rex.add_fact(fact("e9", "Rex found a stick"))
        rex.write(paths.fiches)

    report = refresh_summaries(paths, Settings(), Model({"resume": "A place."}), emit, NOW,
                               concurrent=consolidation_writes)
    assert report["ecrasements"] == {"lyon": ["l0", "l2"]}
    errors = [e for e in events if e.stage == "error"]
    assert [(e.ids, dict(e.params), e.reason) for e in errors] == [
        (("l0", "l2"), {"page": "lyon", "lost_facts": 2},
         "E-16: écriture concurrente écrasée sur lyon (2 fait(s) perdu(s))")]
    assert [f.id for f in load_pages(paths.fiches)["lyon"].facts] == ["l1"]  # the seed's lost write
    assert "Rex found a stick" in (paths.fiches / "rex.md").read_text()


def test_a_page_deleted_meanwhile_or_unchanged_loses_nothing(tmp_path):
    paths, (emit, events) = stale_and_fresh(tmp_path), collect()
    report = refresh_summaries(paths, Settings(), Model({"resume": "A place."}), emit, NOW,
                               concurrent=lambda: (paths.fiches / "lyon.md").unlink())
    assert report["ecrasements"] == {} and [e for e in events if e.stage == "error"] == []
    assert load_pages(paths.fiches)["lyon"].summary == "A place."  # written again


def test_the_refresh_flags_are_keyword_only(tmp_path):
    # A positional `False` must not silently become `write=False`.
    paths, (emit, _) = stale_and_fresh(tmp_path), collect()
    with pytest.raises(TypeError):
        refresh_summaries(paths, Settings(), Model({"resume": "A place."}), emit, NOW, False)  # type: ignore[misc]
