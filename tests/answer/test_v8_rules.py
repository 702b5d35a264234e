"""Answerer v8 rules: list questions gather the instances each evidence line names, one by one.

Each test names the rule it pins and holds a hard negative the rule must not take.
"""

from __future__ import annotations

from lsrep.answer.categories import category_span
from lsrep.answer.lists import list_of
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_a_class_or_an_ing_trip_names_its_activity():
    assert category_span("activity", "I just signed up for a pottery class yesterday.") == "pottery"
    assert category_span("activity", "I started a weekend yoga class with a colleague.") == "yoga"
    assert category_span("activity", "I went on a mountaineering trip last week.") == "mountaineering"
    # Hard negatives: a road trip is no activity, nor "a first class" seat; the listener's trip is not the speaker's.
    assert category_span("activity", "We took a road trip to the coast.") is None
    assert category_span("activity", "We flew first class.") is None
    assert category_span("activity", "Wow, your camping trip sounds awesome!") is None


def test_an_ing_activity_keeps_the_noun_before_it_and_a_series_gives_every_item():
    assert category_span("activity", "I've done weight training so far too.") == "weight training"
    assert category_span("activity", "They offer a bunch, like yoga, kickboxing, and circuit training.") == \
        "yoga, kickboxing, circuit training"
    assert category_span("activity", "Besides writing, I also enjoy reading, watching movies, and exploring nature.") == \
        "writing, reading, watching movies, exploring nature"
    assert category_span("activity", "Writing and hanging with friends!") == "writing, hanging with friends"
    # Hard negatives: a series with no activity in it, and a sentence opening on a participle.
    assert category_span("activity", "I love cats, dogs, and birds.") is None
    assert category_span("activity", "Thinking about you.") is None
    assert category_span("activity", "Speaking of which, I went home.") is None
    assert category_span("activity", "Nothing!") is None


def test_an_activity_list_takes_every_line_and_names_each_activity_once():
    answer = ask("What exercises has John done?",
                 line("2022-12-17 11:04", "John", "Woah, Maria, that sounds cool! I'm doing kickboxing and it's giving me "
                                                  "so much energy."),
                 line("2023-04-07 00:24", "John", "I started a weekend yoga class with a colleague - it's awesome!"),
                 line("2023-07-22 18:33", "John", "Yeah, they offer a bunch, like yoga, kickboxing, and circuit training."),
                 line("2023-07-22 18:37", "John", "I've done weight training so far too. It was challenging but peaceful."))
    assert gives(answer, "weight training, circuit training, kickboxing, yoga"), answer
    assert answer.lower().count("yoga") == 1 and answer.lower().count("kickboxing") == 1, answer
    assert ";" not in answer and len(answer.split()) <= 8, answer


def test_itemised_lists_join_instances_once():
    scored = [(3.0, 0, _S("a", "l1"), frozenset()), (2.0, -1, _S("b", "l2"), frozenset())]
    pieces = {"a": "yoga, kickboxing", "b": "kickboxing, circuit training"}
    assert list_of(scored, 3.0, lambda s, sh: pieces[s.text], itemised=True) == "yoga, kickboxing, circuit training"
    # Without it, pieces stay whole (places: "Paris, France; Rome").
    assert list_of(scored, 3.0, lambda s, sh: pieces[s.text]) == "yoga, kickboxing; kickboxing, circuit training"


def test_participating_is_said_of_any_activity():
    # "partake" tells no activity from another: every line naming one gives it.
    answer = ask("What activities does Melanie partake in?",
                 line("2023-05-08 14:13", "Melanie", "Taking care of ourselves is vital. I'm off to go swimming with the kids."),
                 line("2023-07-03 13:39", "Melanie", "I just signed up for a pottery class yesterday. It's like therapy for me."),
                 line("2023-07-17 14:31", "Melanie", "I had a quiet weekend after we went camping with my fam two weekends ago."))
    assert gives(answer, "pottery, camping, swimming"), answer
    # Hard negative: a word that does tell them apart still picks the lines (only the one with the dog).
    answer = ask("What activities does Melanie do with her dog?",
                 line("2023-05-08 14:13", "Melanie", "I'm off to go swimming with the kids."),
                 line("2023-07-17 14:31", "Melanie", "I went hiking with my dog on Sunday."))
    assert "hiking" in answer and "swimming" not in answer, answer


def test_a_sentence_of_names_only_is_the_reply_to_a_names_question():
    # The line naming a pet outscores the bare reply by far; the reply still gives its names.
    answer = ask("What are Melanie's pets' names?",
                 line("2023-07-12 16:50", "Melanie", "Luna and Oliver! They are so sweet and playful - they really liven "
                                                     "up the house! Just got some new shoes, too! [shares an image: a photo "
                                                     "of a person wearing pink sneakers on a white rug]"),
                 line("2023-08-23 15:34", "Melanie", "Yeah, it's normal to be both excited and nervous with a big decision. "
                                                     "And thanks for asking, they're good- we got another cat named Bailey "
                                                     "too. Here's a pic of Oliver. Can you show me one of Oscar? [shares an "
                                                     "image: a photo of a black dog laying in the grass with a frisbee]"))
    assert gives(answer, "Oliver, Luna, Bailey"), answer
    assert ";" not in answer and answer.count("Oliver") == 1, answer  # one list, each name once


def test_a_bare_reply_below_the_best_line_still_gives_its_names():
    # The pet line says "pets" and "names" itself and is the best; the bare reply comes second and still counts.
    answer = ask("What are Melanie's pets' names?",
                 line("2023-07-12 16:50", "Melanie", "Luna and Oliver! They are so sweet and playful."),
                 line("2023-08-23 15:34", "Melanie", "The names of my pets? The newest pet cat is named Bailey."))
    assert gives(answer, "Oliver, Luna, Bailey"), answer
    assert answer.index("Bailey") < answer.index("Luna"), answer


def test_a_possessive_hobbies_question_is_an_activity_list():
    answer = ask("What are Joanna's hobbies?",
                 line("2022-01-21 19:40", "Joanna", "Yeah! Besides writing, I also enjoy reading, watching movies, and "
                                                    "exploring nature. Anything else you enjoy doing, Nate?"))
    assert gives(answer, "writing, reading, watching movies, exploring nature"), answer
    assert len(answer.split()) <= 7, answer


def test_names_said_by_someone_else_or_with_other_words_are_no_reply():
    # Hard negatives: Ben's roll names Ben's animals; a greeting is no roll.
    answer = ask("What are Melanie's pets' names?",
                 line("2023-07-12 16:50", "Ben", "Look at this, Melanie. Rex and Fido! They never stop barking."),
                 line("2023-07-12 16:52", "Melanie", "Thanks, Caroline!"),
                 line("2023-08-23 15:34", "Melanie", "We got another cat named Bailey too."))
    assert "Bailey" in answer and "Rex" not in answer and "Fido" not in answer and "Caroline" not in answer, answer


class _S:
    def __init__(self, text: str, line: str) -> None:
        self.text, self.line = text, line
