"""Answerer v7 rules: a phrase the best sentence uses is named by the same speaker in another turn."""

from __future__ import annotations

from lsrep.answer.bridge import named_in, with_names
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_a_phrase_named_by_the_same_speaker_elsewhere_is_answered_by_its_name():
    answer = ask("What area was hit by a flood?",
                 line("2023-05-06 10:00", "John", "I want to work on improving my old area, West County, too."),
                 line("2023-07-07 10:00", "John", "Since we talked, it's been tough. My old area was hit by a flood."))
    assert gives(answer, "West County"), answer
    answer = ask("Where did Ana move from four years ago?",
                 line("2023-06-09 10:00", "Ana", "I've known these friends for 4 years, since I moved from my home country."),
                 line("2023-06-27 10:00", "Ana", "This necklace is a gift from my grandma in my home country, Sweden."))
    assert gives(answer, "Sweden"), answer


def test_another_speakers_phrase_or_a_greeting_is_no_name():
    # Ben's home country is not Ana's.
    answer = ask("Where did Ana move from four years ago?",
                 line("2023-06-09 10:00", "Ana", "I've known these friends for 4 years, since I moved from my home country."),
                 line("2023-06-27 10:00", "Ben", "This is a gift from my grandma in my home country, Norway."))
    assert "Norway" not in answer, answer
    # "thanks, my friend, Ben": the listener, not a name for "my friend"
    names = named_in(["Thanks so much, my friend, Ben!"], frozenset({"ben", "ana"}))
    assert names == {}
    assert named_in(["I met my new coach, Sara Lee, at the gym."], frozenset({"ana"})) == {"my new coach": "Sara Lee"}
    # a phrase the sentence does not hold word for word is left alone; a phrase already named is not named twice
    assert with_names("My coach is strict.", {"my new coach": "Sara Lee"}) == "My coach is strict."
    assert with_names("My new coach, Sara Lee, is strict.", {"my new coach": "Sara Lee"}) == \
        "My new coach, Sara Lee, is strict."
    assert with_names("My new coach is strict.", {"my new coach": "Sara Lee"}) == "My new coach, Sara Lee, is strict."
    # a weekday or month after the comma names nothing
    assert named_in(["I saw my old friend, Monday was great."], frozenset()) == {}


def test_a_sentence_saying_fewer_than_ten_words_of_its_own_is_joined_by_the_next():
    # The best sentence sets the question up; the plan is in the next sentence of the turn.
    answer = ask("What does Ana plan to do at the launch party?",
                 line("2024-05-01 10:00", "Ana", "The launch party is tomorrow evening and I am not going to forget a single minute "
                                                 "of it! Ben and I plan to soak up every happy moment."))
    assert gives(answer, "soak up every happy moment"), answer


def test_a_sentence_saying_ten_words_of_its_own_stands_alone():
    # Hard negative: a full sentence is the answer; the next one (about Ben) is not added.
    answer = ask("What does Ana plan to do at the launch party?",
                 line("2024-05-01 10:00", "Ana", "At the launch party tomorrow I plan to thank every single volunteer, "
                                                 "investor, neighbour, teacher and friend who helped us build the shop. "
                                                 "Ben will bake cookies."))
    assert "volunteer" in answer and "cookies" not in answer, answer


def test_a_clause_saying_fewer_than_four_words_of_its_own_takes_the_next_clause():
    answer = ask("How does Ana describe the film she saw?",
                 line("2024-05-01 10:00", "Ana", "I saw a film at the festival the other day - the plot was so gripping "
                                                 "and the cast was superb."))
    assert "gripping" in answer, answer


def test_a_clause_saying_four_words_of_its_own_stands_alone():
    # Hard negative: the clause says enough; what follows "though" is not added.
    answer = ask("How does Ana describe the film she saw?",
                 line("2024-05-01 10:00", "Ana", "I saw a film at the old downtown festival with three close friends "
                                                 "from college - though I was tired."))
    assert "festival" in answer and "tired" not in answer, answer
