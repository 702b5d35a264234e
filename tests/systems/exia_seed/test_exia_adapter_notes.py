"""The adapter's agent context and note-tool policy (EXIA E-1: notes admitted from non-primary contexts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from exia_testkit import at
from lsrep.adapters.exia_seed import ExiaSeedAdapter, Options
from lsrep.adapters.exia_seed.adapter import NOTE_REQUEST, requested_note

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn

CHAT = [
    ("user", "Ana", "My sister Rita is getting married in Porto and I'm baking the cake."),
    ("assistant", None, "How lovely! Any allergies to keep in mind?"),
    ("user", "Ana", "Good question! Please remember that Tomas is allergic to hazelnuts, so no praline."),
    ("assistant", None, "Noted."),
]


def make(tmp_path: Path, **options) -> tuple[ExiaSeedAdapter, list[FidelityEvent]]:
    adapter = ExiaSeedAdapter(AdapterSetup(options=Options(**options), state_dir=tmp_path / "state"))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    adapter.reset(conversation_id="c1", now=at())
    return adapter, events


def turn(i: int, role: str, speaker: str | None, content: str) -> ReplayTurn:
    return ReplayTurn(turn_id=f"t{i}", session_id="s1", conversation_id="c1", index=i, timestamp=at(minutes=i),
                      role=role, speaker=speaker, content=content)


def feed(adapter: ExiaSeedAdapter) -> None:
    for i, (role, speaker, content) in enumerate(CHAT):
        adapter.ingest(turn(i, role, speaker, content), now=at(minutes=i))
    adapter.end_session("s1", now=at(minutes=10))
    adapter.maintain("consolidate", now=at(minutes=11))


def stages(events: list[FidelityEvent], mechanism: str) -> list[FidelityEvent]:
    return [e for e in events if e.mechanism == mechanism]


@pytest.mark.parametrize("text", [
    "Please remember that my locker code at the gym is 4417.",
    "Can you note that Tomas's parents land in Lisbon on June 4?",
    "Could you keep in mind that I don't eat pork?",
    "Make a note of this: the vet is Dr. Sousa on Rua Augusta.",
    "For future reference, the spare key is under the blue pot.",
])
def test_a_request_to_keep_something_is_a_note_request(text):
    assert NOTE_REQUEST.search(text)


@pytest.mark.parametrize("text", [
    "Remember that staying positive is very important.",  # advice to the other person
    "Please remember to take breaks and dance it out!",
    "Just remember to pause, reflect, and take care of yourself.",
    "I'll always remember our camping trip last year.",
    "Yeah, I remember you mentioning those areas.",
    "Remember when we volunteered together last year?",
    "Don't forget to take some nice pictures!",
])
def test_advice_and_reminiscing_are_not_note_requests(text):
    assert not NOTE_REQUEST.search(text)


def test_no_locomo_turn_is_a_note_request(shared):
    # 3,944 turns of two people talking; dozens say "remember" or "don't forget", none to an assistant.
    data = json.loads((shared / "datasets" / "locomo" / "locomo-dev7.json").read_text())
    texts = [t["text"] for conv in data for key, turns in conv["conversation"].items()
             if key.startswith("session_") and isinstance(turns, list) for t in turns]
    assert len(texts) > 3000 and sum("remember" in t.lower() for t in texts) > 20
    assert [t for t in texts if NOTE_REQUEST.search(t)] == []


def test_the_note_is_what_follows_the_request_as_the_speakers_statement():
    assert requested_note(turn(0, "user", "Ana", CHAT[2][2])) == "Ana: Tomas is allergic to hazelnuts, so no praline."
    asked = turn(0, "user", "Ana", "Almost. Can you note that Tomas's parents fly in from Recife on June 4?")
    assert requested_note(asked) == "Ana: Tomas's parents fly in from Recife on June 4."
    assert requested_note(turn(0, "user", None, "Make a note of this: the vet is Dr. Sousa.")) == "the vet is Dr. Sousa."
    assert requested_note(turn(0, "user", "Ana", "Please remember to call Rita.")) is None


def test_by_default_the_host_never_notes_and_says_so(tmp_path):
    adapter, events = make(tmp_path, phase=2)
    feed(adapter)
    notes = stages(events, "exia.tool.note")
    assert [e.stage for e in notes] == ["skipped"] and "never calls the note tool" in notes[0].reason
    notes_file = adapter.state_dir / "exia_seed" / "registre" / "notes.jsonl"
    assert not notes_file.exists() or not notes_file.read_text().strip()


def test_a_primary_host_notes_a_request_and_captures_the_turn(tmp_path):
    adapter, events = make(tmp_path, phase=2, notes="on-request")
    feed(adapter)
    (note,) = [e for e in stages(events, "exia.tool.note") if e.stage == "output"]
    assert note.params == {"context": "primary", "source": "tool"}
    assert [e.stage for e in stages(events, "exia.ingest.gate")].count("executed") == 2


def test_e1_a_subagent_captures_nothing_yet_its_note_reaches_memory(tmp_path):
    adapter, events = make(tmp_path, phase=2, notes="on-request", agent_context="subagent")
    feed(adapter)
    gate = stages(events, "exia.ingest.gate")
    assert "executed" not in {e.stage for e in gate}
    assert {e.reason for e in gate if e.stage == "skipped"} == {"contexte non primaire"}
    (note,) = [e for e in stages(events, "exia.tool.note") if e.stage == "output"]
    assert note.params == {"context": "subagent", "source": "tool"}  # E-1: admitted from a subagent
    result = adapter.query("What is Tomas allergic to?", now=at(minutes=30))
    assert any("hazelnuts" in f.text for f in result.fragments)  # the only memory it has is the note


def test_e1_repair_refuses_the_subagents_note(tmp_path):
    adapter, events = make(tmp_path, phase=2, notes="on-request", agent_context="subagent",
                           fix_primary_only_notes=True)
    feed(adapter)
    notes = stages(events, "exia.tool.note")
    assert "output" not in {e.stage for e in notes}
    assert [e.reason for e in notes if e.stage == "skipped"] == ["contexte non primaire"]
    assert not adapter.query("What is Tomas allergic to?", now=at(minutes=30)).fragments


def _unshared(text: str) -> str:
    """The same string as a distinct object (as a value parsed from a campaign file is), so an
    identity test (`is`) cannot stand in for an equality test."""
    return "".join(list(text))


def test_an_assistant_turn_that_asks_to_remember_is_never_noted(tmp_path):
    # The host model writes notes from what the user asks; an assistant saying "please remember ..."
    # (advice, or a quoted request) is not a request to the memory. Roles built at run time.
    adapter, events = make(tmp_path, phase=2, notes=_unshared("on-request"))
    said = [("user", "Ana", "We're planning Rita's wedding cake."),
            ("assistant", None, "Please remember that the venue has no oven, so bake the layers at home."),
            ("user", "Ana", "Good point, thanks.")]
    for i, (role, speaker, content) in enumerate(said):
        adapter.ingest(turn(i, _unshared(role), speaker, content), now=at(minutes=i))
    assert NOTE_REQUEST.search(said[1][2])  # it would be a note request from the user
    assert [e for e in stages(events, "exia.tool.note") if e.stage == "output"] == []
    assert [e.stage for e in stages(events, "exia.tool.note")] == []  # notes are on: no idle notice either


def test_notes_off_given_in_a_campaign_is_reported_idle(tmp_path):
    # `notes = "off"` given explicitly, as a string built at run time (as a campaign file's value
    # is). pydantic hands back the Literal's own string, so this does not tell `is` from `==`
    # (that mutant is judged equivalent in docs/mutation-equivalents.toml); it pins that an
    # explicit "off" is reported idle like the default.
    adapter, events = make(tmp_path, phase=2, notes=_unshared("off"))
    feed(adapter)
    notes = stages(events, "exia.tool.note")
    assert [e.stage for e in notes] == ["skipped"] and "never calls the note tool" in notes[0].reason


def test_any_role_but_the_assistant_can_ask_for_a_note(tmp_path):
    # Roles are free text; only the assistant's own turns are never noted. "admin" sorts before
    # "assistant", so an ordering test cannot stand in for the inequality.
    adapter, events = make(tmp_path, phase=2, notes="on-request")
    adapter.ingest(turn(0, "admin", "Marta", "Please remember that the bakery closes at 6 on Sundays."),
                   now=at(minutes=0))
    (note,) = [e for e in stages(events, "exia.tool.note") if e.stage == "output"]
    assert note.params == {"context": "primary", "source": "tool"}
