"""Answerer v4: choice questions answered by an alternative, would-questions inferred, the date nearest the question."""

from __future__ import annotations

from lsrep.answer.choice import alternatives
from lsrep.answer.polarity import unstated
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_alternatives_of_a_choice_question():
    assert alternatives("Would Ana rather visit a national park or a theme park?") == ("a national park", "a theme park")
    assert alternatives("Does Omar live close to a beach or the mountains?") == ("a beach", "the mountains")
    assert alternatives("Did Ana go to Rome or Paris first?") == ("Rome", "Paris")
    assert alternatives("Was it a good month for Ana? Answer yes or no.") is None
    assert alternatives("Does Omar like tea?") is None


def test_a_choice_question_is_answered_by_the_alternative_the_context_supports():
    ctx = [line("2024-05-01 10:00", "Omar", "I love living close to the mountains, hiking every weekend near home."),
           line("2024-05-02 10:00", "Omar", "Living here is great, the mountains are ten minutes away.")]
    answer = ask("Does Omar live close to a beach or the mountains?", *ctx)
    assert gives(answer, "mountains") and not gives(answer, "beach"), answer
    assert not answer.lower().startswith(("yes", "no")), answer


def test_an_unstated_would_question_is_inferred_from_liking_and_counterfactuals():
    assert unstated("Would Ana enjoy a jazz concert?", "I'm a big fan of Coltrane and Miles Davis!") == "Likely yes"
    assert unstated("Would Ana enjoy a jazz concert?", "I never listen to music, it's not for me.") == "Likely no"
    assert unstated("Would Ana still teach if she hadn't had a mentor?", "My mentor made me love teaching.") == "Likely no"
    assert unstated("Would Ana move to Spain?", "I love my flat in Leeds.") == "Likely no"
    answer = ask("Would Ana likely enjoy a Coltrane record?",
                 line("2024-05-01 10:00", "Ana", "I'm a fan of jazz, like Miles Davis and Nina Simone."),
                 line("2024-05-02 10:00", "Ana", "Music helps me enjoy quiet evenings at home."))
    assert gives(answer, "Yes"), answer


def test_of_several_dates_in_a_sentence_the_one_nearest_the_question_answers():
    answer = ask("When is Ana's half marathon?",
                 line("2024-05-22 10:00", "Ana", "I've been training since last year and the half marathon is next "
                                                 "Sunday, wish me luck!"))
    assert gives(answer, "2024-05-26"), answer


def test_a_sentence_restating_the_question_is_preceded_by_what_was_done():
    answer = ask("What did Omar do to feel closer to his neighbours?",
                 line("2024-05-06 17:13", "Omar", "Just yesterday I joined the allotment society. I wanted to feel "
                                                  "closer to my neighbours. So far it's been really great!"))
    assert "allotment society" in answer, answer
    goes_on = ask("What did Omar see at the harbour festival?",
                  line("2024-05-06 17:13", "Omar", "So glad you liked the photos of the coast. Last Friday I went to "
                                                   "the harbour festival. It was loud and joyful - hundreds of boats "
                                                   "sailing past with lanterns."))
    assert "lanterns" in goes_on, goes_on


def test_the_noun_a_what_kind_question_asks_about_picks_the_sentence():
    answer = ask("What kind of event did Omar and his family attend in June?",
                 line("2024-06-27 00:24", "Omar", "It's such a blessing to have family who always supports us."),
                 line("2024-06-27 00:25", "Omar", "We went to a food event."))
    assert gives(answer, "food event") and "blessing" not in answer, answer
