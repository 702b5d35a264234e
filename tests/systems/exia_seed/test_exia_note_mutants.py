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
from lsrep.systems.exia_seed.prompts import Source, consolidation_messages
from lsrep.systems.exia_seed.rules import RulesModel, speaker_of

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


# -- RulesModel.consolidate ----------------------------------------------------------------------

SAID = "2023-05-08"


def facts(sources, nodes=()) -> list[tuple]:
    """(fait, sources, noeud, date_evenement, type, echeance) of the rules model's reply."""
    messages = consolidation_messages("en", [Source(ref, text, agent, day) for ref, text, agent, day in sources],
                                      list(nodes), [])
    reply = json.loads(RulesModel().complete(messages))
    assert set(reply) == {"faits", "nouveaux_concepts"} and reply["nouveaux_concepts"] == []
    return [(f["fait"], f["sources"], f["noeud"], f["date_evenement"], f["type"], f["echeance"]) for f in reply["faits"]]


def test_user_lines_and_notes_make_facts_agent_lines_none():
    assert facts([
        ("brut:b1:1", "User: [Caroline] I went to a LGBTQ support group on May 7. The talks there made me hopeful about adopting kids.", False, SAID),
        ("brut:b1:2", "Assistant: That sounds like a powerful day at the support group for you.", True, SAID),
        ("registre:n00001", "Ana: Tomas is allergic to hazelnuts, so no praline.", False, "2024-05-09"),
        ("registre:n00002", "I paint sunsets by the lake on May 20 with my kids.", False, "2024-05-09"),
    ]) == [
        ("Caroline: I went to a LGBTQ support group on May 7.", ["brut:b1:1"], "Caroline", "2023-05-07", "fait", None),
        ("Caroline: The talks there made me hopeful about adopting kids.", ["brut:b1:1"], "Caroline", None, "fait", None),
        # a note is read as written: no label stripped, no speaker prefix
        ("Ana: Tomas is allergic to hazelnuts, so no praline.", ["registre:n00001"], "Tomas", None, "fait", None),
        # its own day: May 20 of 2024, after the note's day, so prospective
        ("I paint sunsets by the lake on May 20 with my kids.", ["registre:n00002"], "user", "2024-05-20",
         "prospective", "2024-05-20"),
    ]


def test_a_name_said_mid_sentence_in_another_source_is_a_node():
    jon = ("brut:b1:2", "User: [Caroline] Jon painted a huge sunset by the lake last weekend.", False, SAID)
    assert facts([jon])[0][2] == "Caroline"     # a sentence's first word alone is no name
    assert facts([("brut:b1:1", "User: [Caroline] I met Jon at the pottery class last week.", False, SAID),
                  jon])[1][2] == "Jon"


def test_a_speaker_addressed_by_name_is_not_the_node():
    wow = ("brut:b1:2", "User: [Caroline] Wow Melanie, the kids loved the pottery workshop last week.", False, SAID)
    assert facts([wow])[0][2] == "Melanie"
    assert facts([("brut:b1:1", "User: [Melanie] I ran a charity race for mental health last Saturday.", False, SAID),
                  wow])[1][2] == "Caroline"
    # a speaker of an agent line counts too
    assert facts([("brut:b1:1", "Assistant: [Melanie] Lovely to hear that.", True, SAID), wow])[0][2] == "Caroline"


def test_an_existing_nodes_alias_names_the_node():
    caro = ("brut:b1:2", "User: [Melanie] The kids saw Caro painting at the beach yesterday.", False, SAID)
    assert facts([caro])[0][2] == "Caro"
    assert facts([caro], nodes=[("Caroline", ["Caro"])])[0][2] == "Caroline"
    # a node's own name, matched folded, is given as the catalogue spells it
    zoe = ("brut:b1:3", "User: [Melanie] The kids saw Zoe painting at the beach yesterday.", False, SAID)
    assert facts([zoe])[0][2] == "Zoe"
    assert facts([zoe], nodes=[("Zoë", ["Zozo"])])[0][2] == "Zoë"
