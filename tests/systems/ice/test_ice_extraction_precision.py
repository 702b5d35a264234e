"""Rule-extractor precision on real dialogue: kinship, two named speakers, narrative negation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ice_testkit import day
from lsrep.systems.ice import TurnRecord
from lsrep.systems.ice.codex import USER_ID
from lsrep.systems.ice.rules import extract_procedures

LOCOMO = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "locomo" / "locomo-dev7.json"


def say(h, text: str, speaker: str | None = None, *, role: str = "user") -> str:
    tid = f"t{h.n:04d}"
    h.system.ingest(TurnRecord(tid, "c1", "s1", h.n, day(h.n), role, text, speaker=speaker), now=day(h.n))
    h.n += 1
    return tid


def edges(h, relation: str) -> list[tuple[str, str, str]]:
    rows = h.system.db.codex.conn.execute(
        "SELECT e.name AS src, x.value, x.status FROM edges x JOIN entities e ON e.id = x.src"
        " WHERE x.relation = ? ORDER BY x.rowid", (relation,)).fetchall()
    return [(r["src"], r["value"], r["status"]) for r in rows]


def test_a_second_sister_does_not_supersede_the_first_but_a_new_husband_does(harness):
    h = harness()
    say(h, "Ana is my sister.")
    say(h, "My sister is Eva.")
    say(h, "My sister is visiting next week.")  # names no relative
    assert edges(h, "sister") == [("user", "Ana", "current"), ("user", "Eva", "current")]
    say(h, "Bob is my husband.")
    say(h, "Tom is my husband.")
    assert edges(h, "husband") == [("user", "Bob", "superseded"), ("user", "Tom", "current")]


def test_two_named_speakers_stay_two_people(harness):
    """LoCoMo: both people are role `user`; the first named speaker is `user`, the other is herself."""
    h = harness()
    say(h, "I live in Lisbon with my two cats.", "Caroline")
    say(h, "I live in Porto near the river.", "Melanie")
    say(h, "I work at Acme Books these days.", "Caroline")
    codex = h.system.db.codex
    assert codex.lookup("Caroline") == (USER_ID, "alias")
    assert codex.current_value(USER_ID, "lives_in") == "Lisbon"  # not superseded by Melanie's Porto
    melanie = codex.lookup("Melanie")[0]
    assert melanie != USER_ID and codex.current_value(melanie, "lives_in") == "Porto"
    assert codex.current_value(USER_ID, "works_at") == "Acme Books"
    assert edges(h, "lives_in") == [("user", "Lisbon", "current"), ("Melanie", "Porto", "current")]


def test_a_role_only_speaker_is_the_user(harness):
    h = harness()
    say(h, "I live in Lisbon.")
    say(h, "I moved to Porto last month.", "user")
    assert edges(h, "lives_in") == [("user", "Lisbon", "superseded"), ("user", "Porto", "current")]


@pytest.mark.parametrize("text", ["Never been fishing, but it looks fun.", "Never thought I'd see the day.",
                                  "Always been a fan of jazz.", "Always here to help!", "Never had a chance to go.",
                                  "Always running around with the dogs."])
def test_narrative_always_never_is_no_procedure(text):
    assert extract_procedures(text) == []


@pytest.mark.parametrize("text", ["Always answer in French.", "Never use emojis.", "Please never call me Bob."])
def test_instructions_are_procedures(text):
    assert [op["action"] for op in extract_procedures(text)] == ["add"]


def test_locomo_dialogue_yields_only_imperative_patterns(harness):
    """Over the 3,944 shared LoCoMo turns the unfiltered rule made 19 patterns, all narrative or
    small talk ("never had a chance to visit it", "always a blessing"); two imperatives remain."""
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    turns = [t["text"] for s in json.loads(LOCOMO.read_text()) for k, v in s["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]
    assert len(turns) == 3944
    made = sorted(op["instruction"] for text in turns for op in extract_procedures(text))
    assert made == ["never give up", "never say never"]
