"""One test per normalisation family of the deterministic judge, so a regression fails a named test."""

from __future__ import annotations

from datetime import date

import pytest

from lsrep.judge.normalize import (
    alternatives,
    durations,
    gives,
    is_abstention,
    list_items,
    normal_tokens,
    polarity,
)
from lsrep.temporal import DaySpan, date_spans, whole_date


@pytest.mark.parametrize("answer", ["June 21st", "21 June", "2026-06-21", "6/21/2026", "June 21, 2026",
                                    "the 21st of June 2026", "21/06/2026", "Sunday, 21 June 2026"])
def test_date_formats_name_the_same_day(answer):
    assert gives(answer, "2026-06-21")
    assert gives(answer, "21 June 2026")


@pytest.mark.parametrize("answer", ["June 22nd", "2026-06-12", "21 June 2025", "July 21, 2026", "6/12/2026"])
def test_near_miss_dates_are_not_given(answer):
    assert not gives(answer, "2026-06-21")


def test_coarser_date_does_not_give_a_day_but_a_finer_one_gives_a_month():
    assert not gives("June 2026", "2026-06-21")
    assert not gives("2023", "7 May 2023")
    assert gives("12 June 2023", "June 2023")
    assert gives("March 2022", "2022")
    assert whole_date("June 2026") == DaySpan(date(2026, 6, 1), date(2026, 6, 30))


def test_partial_date_without_year_matches_that_day_in_any_year():
    assert gives("13 August 2023", "13 August")
    assert gives("August 13th", "13 August 2023")
    assert not gives("14 August", "13 August")


def test_anchored_relative_dates():
    assert whole_date("the week before 9 June 2023") == DaySpan(date(2023, 6, 2), date(2023, 6, 8))
    assert whole_date("The Friday before 15 July 2023") == DaySpan(date(2023, 7, 14), date(2023, 7, 14))
    assert whole_date("the weekend before 17 July 2023") == DaySpan(date(2023, 7, 15), date(2023, 7, 16))
    assert whole_date("two weekends before 17 July 2023") == DaySpan(date(2023, 7, 8), date(2023, 7, 9))
    assert whole_date("The Friday before 23January, 2022") == DaySpan(date(2022, 1, 21), date(2022, 1, 21))
    assert gives("5 June 2023", "The week before 9 June 2023")
    assert not gives("9 June 2023", "The week before 9 June 2023")
    assert gives("the day before 8 May 2023", "7 May 2023")


def test_date_ranges():
    assert whole_date("November 5-6, 2022") == DaySpan(date(2022, 11, 5), date(2022, 11, 6))
    assert gives("5 November 2022", "November 5-6, 2022")
    assert not gives("November 2022", "November 5-6, 2022")
    assert [s.start for s in date_spans("from 2 May 2023 to 9 May 2023")] == [date(2023, 5, 2), date(2023, 5, 9)]


def test_numbers_in_words_and_digits():
    assert normal_tokens("twenty-one dogs")[0] == "21"
    assert normal_tokens("a hundred people")[0] == "100"
    assert normal_tokens("1,000 miles")[0] == "1000"
    assert gives("She has three kids.", "3")
    assert gives("twice", "2")
    assert gives("1st place", "first place")
    assert not gives("13", "3")
    assert not gives("two", "3")


def test_numbers_stay_with_their_nouns():
    assert gives("a dog and two cats", "Two cats and a dog")
    assert not gives("two dogs and a cat", "Two cats and a dog")


def test_durations_in_any_form():
    assert 14340 in durations("3:59")
    for answer in ("3:59", "3 hours 59 minutes", "three hours and fifty-nine minutes", "239 minutes"):
        assert gives(answer, "3 hours 59 minutes"), answer
        assert gives(answer, "3:59"), answer
    assert gives("an hour and a half", "90 minutes")
    assert gives("1.5 hours", "90 minutes")
    assert not gives("3 hours 49 minutes", "3:59")
    assert not gives("half an hour", "90 minutes")
    assert not gives("three times a year", "twice a year")


def test_alternatives_in_the_reference():
    assert alternatives("coffee or tea") == ["coffee", "tea"]
    assert gives("tea", "coffee or tea")
    assert gives("twice a year", "once or twice a year")
    assert not gives("orange juice", "coffee or tea")


def test_lists_in_any_order_need_every_item():
    assert list_items("Her mentors, family, and friends") == ["Her mentors", "family", "friends"]
    assert gives("Bailey, Luna and Oliver", "Oliver, Luna, Bailey")
    assert gives("She paints, swims, camps and does pottery.", "pottery, camping, painting, swimming")
    assert not gives("Oliver and Luna", "Oliver, Luna, Bailey")
    assert not gives("Oliver, Luna, Max", "Oliver, Luna, Bailey")


@pytest.mark.parametrize("answer", [
    "Caroline has never mentioned a brother.", "I don't have any information about Caroline's brother.",
    "I don't know.", "Not mentioned", "No information available", "It isn't mentioned.",
    "I cannot tell from what I know.", "It's not stated anywhere.", "There's no mention of a brother.",
    "The conversation doesn't mention a brother.", "Nobody has said.",
    "I don't have any record of Caroline mentioning a brother, though she often talks about her friends, "
    "her mentors and the support group she attends every week at the community centre.",
])
def test_abstention_phrasings_of_any_length(answer):
    assert is_abstention(answer)


@pytest.mark.parametrize("answer", ["Tom", "Her brother is called Erik.", "She went to Sweden", "No"])
def test_answers_are_not_abstentions(answer):
    assert not is_abstention(answer)


def test_yes_no_polarity():
    assert polarity("Likely no") == "no"
    assert polarity("Probably not; she wants to be a counselor.", answer=True) == "no"
    assert gives("No", "Likely no")
    assert not gives("Yes, she loves reading.", "Likely no")
    assert gives("Yes", "Yes, since she collects classic children's books")


def test_free_text_gist_with_negation_and_people():
    assert gives("a difficult assignment that involves coding", "Coding assignment")
    assert gives("the fashion department", "fashion department of an international company")
    assert gives("Maria's mom", "her mother")
    assert gives("her daughter's", "Melanie's daughter", "Whose birthday did Melanie celebrate?")
    assert not gives("her daughter's", "Melanie's daughter", "Whose birthday did Caroline celebrate?")
    assert not gives("The hike went well because it rained", "The hike did not go well because it rained")
    assert not gives("Not Sweden", "Sweden")
    assert not gives("The transgender stories were so inspiring", "Transgender woman")


def test_free_text_needs_half_of_what_the_reference_adds():
    question = "Why did Melanie use colors in her pottery?"
    reference = "She wanted to catch the eye and make people smile."
    assert gives("to catch people's eye and make them smile", reference, question)
    assert not gives("She wanted people to look at it", reference, question)
    # Echoing the question earns nothing; what the reference adds is what counts.
    question = "What did Gina say about the grand opening of the store?"
    reference = "The grand opening of the store will be a blast"
    assert not gives("Gina talked about the grand opening of the store", reference, question)
    assert gives("It'll be a blast", reference, question)


def test_prose_with_commas_is_not_a_strict_list():
    reference = "about animals, plants, and ecosystems and how they work together"
    question = "What did Andrew learn from reading books about ecological systems?"
    assert gives("He learned a lot about animals, plants, and ecosystems", reference, question)
    assert not gives("He learned about animals", reference, question)


def test_a_noun_reads_as_the_word_it_is_made_from_only_on_a_long_stem():
    assert normal_tokens("intolerance") == normal_tokens("intolerant")
    assert normal_tokens("homelessness") == normal_tokens("homeless")
    assert normal_tokens("chance") != normal_tokens("chant")  # a short stem: different words
    assert normal_tokens("dance") != normal_tokens("dant")
    assert gives("since she is lactose intolerant she bakes dairy-free", "lactose intolerance")
    assert not gives("he is lactose tolerant now", "lactose intolerance")


def test_a_negation_negates_the_first_content_word_after_it():
    ref = "Not tough; keep their tank clean, feed them properly."
    assert gives("Just keep their tank clean and feed them properly every day.", ref)  # "not" is about "tough"
    ref = "Not feeling like making much of an impact"
    assert gives("He doesn't feel like he is making much of an impact at work", ref)
    assert not gives("He feels like he is making a big impact at work", ref)
    assert not gives("She really enjoyed the concert", "She did not really enjoy the concert")
    assert not gives("He really likes jazz", "He never really liked jazz")
