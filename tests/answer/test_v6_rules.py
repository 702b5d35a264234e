"""Answerer v6 rules: time between two events by date arithmetic."""

from __future__ import annotations

import re

from lsrep.answer.elapsed import asks_elapsed
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_elapsed_questions_are_told_from_durations_and_ago():
    for q in ("How many weeks passed between Ana adopting Pip and Tofu?", "How long did it take Ben to open his shop?",
              "How many months after the wedding did Ana move?", "How much time passed between the two trips?"):
        assert asks_elapsed(q), q
    for q in ("How long has Ana been painting?", "How long ago was Ben's party?", "How many days a week does Ana run?",
              "How many times has Ben gone hiking?", "How long was Ana in Paris?"):
        assert not asks_elapsed(q), q


def test_weeks_between_two_events_from_relative_dates():
    # Pip: "two weeks ago" on 11 August = 28 July; Tofu: "last week" on 13 August = 6-12 August (middle 9 August).
    answer = ask("How many weeks passed between Ana adopting Pip and Tofu?",
                 line("2024-08-11 10:00", "Ana", "Guess what - I adopted a puppy two weeks ago! Her name's Pip."),
                 line("2024-08-13 10:00", "Ana", "I just adopted another pup, Tofu, from a shelter last week."))
    assert answer == "two weeks", answer
    assert gives(answer, "two weeks") and not gives(answer, "one week")


def test_how_long_it_took_counts_in_the_coarsest_unit_of_at_least_two():
    answer = ask("How long did it take Ben to open his shop?",
                 line("2024-01-20 10:00", "Ben", "Lost my job yesterday, so I'm going to start my own shop."),
                 line("2024-06-19 10:00", "Ben", "The grand opening of my shop is tomorrow!"))
    assert answer == "five months", answer  # 19 January to 20 June: 153 days


def test_one_dated_event_is_not_an_interval():
    answer = ask("How many weeks passed between Ana adopting Pip and Tofu?",
                 line("2024-08-11 10:00", "Ana", "Guess what - I adopted a puppy! Her name's Pip. Tofu came too."))
    # A single day gives no distance: the rule stands aside (no "0 weeks"), the sentence answers as before.
    assert not re.fullmatch(r"\w+ weeks?", answer), answer


def test_a_noun_made_from_a_verb_matches_the_verb():
    from lsrep.answer.words import keys

    assert keys("rejection") == keys("rejected") and keys("education") == keys("educated")
    assert keys("improvement") == keys("improved") and keys("adoption") == keys("adopt")
    assert keys("station") != keys("state") and keys("moment") != keys("mom")  # short stems stay apart
    # and the related-word groups read the same forms: "vacationed" still finds "trip".
    from lsrep.answer.related import matched

    assert matched(keys("We took a trip to Oregon"), keys("vacationed"))
    answer = ask("How many times has Ana's screenplay been rejected?",
                 line("2024-06-03 10:00", "Ana", "I got a rejection letter from a major company."),
                 line("2024-10-21 10:00", "Ana", "Another rejection from a production company, sadly."))
    assert gives(answer, "twice"), answer


def test_a_stated_length_answers_before_any_arithmetic():
    answer = ask("How long did it take Ben to recover?",
                 line("2024-03-01 10:00", "Ben", "I hurt my knee skiing yesterday; it will take a while to recover."),
                 line("2024-06-19 10:00", "Ben", "It took me two months to recover from the knee injury, finally."))
    assert gives(answer, "two months") and not gives(answer, "three months"), answer


def test_a_causal_marker_saying_only_what_is_asked_is_no_reason():
    from lsrep.answer.entities import reason_in

    text = "I'm drawn to turtles. They're calming and their slow pace is a nice change."
    assert reason_in(text, "Why does Omar like turtles as pets?") is None  # "to turtles" explains nothing
    assert reason_in(text) == "to turtles. They're calming and their slow pace is a nice change"  # no question: as v4
    assert reason_in("I chose them 'cause they help LGBTQ+ folks", "Why did Ana choose the agency?") == \
        "'cause they help LGBTQ+ folks"


def test_a_caption_does_not_outscore_the_speakers_own_sentence_on_novelty():
    answer = ask("How did Ana celebrate after sharing her book with her writers group?",
                 line("2024-08-22 11:04", "Ana", "Thanks, Ben! It feels great knowing that people like my writing. I "
                                                 "celebrated by making this delicious treat - yum! Any plans for the "
                                                 "weekend? [shares an image: a photo of two desserts with spoons and a "
                                                 "bar of chocolate]"))
    assert gives(answer, "making a delicious treat"), answer


def test_a_past_event_is_not_dated_by_another_sentences_future_date():
    ctx = line("2023-04-03 13:38", "Ben", "I'm expanding my shop's social media presence and offering classes. I'm "
                                          "also hosting a competition next month to bring more attention to my shop.")
    answer = ask("When did Ben start expanding his shop's social media presence?", ctx)
    assert gives(answer, "April 2023") and not gives(answer, "May 2023"), answer
    # The competition is asked about: its own sentence's date answers; a plan asks for the date planned.
    assert gives(ask("When is Ben hosting a competition?", ctx), "May 2023")
    planned = line("2023-04-03 13:38", "Ben", "Work is busy. I plan to visit my sister next month.")
    assert gives(ask("When did Ben plan to visit his sister?", planned), "May 2023")


def test_a_while_is_a_length_of_time_not_a_clause_boundary():
    from lsrep.answer.extractive import _CLAUSE

    assert _CLAUSE.split("I read the book you recommended a while ago and painted") == [
        "I read the book you recommended a while ago and painted"]
    assert _CLAUSE.split("I read a book while waiting") == ["I read a book", "waiting"]
    answer = ask("What does Ana do to keep herself busy during her pottery break?",
                 line("2024-08-22 11:04", "Ana", "Been reading that book you recommended a while ago and painting to "
                                                 "keep busy."))
    assert "reading" in answer and "painting" in answer, answer
