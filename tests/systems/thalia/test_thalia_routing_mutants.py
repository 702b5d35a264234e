"""THALIA's routing rules pinned on dialogue-like sentences (the `thalia-routing` mutation
session, scripts/mutation/thalia-routing.toml): task classification in rule order, the route of
each category, the sentence split (questions dropped), and each consolidation rule's positive and
negative boundary -- first-person change statements (`update_statement`), standing tastes and
habits (`preference_statement`), explicit memory requests -- each of which alone makes r_N true,
and the cue stripping of the fact that is kept. The LoCoMo-labelled measures of the same rules are
tests/systems/thalia/test_thalia_gate_precision.py and test_thalia_gate_locomo.py (they skip
without the shared data, so this file does not lean on them)."""

from __future__ import annotations

import pytest
from lsrep.systems.thalia.routing import (
    REACT_CATEGORIES,
    classify_task,
    explicit_memory_request,
    preference_statement,
    requires_consolidation,
    route_for,
    strip_cue,
    update_statement,
)

# -- classify_task: ordered rules, first match wins --------------------------------------------


@pytest.mark.parametrize(("question", "category"), [
    ("Can you look at the error I pasted yesterday?", "code"),
    ("What was in ./scripts/run.sh again?", "code"),
    ("Did we fix the bug in parser.py?", "code"),
    ("What did max_retries default to?", "code"),
    ("Why does load() hang?", "code"),
    ("```\nx = 1\n```", "code"),
    ("Is the deploy still failing?", "code"),                         # code before knowledge-update
    ("Where do I live now?", "knowledge-update"),
    ("What is my latest address after the move?", "knowledge-update"),  # before temporal
    ("When did I adopt Luna?", "temporal"),
    ("How many times did I go hiking last year?", "temporal"),        # before multi-session
    ("What did I do in March?", "temporal"),
    ("How many concerts did I go to?", "multi-session"),
    ("How many books do I like?", "multi-session"),                   # before preference
    ("Which restaurant would you recommend?", "preference"),
    ("What is my favourite colour?", "preference"),
    ("What is my dog's name?", "single-session"),
    ("Is the snow deep there?", "single-session"),                    # 'now' only as a word
])
def test_classify_task_in_rule_order(question, category):
    assert classify_task(question) == category


@pytest.mark.parametrize(("category", "route"), [
    ("multi-session", "react"), ("code", "react"), ("knowledge-update", "react"),
    ("temporal", "single-pass"), ("preference", "single-pass"), ("single-session", "single-pass"),
])
def test_route_for_each_category(category, route):
    assert route_for(category) == route
    assert (category in REACT_CATEGORIES) == (route == "react")


# -- update_statement: a first-person change -------------------------------------------------


@pytest.mark.parametrize("turn", [
    "I now live in Lisbon with my sister.",
    "We're currently renting a flat near the river.",
    "I am no longer working at the bakery.",
    "My bike is currently red, I repainted it.",
    "Our landlord is now a lot friendlier.",
    "I just switched teams at work!",
    "We've finally moved to Porto.",
    "I recently joined a pottery club.",
    "I'm not vegan anymore, it was too hard.",
    "My new job starts on Monday.",
    "My office is in Munich now.",
    "I live in Porto now!",
    "I just started agility classes with my dog.",
    "I've started a new diet this week.",
    "I took up community work last month.",
    "I decided to run for the school board.",
    "We signed up for a salsa course.",
    "I applied for a nursing program.",
    "We adopted a kitten from the shelter.",
    "I got a new car yesterday.",
    "I'm learning German for the trip.",
    "I've been looking into counseling as a career.",
    "I'm training for a marathon in the fall.",
    "I'm taking a cooking class on Thursdays.",
    "I'm allergic to peanuts, by the way.",
    "We're engaged!",
    "How was your weekend? I just switched teams.",    # the question is dropped, not the rest
])
def test_update_statement_fires_on_changes(turn):
    assert update_statement(turn)
    assert requires_consolidation("single-session", turn)


@pytest.mark.parametrize("turn", [
    "I just switched teams?",                           # a question
    "Have you moved yet?",
    "I'm tired right now.",                             # the moment, not a change
    "My cat is asleep for now.",
    "My brother is here just now.",
    "My sister is visiting right now.",                  # possessive fact, the moment
    "I work from home for now.",                        # where-I-work, the moment
    "I live near the station, it's quiet now and then.",  # 'now' not sentence-final
    "My new neighbour waved at me.",                    # "my new" with a noun not listed
    "I joined in the singing at the party.",
    "I started to cry when I saw it.",
    "I'm taking a break from painting.",
    "I'm learning a lot from this book.",
    "The snow is melting now.",                        # not about the speaker
    "Thanks, that sounds great.",
])
def test_update_statement_ignores_moments_and_questions(turn):
    assert not update_statement(turn)
    assert not requires_consolidation("single-session", turn)


def test_update_statement_works_across_line_breaks():
    assert update_statement("Guess what.\nI   now\nlive in Lisbon.")
    assert not update_statement("")


# -- preference_statement: a standing taste or habit -------------------------------------------


@pytest.mark.parametrize("turn", [
    "My favorite genre is fantasy.",
    "One of my favourite hobbies is knitting.",
    "My all-time fave band is Queen.",
    "I'm a huge fan of Bach.",
    "I'm a fan too!",
    "I'm really into rock climbing these days.",
    "I love coconut milk in my coffee.",
    "I also enjoy reading mystery novels.",
    "I really like old movies.",
    "I prefer tea over coffee.",
    "I've always loved birds.",
    "I've always been fascinated by the ocean.",
    "Painting is my thing.",
    "Cooking is therapy for me.",
    "Running is my chill time.",
    "I take them to the park twice a week.",
    "We go hiking every weekend.",
    "Nice photo! I love coconut milk too.",
])
def test_preference_statement_fires_on_standing_tastes(turn):
    assert preference_statement(turn)
    assert requires_consolidation("single-session", turn)


@pytest.mark.parametrize("turn", [
    "My favorite part was the fireworks.",
    "My favorite memory of that trip was the lake.",
    "My favorite thing about it was the view.",
    "I'm into it.",
    "I love that!",
    "I love your painting.",
    "I love the colors in this one.",
    "I love hearing that.",
    "I'd love to come along.",
    "Do you love coconut milk?",
    "Do you go hiking every weekend?",
    "I love coconut milk?",
    "That was fun.",
])
def test_preference_statement_ignores_reactions_and_questions(turn):
    assert not preference_statement(turn)
    assert not requires_consolidation("single-session", turn)


# -- explicit_memory_request -------------------------------------------------------------------


@pytest.mark.parametrize("turn", [
    "Remember that my flight is on Tuesday.",
    "Please remember that I'm allergic to shellfish.",
    "Don't forget my sister's birthday is in May.",
    "Keep in mind we are out of town next week.",
    "Note: the cabin code is 4411",
    "Remember that Oslo is cold in May",
    "I drive a blue car, remember that.",
    "The spare key is under the pot - please note this!",
    "Ok. Remember that the gate code is 1234.",
    "Remember to rest. Remember that my flight is on Tuesday.",   # the walk goes past advice
    "Remember when we met? Remember that my flight is on Tuesday.",
])
def test_explicit_memory_request_fires(turn):
    assert explicit_memory_request(turn)
    assert requires_consolidation("single-session", turn)


@pytest.mark.parametrize("turn", [
    "Remember to take breaks.",
    "Remember when we went to the lake?",
    "Don't forget how far you've come.",
    "I remember our trip to the coast.",
    "Remember that staying positive is important.",
    "Do you remember my flight?",
    "Remember the cabin code is 4411",
    "I drive a blue car, remember that?",
    "I drive a blue car, remember",
    "A note to self: buy bread.",
])
def test_explicit_memory_request_ignores_advice_and_reminiscence(turn):
    assert not explicit_memory_request(turn)


def test_each_rule_alone_decides_consolidation():
    only_update = "I'm learning German."
    only_preference = "Cooking is therapy for me."
    only_request = "Remember that the gate code is 1234."
    assert update_statement(only_update)
    assert not preference_statement(only_update) and not explicit_memory_request(only_update)
    assert preference_statement(only_preference)
    assert not update_statement(only_preference) and not explicit_memory_request(only_preference)
    assert explicit_memory_request(only_request)
    assert not update_statement(only_request) and not preference_statement(only_request)
    for turn in (only_update, only_preference, only_request):
        assert requires_consolidation("single-session", turn) is True
        assert requires_consolidation("knowledge-update", turn) is True
    assert requires_consolidation("knowledge-update", "What's up?") is False


# -- strip_cue -------------------------------------------------------------------------------


@pytest.mark.parametrize(("turn", "fact"), [
    ("Remember that my flight is on Tuesday.", "My flight is on Tuesday."),
    ("please, don't forget: my locker is 12", "My locker is 12"),
    ("I drive a blue car, remember that.", "I drive a blue car"),
    ("the spare key is under the pot - please note this!", "The spare key is under the pot"),
    ("Keep in mind  we are away\nnext week", "We are away next week"),
    ("Note that", "Note that"),
    ("x", "X"),
    ("bob is 7", "Bob is 7"),
])
def test_strip_cue_keeps_the_fact(turn, fact):
    assert strip_cue(turn) == fact
