"""Judge v6: a list reference is given only when every item is (lsrep/judge/lists.py, normalize.list_given).

Each test names the rule it guards; each fails with that rule switched off (checked by hand).
"""

from __future__ import annotations

import pytest

from lsrep.judge.deterministic import judge_deterministic
from lsrep.judge.lists import list_shape
from lsrep.judge.normalize import gives, list_items
from lsrep.judge.verdict import JudgeCase, VersionView

ADVICE = "build relationships with customers, create a strong brand image, stay positive"


def test_a_list_of_phrases_needs_every_item_in_any_order():
    # v5 let a list of items longer than three words fall through to coverage, crediting 2 of 3
    assert not gives("Build relationships with your customers and stay positive.", ADVICE)
    assert not gives("Build relationships with customers, hire a good accountant, stay positive.", ADVICE)
    assert gives("Stay positive, build a strong brand image and build relationships with customers.", ADVICE)
    family = "going for hikes, hanging out at the park, having picnics, playing board games, having movie nights"
    assert not gives("going for hikes, hanging out at the park, having picnics", family)
    assert gives("They have movie nights, play board games, have picnics, hang out at the park and go hiking.",
                 family)


def test_a_list_given_in_prose():
    ref = "Pride parade, school speech, support group"
    assert gives("I went to the pride parade, gave a school speech and joined a support group", ref)
    assert not gives("She went to the pride parade and gave a school speech", ref)
    assert not gives("pride parade, school play, support group", ref)


@pytest.mark.parametrize("reference", [
    "She always loved fashion trends and finding unique pieces and she lost her job so decided it was time "
    "to start her own business.",
    "rejections don't define her, keep grinding and she'll find the perfect opportunity",
    "Somewhat, but not extremely religious",
    "Hairless cats or pigs, since they don't have fur, which is one of the main causes of her allergy",
    "She went to Paris, Rome and Berlin last year",
    "outdoor activities with her kids, such as running and swimming",
])
def test_prose_with_commas_is_not_a_list(reference):
    assert list_items(reference) == []


def test_prose_keeps_the_free_text_rules():
    ref = "rejections don't define her, keep grinding and she'll find the perfect opportunity"
    assert gives("Keep grinding; rejections don't define you and you'll find the perfect opportunity.", ref)
    assert gives("Somewhat religious, but not extremely.", "Somewhat, but not extremely religious")


def test_one_date_is_not_a_list_and_a_date_inside_a_list_stays_whole():
    assert list_items("June 5, 2022") == []
    assert list_items("5 October, 2022") == []
    assert list_items("a concert on June 5, 2022, a play in July") == ["a concert on June 5, 2022", "a play in July"]
    assert list_items("June 5, 2024, July 12, 2024") == ["June 5, 2024", "July 12, 2024"]
    assert gives("12 July 2024 and 5 June 2024", "June 5, 2024, July 12, 2024")
    assert not gives("5 June 2024", "June 5, 2024, July 12, 2024")
    assert list_items("the week before 21Janury, 2022") == ["the week before 21Janury", "2022"]  # as v5


def test_several_quoted_titles_are_a_list_and_a_title_is_never_split():
    ref = '"The Hobbit" and "Little Women"'
    assert list_items(ref) == ["The Hobbit", "Little Women"]
    assert not gives("The Hobbit", ref)
    assert gives("Little Women and The Hobbit", ref)
    assert list_items('"Little Women", "A Court of Thorns and Roses"') == ["Little Women", "A Court of Thorns and Roses"]
    assert list_items('"Pride and Prejudice"') == []
    assert list_items("kids' books, Charlotte's Web and comics") == ["kids' books", "Charlotte's Web", "comics"]


def test_a_head_is_not_an_item_but_must_not_be_contradicted():
    ref = "Not hard; keep their tank clean, feed them properly, give them enough light"
    shape = list_shape(ref)
    assert shape is not None and shape.head == "Not hard"
    assert shape.items == ("keep their tank clean", "feed them properly", "give them enough light")
    assert gives("Just keep the tank clean, feed them properly and give them enough light. It's fun.", ref)
    assert not gives("It's hard: keep the tank clean, feed them properly and give them enough light.", ref)
    assert not gives("Keep the tank clean and feed them properly.", ref)
    assert list_shape("Books - classics, stories from other cultures, educational books").head == "Books"
    assert list_shape("Kickboxing; taekwondo").head == ""  # a ";" between items is no head


def test_an_item_needs_one_of_its_own_words():
    ref = "coconut ice cream, dairy-free chocolate cake, dairy-free chocolate mousse"
    # "dairy-free chocolate" alone covers most of the cake item, but "cake" is its own word
    assert not gives("He loves coconut ice cream and a dairy-free chocolate mousse.", ref)
    assert gives("Dairy-free chocolate mousse, dairy-free chocolate cake and coconut ice cream.", ref)


def test_a_long_item_may_be_paraphrased_but_not_left_out():
    ref = "Changes to her body, losing unsupportive friends"
    answer = ("Art let Caroline explore her changing body. Some close friends kept supporting her, "
              "but a few friends weren't able to handle it")
    assert gives(answer, ref)
    assert not gives("Art let Caroline explore her changing body.", ref)
    # a short item has no such leeway: "school speech" is not given by "school play"
    assert not gives("pride parade, school play, support group", "Pride parade, school speech, support group")


def test_a_leading_light_verb_is_not_needed():
    ref = "going for hikes, having picnics, doing puzzles"
    assert gives("Hikes, picnics and puzzles.", ref)
    assert not gives("They have friends over, do puzzles and go for hikes.", ref)
    assert not gives("Picnics and puzzles.", ref)


def test_an_or_inside_one_item_is_a_choice_in_that_item():
    ref = "do research, find an agency or a lawyer, gather the documents"
    assert gives("Do research, find a lawyer and gather the documents.", ref)
    assert gives("Gather the documents, find an agency, do research.", ref)
    assert not gives("Do some research and find an agency.", ref)


def test_x_or_y_keeps_its_meaning():
    assert list_items("tea, coffee, or juice") == []
    assert gives("juice", "tea, coffee, or juice")
    assert gives("tea", "coffee or tea")
    assert not gives("orange juice", "coffee or tea")


def test_an_oxford_comma_keeps_the_last_item_whole():
    assert list_items("ham, cheese, and fish and chips") == ["ham", "cheese", "fish and chips"]
    assert list_items("salads, sandwiches and homemade desserts") == ["salads", "sandwiches", "homemade desserts"]


def test_short_lists_places_and_pairs_keep_their_v5_verdicts():
    assert list_items("Portland, Oregon") == ["Portland", "Oregon"]
    assert gives("Portland, Oregon", "Portland, Oregon")
    assert gives("Paris in France", "Paris, France")
    assert not gives("Portland", "Portland, Oregon")
    assert not gives("Portland, Maine", "Portland, Oregon")
    assert gives("pepper and salt", "salt and pepper")
    assert not gives("just salt", "salt and pepper")
    assert gives("salt, pepper and garlic", "garlic, salt and pepper")
    assert list_items("politics and the government") == []


def _case(answer: str, current: str, superseded: tuple[str, ...] = ()) -> JudgeCase:
    return JudgeCase(question="Which languages does Lena speak now?", answer=answer, kind="current",
                     expect_abstain=False, in_force=(VersionView(answer=current, valid_from="t10"),),
                     superseded=tuple(VersionView(answer=s, valid_from="t1", valid_until="t10") for s in superseded))


def test_extra_items_are_allowed_but_old_and_new_together_stay_a_hedge():
    assert judge_deterministic(_case("German, Italian and some Spanish", "German, Italian")).outcome == "correct"
    old = ("French, Italian",)
    assert judge_deterministic(_case("German, Italian and French", "German, Italian", old)).outcome == "wrong"
    assert judge_deterministic(_case("She used to speak French; now she speaks German and Italian.",
                                     "German, Italian", old)).outcome == "correct"
    assert judge_deterministic(_case("French and Italian", "German, Italian", old)).outcome == "stale"
    assert judge_deterministic(_case("German", "German, Italian", old)).outcome == "wrong"


def test_a_digit_group_comma_is_no_item_separator():
    assert list_items("raised $1,000 for the local animal shelter") == []
    assert gives("He raised $1000 for the local animal shelter", "raised $1,000 for the local animal shelter")
    assert list_items("apples, pears, 1,000 grapes") == ["apples", "pears", "1,000 grapes"]


def test_etc_is_no_item():
    assert list_items("apples, pears, etc.") == ["apples", "pears"]
    assert gives("apples and pears", "apples, pears, etc.")
    assert not gives("apples", "apples, pears, etc.")
