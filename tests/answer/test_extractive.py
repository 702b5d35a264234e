"""The offline span answerer: the best sentence, then the typed span the question asks for."""

from __future__ import annotations

from datetime import datetime

import pytest

from lsrep.answer.extractive import ABSTAIN_TEXT, ExtractiveAnswerer, question_type
from lsrep.contract import Fragment

NOW = datetime(2023, 9, 1, 12, 0)


def line(stamp: str, who: str, text: str) -> Fragment:
    return Fragment(text=f"[{stamp}] {who} (user): {text}")


def ask(question: str, *fragments: Fragment) -> str:
    return ExtractiveAnswerer().answer(question, list(fragments), NOW)


@pytest.mark.parametrize(("said", "expected"), [
    ("I went to a LGBTQ support group yesterday and it was so powerful.", "7 May 2023"),
    ("I went to a LGBTQ support group last week and it was so powerful.", "the week before 8 May 2023"),
    ("I went to a LGBTQ support group last weekend.", "the weekend before 8 May 2023"),
    ("I went to a LGBTQ support group two weeks ago.", "2 weeks before 8 May 2023"),
    ("I went to a LGBTQ support group last Fri.", "5 May 2023"),
    ("I went to a LGBTQ support group last year.", "2022"),
    ("I'm going to a LGBTQ support group next month.", "June 2023"),
    ("I went to a LGBTQ support group on 2 May 2023.", "2 May 2023"),
])
def test_when_questions_resolve_relative_dates_against_the_turn(said, expected):
    # The turn's own date (8 May 2023, a Monday) anchors the expression, not the checkpoint's now.
    assert ask("When did Caroline go to the LGBTQ support group?",
               line("2023-05-08 13:56", "Caroline", said)) == expected


def test_when_question_without_a_time_expression_answers_the_turn_date():
    assert ask("When did Caroline go to the LGBTQ support group?",
               line("2023-05-08 13:56", "Caroline", "The LGBTQ support group was so powerful.")) == "8 May 2023"


def test_typed_spans():
    ctx = [line("2023-06-09 20:10", "Melanie", "We have been married for 5 years already! Time flies."),
           line("2023-06-10 10:00", "Melanie", "My 3 kids love the beach. We went camping in the forest."),
           line("2023-06-11 10:00", "Caroline", "The necklace is a gift from my grandma Astrid in Sweden.")]
    assert ask("How long have Melanie and her husband been married?", *ctx) == "5 years, since 2018"  # v5: anchored
    assert ask("How many kids does Melanie have?", *ctx) == "3 kids"
    assert ask("Who gave Caroline the necklace gift?", *ctx) == "Astrid, Sweden"
    assert ask("Where did Melanie go camping?", *ctx) == "the forest"


def test_other_questions_answer_a_clause_not_the_line():
    ctx = [line("2023-05-25 13:21", "Caroline",
                "Hey Mel! Researching adoption agencies — it's been a dream to have a family, and I love it.")]
    answer = ask("What did Caroline research?", *ctx)
    # v7: a clause adding fewer than four words of its own takes the next clause of its sentence; the
    # greeting ("Hey Mel!") and the rest of the line before the clause stay out.
    assert answer.startswith("Researching adoption agencies") and "Hey" not in answer, answer


def test_abstains_when_nothing_matches():
    ctx = [line("2023-05-25 13:21", "Caroline", "Researching adoption agencies today.")]
    assert ask("What is the capital of Peru?", *ctx) == ABSTAIN_TEXT
    assert ask("What is the capital of Peru?") == ABSTAIN_TEXT


def test_speaker_name_alone_does_not_answer():
    ctx = [line("2023-05-25 13:21", "Caroline", "Researching adoption agencies today."),
           line("2023-05-25 13:22", "Caroline", "I love painting sunsets.")]
    assert ask("What car does Caroline drive?", *ctx) == ABSTAIN_TEXT


def test_first_person_is_put_in_the_speakers_name():
    ctx = [line("2023-08-14 10:00", "Melanie", "Last night we celebrated my daughter's birthday with a concert.")]
    assert "Melanie's daughter" in ask("Whose birthday did Melanie celebrate with a concert?", *ctx)


def test_question_types():
    assert question_type("When did Ana move?") == "date"
    assert question_type("How long ago was her birthday?") == "ago"
    assert question_type("How many dogs does she have?") == "count"
    assert question_type("How long has she run?") == "duration"
    assert question_type("Who is her boss?") == "person"
    assert question_type("Where does she live?") == "place"
    assert question_type("What does she paint?") == "other"


def test_deterministic():
    ctx = [line("2023-05-08 13:56", "Caroline", "I went to a support group yesterday. It was great.")]
    answers = {ask("When did Caroline go to the support group?", *ctx) for _ in range(3)}
    assert answers == {"7 May 2023"}


def test_a_set_up_sentence_is_followed_by_the_next_one():
    ctx = [line("2023-06-16 10:00", "Maria", "Guess what, Maria got some great news to share today! I joined a gym.")]
    assert ask("What exciting news did Maria share?", *ctx).endswith("Maria joined a gym")


def test_line_heads_with_the_speaker_inside_the_brackets():
    ctx = [Fragment(text="[2026-03-20 Maya] Also, my sister Ines is getting married. The wedding is on June 14 in Sintra."),
           Fragment(text="[2026-03-02 Maya] I live in Lisbon, in a small flat near the river.")]
    assert ask("On what date is Ines's wedding?", *ctx) == "June 14"
    assert ask("Which city does Maya live in?", *ctx) == "Lisbon"


def test_why_questions_answer_the_reason():
    ctx = [line("2023-05-25 13:21", "Caroline", "I chose them 'cause they help LGBTQ+ folks with adoption.")]
    assert ask("Why did Caroline choose the adoption agency?", *ctx) == "'cause they help LGBTQ+ folks with adoption"


def test_yes_no_questions_answer_with_a_polarity():
    ctx = [line("2023-07-03 10:00", "Melanie", "I made this black and white bowl in my pottery class.")]
    assert ask("Did Melanie make the black and white bowl?", *ctx).startswith("Yes, ")
    ctx = [line("2023-07-03 10:00", "Melanie", "I did not make the black and white bowl, my son did.")]
    assert ask("Did Melanie make the black and white bowl?", *ctx).startswith("No, ")


@pytest.mark.parametrize(("said", "expected"), [
    ("I adopted the dog the other day.", "a few days before 22 November 2023"),
    ("I adopted the dog on the 15th, what a day.", "15 November 2023"),
    ("I adopted the dog on the 25th, what a day.", "25 October 2023"),
    ("I've had the dog for 3 years now.", "2020"),
    ("I've had the dog for about four months now.", "July 2023"),
])
def test_when_questions_infer_days_of_month_and_starts(said, expected):
    ctx = [line("2023-11-22 10:00", "Andrew", said)]
    assert ask("When did Andrew adopt the dog?", *ctx) == expected


def test_how_often_answers_the_frequency():
    ctx = [line("2023-05-01 10:00", "Audrey", "We go to the park for practice twice a week, the pups love it.")]
    assert ask("How often does Audrey take her pups to the park for practice?", *ctx) == "twice a week"


def test_a_sentence_going_on_about_the_same_thing_is_added():
    ctx = [line("2023-06-27 10:00", "Caroline",
                "This necklace is super special to me, a gift from my grandma. It stands for love, faith and strength.")]
    answer = ask("What does Caroline's necklace mean to her?", *ctx)
    assert answer.endswith("It stands for love, faith and strength")
