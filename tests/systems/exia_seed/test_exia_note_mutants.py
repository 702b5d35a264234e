"""EXIA's note admission and the rules model's request reading, exactly: which notes are written
(the primary-context rule and its `fix.primary_only_notes` repair, empty notes, secrets), what a
written note holds, the `tool.note` events and replies; `speaker_of`; `RulesModel.consolidate`.

Killing tests for scripts/mutation/exia-note.toml (provider.py `_note`; rules.py `speaker_of`,
`RulesModel.consolidate`). The sentences are LoCoMo conv-26-style turns copied here.
"""

from __future__ import annotations

import json

import pytest
from exia_testkit import at
from lsrep.systems.exia_seed.rules import speaker_of

TEXT = "Caroline went to a LGBTQ support group on May 7."


def notes(r) -> list[dict]:
    path = r.root / "registre" / "notes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def note_events(r) -> list[tuple]:
    return [(e.stage, e.reason, e.count, e.ids, e.refs, dict(e.params)) for e in r.events
            if e.mechanism == "tool.note"]


# -- _note: what is written -----------------------------------------------------------------------

@pytest.mark.parametrize("context", ["primary", None, ""])
def test_a_primary_note_is_written_with_its_context_and_event(rig, context):
    r = rig(context=context)
    reply = r.tool("memoire_noter", at(), texte=f"  {TEXT}  ", noeud="Caroline")
    assert reply == {"ok": True, "id": "n00001"}
    assert notes(r) == [{"id": "n00001", "texte": TEXT, "confidentialite": "normal", "noeud": "Caroline",
                         "ts": at().isoformat(), "contexte": "primary"}]
    assert note_events(r) == [("eligible", None, None, (), (), {}),
                              ("output", None, 1, ("n00001",), ("registre:n00001",),
                               {"context": "primary", "source": "tool"})]


def test_a_second_note_gets_the_next_id_and_its_privacy(rig):
    r = rig()
    assert r.tool("memoire_noter", at(), texte=TEXT)["id"] == "n00001"
    reply = r.tool("memoire_noter", at(minutes=5), texte="Caroline's adoption papers are private.",
                   confidentialite="confidential")
    assert reply == {"ok": True, "id": "n00002"}
    written = notes(r)
    assert [(n["id"], n["confidentialite"], n["noeud"], n["ts"]) for n in written] == [
        ("n00001", "normal", None, at().isoformat()), ("n00002", "confidential", None, at(minutes=5).isoformat())]


@pytest.mark.parametrize("privacy", [None, ""])
def test_a_missing_privacy_is_normal(rig, privacy):
    r = rig()
    r.tool("memoire_noter", at(), texte=TEXT, confidentialite=privacy)
    assert notes(r)[0]["confidentialite"] == "normal"


@pytest.mark.parametrize("fix", [False, True])
def test_a_primary_note_is_admitted_with_or_without_the_repair(rig, fix):
    r = rig(fix={"primary_only_notes": fix})
    assert r.tool("memoire_noter", at(), texte=TEXT) == {"ok": True, "id": "n00001"}
    assert [n["texte"] for n in notes(r)] == [TEXT]


def test_e1_a_subagent_note_is_admitted_with_its_context(rig):
    r = rig(context="subagent")
    assert r.tool("memoire_noter", at(), texte=TEXT) == {"ok": True, "id": "n00001"}
    assert [(n["texte"], n["contexte"]) for n in notes(r)] == [(TEXT, "subagent")]
    assert note_events(r)[-1] == ("output", None, 1, ("n00001",), ("registre:n00001",),
                                  {"context": "subagent", "source": "tool"})


@pytest.mark.parametrize("text", [TEXT, "", "   "])
def test_e1_repair_refuses_a_subagent_note_before_reading_it(rig, text):
    r = rig(context="subagent", fix={"primary_only_notes": True})
    assert r.tool("memoire_noter", at(), texte=text) == {"error": "notes réservées au contexte principal"}
    assert notes(r) == []
    assert note_events(r) == [("eligible", None, None, (), (), {}),
                              ("skipped", "contexte non primaire", None, (), (), {})]


@pytest.mark.parametrize("args", [{"texte": ""}, {"texte": "   \n "}, {}])
def test_an_empty_note_is_refused_without_a_skip_event(rig, args):
    r = rig()
    assert r.tool("memoire_noter", at(), **args) == {"error": "note vide"}
    assert notes(r) == []
    assert note_events(r) == [("eligible", None, None, (), (), {})]


def test_a_note_with_a_secret_is_refused(rig):
    r = rig()
    reply = r.tool("memoire_noter", at(), texte="Caroline's wifi password: hunter2")
    assert reply == {"error": "la note contient un secret"}
    assert notes(r) == []
    assert note_events(r) == [("eligible", None, None, (), (), {}), ("skipped", "secret", None, (), (), {})]


def test_a_mirrored_memory_write_is_a_note_with_its_source(rig):
    r = rig()
    r.provider.on_memory_write("remove", "USER.md", "Caroline likes tea.", now=at())
    assert [(n["texte"], n["noeud"], n["contexte"]) for n in notes(r)] == [
        ("user removed: Caroline likes tea.", None, "primary")]
    assert note_events(r) == [("output", None, 1, ("n00001",), ("registre:n00001",),
                               {"context": "primary", "source": "mirror"})]


# -- speaker_of ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("User: [Caroline] I went to a support group.", ("Caroline", "I went to a support group.")),
    ("[Melanie] I ran a charity race.", ("Melanie", "I ran a charity race.")),
    ("User: I ran a charity race.", (None, "I ran a charity race.")),
    ("I ran a charity race.", (None, "I ran a charity race.")),
    ("Note: [Caroline] x", ("Caroline", "x")),
    ("[Caroline]no space", (None, "[Caroline]no space")),
    ("User: Assistant: [Caroline] x", (None, "Assistant: [Caroline] x")),
    ("Ratio 3:1 today.", (None, "Ratio 3:1 today.")),
])
def test_speaker_of(text, expected):
    assert speaker_of(text) == expected
