"""The Memory Gate's triggers on real dialogue: precise, and measured.

`gate_labels.json` labels by hand every LoCoMo turn of the shared conversations that made r_N or
x_N true under the first precise rule (remember: is it a fact about the speaker worth keeping?).
Before that rule, 274 of the 3,944 turns fired (73 on the cue word alone: advice such as
"remember to take breaks" and reminiscence such as "I remember our trip"). That rule fired on 30
turns (27 real) but recalled 5 of 47 facts in a uniform sample, so the gate never consolidated
on conv-26; the recall revision (preferences, pursuits taken up, lasting attributes) and its
measurement on a uniform hand-labelled sample are in test_thalia_gate_locomo.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsrep.systems.thalia.routing import (
    explicit_memory_request,
    preference_statement,
    requires_consolidation,
    strip_cue,
    update_statement,
)

HERE = Path(__file__).parent
REPO = Path(__file__).resolve().parents[3]
LOCOMO = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared")
               if (p / "datasets").is_dir()), REPO.parent / "shared") / "datasets" / "locomo" / "locomo-dev7.json"


def _turns():
    for conv in json.loads(LOCOMO.read_text()):
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    yield conv["sample_id"], turn["dia_id"], turn.get("text", "")


@pytest.mark.skipif(not LOCOMO.exists(), reason="shared LoCoMo data not found")
def test_the_first_rules_labelled_triggers_still_fire_and_no_one_asks():
    labels = {(x["conversation"], x["dia_id"]): x["remember"] for x in json.loads((HERE / "gate_labels.json").read_text())}
    texts = {(c, d): text for c, d, text in _turns()}
    assert all(requires_consolidation("single-session", texts[k]) for k, keep in labels.items() if keep)
    assert not [k for c, d, text in _turns() if explicit_memory_request(text) for k in [(c, d)]]  # no one asks


@pytest.mark.parametrize("text", [
    "Remember that my flight to Oslo is on Tuesday.",
    "Please remember I'm allergic to peanuts.",
    "Note that I moved to Porto last month.",
    "Keep in mind that my sister is called Rita.",
    "I drive a blue car, remember that.",
    "Remember that the cabin code is 4411",
])
def test_explicit_requests_are_recognised(text):
    assert explicit_memory_request(text) and requires_consolidation("single-session", text)


@pytest.mark.parametrize("text", [
    "Just remember to pause, reflect, and take care of yourself.",
    "Remember that staying positive is very important.",
    "I'll always remember our camping trip last year.",
    "Do you remember the dance classes?",
    "Remember when we volunteered together last year?",
    "Don't forget to take breaks and dance!",
    "And remember, I'm always here for you.",
    "What's a favorite book you remember?",
])
def test_advice_reminiscence_and_questions_are_not_requests(text):
    assert not explicit_memory_request(text)


@pytest.mark.parametrize("text", [
    "I now live in Lisbon", "my bike is currently red", "my office is in Munich now",
    "I just switched teams at work.", "I'm not vegan anymore.", "I'm really enjoying my new job.",
    "We moved to Berlin in May.", "I live in Porto now.",
])
def test_change_statements_are_updates(text):
    assert update_statement(text)


@pytest.mark.parametrize("text", [
    "I'm so happy for you right now!", "Are you currently reading any books?", "Keep me updated!",
    "four is enough for now.", "Have you changed your mind?", "I still love that song.",
    "It's a nice change, especially after a long week.",
])
def test_moments_questions_and_continuity_are_not_updates(text):
    assert not update_statement(text)


def test_the_cue_is_stripped_at_either_end():
    assert strip_cue("remember that the cabin code is 4411") == "The cabin code is 4411"
    assert strip_cue("I drive a blue car, remember that") == "I drive a blue car"


@pytest.mark.parametrize("text", [
    "I just started agility classes with my pups.", "I've started a new diet.",
    "Yesterday, I took up some community work.", "Last week, I decided to run for office again.",
    "I'm learning German now - tough but fun.", "I'm taking a cooking class.",
    "I'm allergic to most reptiles.", "We adopted another puppy called Pixie.",
])
def test_pursuits_taken_up_and_lasting_attributes_are_updates(text):
    assert update_statement(text) and requires_consolidation("single-session", text)


@pytest.mark.parametrize("text", [
    "I'm learning a ton.", "Gotta focus on why I started.", "So I joined in.",
    "I started to cry.", "I'm taking a break from it.",
])
def test_moments_are_not_pursuits(text):
    assert not update_statement(text)


@pytest.mark.parametrize("text", [
    "I love coconut milk, but I also enjoy chocolate.", "I love making dairy-free cakes.",
    "My favorite recipe is Chicken Pot Pie.", "I'm a huge fan of this genre!",
    "I'm really into fantasy novels.", "Cooking is therapy for me.",
    "I take them to the park twice a week.", "I've always loved turtles.",
])
def test_standing_tastes_and_habits_are_preferences(text):
    assert preference_statement(text) and requires_consolidation("single-session", text)


@pytest.mark.parametrize("text", [
    "I love that!", "I love your painting!", "I love the colors.", "I'd love to see them!",
    "Do you love hiking?", "I love it.", "I love hearing that.", "My favorite part was the show.",
    "I'm into it!",
])
def test_reactions_and_questions_are_not_preferences(text):
    assert not preference_statement(text)
