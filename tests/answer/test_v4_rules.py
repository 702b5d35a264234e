"""Answerer v4 rules: the reply to an asking sentence, counting lines, category lists (places, titles, activities)."""

from __future__ import annotations

from datetime import datetime

from lsrep.answer.categories import category_kind, category_span
from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.contract import Fragment
from lsrep.judge.normalize import gives
from tests.answer.answer_testkit import ask, line


def test_an_asking_best_sentence_gives_way_to_the_reply():
    answer = ask("What is Ben's second novel about?",
                 line("2024-05-20 20:01", "Ana", "Wow, that cover looks great Ben! Is that your second novel?"),
                 line("2024-05-20 20:02", "Ben", "Yep! I wrote it because it is personal. It's about grief, "
                                                 "memory, and forgiveness. Took me years."))
    assert gives(answer, "grief, memory, and forgiveness"), answer
    assert "?" not in answer


def test_a_question_to_the_listener_gives_way_to_what_its_own_line_states():
    answer = ask("What pet does Ana have?",
                 line("2024-05-20 20:01", "Ana", "Thanks! Busy week. And yes, I do- Pip, my hamster. He's been "
                                                 "great. How are your pets?"))
    assert "hamster" in answer, answer


def test_a_tag_question_that_states_the_fact_still_answers():
    answer = ask("What do lilies represent according to Ana?",
                 line("2024-05-20 20:01", "Ana", "Love the vase! Blue is my colour, it calms me. Lilies mean "
                                                 "purity and renewal, right? What do flowers mean to you?"))
    assert gives(answer, "purity and renewal"), answer


COUNTED = (line("2024-04-17 18:47", "Ana", "On a different note, I found an amazing cycling route by the river "
                                           "yesterday! It was gorgeous."),
           line("2024-05-12 15:37", "Ana", "I went out and found some more great cycling routes in my town."))


def test_how_many_times_counts_the_days_whose_lines_state_it():
    answer = ask("How many times has Ana found new cycling routes?", *COUNTED)
    assert gives(answer, "twice") and gives(answer, "2"), answer
    assert not gives(answer, "three")


def test_a_length_of_time_is_not_counted_and_a_stated_number_wins():
    answer = ask("How many weeks passed between Ana's two cycling routes?", *COUNTED)
    assert not gives(answer, "2"), answer
    stated = ask("How many dogs has Ana adopted?",
                 line("2024-04-17 18:47", "Ana", "We adopted three dogs from the shelter this spring!"),
                 line("2024-05-12 15:37", "Ana", "The dogs love the garden; I adopted them all in April."))
    assert gives(stated, "3"), stated


def test_one_line_is_not_a_count():
    answer = ask("How many times has Ana found new cycling routes?", COUNTED[0])
    assert answer != "1" and not gives(answer, "2"), answer


def test_a_category_list_takes_the_instances_each_line_names():
    places = ask("Where has Omar travelled?",
                 line("2024-01-29 14:35", "Omar", "Hey! Busy with the shop. Oh, I was in Lisbon yesterday! So sunny."),
                 line("2024-06-19 10:04", "Omar", "Took a short trip last week to Oslo to clear my mind a little."))
    assert gives(places, "Lisbon, Oslo"), places
    activities = ask("What activities has Omar done?",
                     line("2024-01-29 14:35", "Omar", "I'm off to go rowing with my brother!"),
                     line("2024-03-02 11:04", "Omar", "Lately I'm doing some pilates and it gives me energy."))
    assert gives(activities, "rowing, pilates"), activities
    movies = ask("What movies has Omar watched?",
                 line("2024-02-07 09:43", "Omar", 'I just watched "Blue Harbour" and it was amazing!'),
                 line("2024-05-02 11:54", "Omar", 'Took your advice and watched "The Long Field" last night!'))
    assert gives(movies, '"Blue Harbour", "The Long Field"'), movies


def test_category_kinds_and_spans():
    assert category_kind("What martial arts has John done?") == "activity"
    assert category_kind("What books has Ana read?") == "title"
    assert category_kind("What is Ana's favourite colour?") is None
    assert category_span("activity", "I'm off to do some judo after work.") == "judo"
    assert category_span("activity", "I'm doing well, thanks!") is None
    assert category_span("title", "I read Little Dorrit twice.") == "Little Dorrit"


def test_the_same_input_gives_the_same_bytes():
    q = "Which cities has Omar visited?"
    ctx = [line("2024-01-29 14:35", "Omar", "I was in Lisbon yesterday!"),
           line("2024-06-19 10:04", "Omar", "A short trip to Oslo last week.")]
    assert len({ask(q, *ctx).encode() for _ in range(3)}) == 1


def test_fragment_analysis_is_shared_across_probes_and_undated_lines_take_each_probes_now():
    from lsrep.answer.extractive import fragment_sentences

    dated = "[2024-03-02 09:15] Ana (user): I moved to Leeds yesterday. It rains."
    fragment_sentences.cache_clear()
    assert fragment_sentences(dated) is fragment_sentences(dated)
    assert [p[0] for p in fragment_sentences(dated)] == ["I moved to Leeds yesterday.", "It rains."]
    assert fragment_sentences(dated)[0][3] == "Ana"
    undated = [Fragment(text="Ana said she moved to Leeds yesterday.")]
    early = ExtractiveAnswerer().answer("When did Ana move to Leeds?", undated, datetime(2024, 3, 2))
    late = ExtractiveAnswerer().answer("When did Ana move to Leeds?", undated, datetime(2024, 5, 9))
    assert gives(early, "2024-03-01") and gives(late, "2024-05-08"), (early, late)
