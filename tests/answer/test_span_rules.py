"""Answerer v3 rules: lists over lines, asking sentences, vocatives, would-questions, thin clauses, images."""

from __future__ import annotations

from datetime import datetime

from lsrep.answer.extractive import ExtractiveAnswerer, asks_for_list
from lsrep.contract import Fragment
from lsrep.judge.normalize import gives

NOW = datetime(2023, 9, 1, 12, 0)


def line(stamp: str, who: str, text: str) -> Fragment:
    return Fragment(text=f"[{stamp}] {who} (user): {text}")


def ask(question: str, *fragments: Fragment) -> str:
    return ExtractiveAnswerer().answer(question, list(fragments), NOW)


def test_list_questions_are_recognised():
    for q in ("What activities has Melanie done with her family?", "Which cities has Jon visited?",
              "Where has Melanie camped?", "What has Melanie painted?", "What books has Melanie read?"):
        assert asks_for_list(q), q
    for q in ("What is Caroline's identity?", "What does Melanie do to destress?",
              "What kind of art does Caroline make?", "Where did Caroline move from?"):
        assert not asks_for_list(q), q


def test_a_list_question_gathers_one_span_from_each_matching_line():
    ctx = [line("2023-05-08 10:00", "Melanie", "We went camping at the beach last month, so relaxing."),
           line("2023-06-08 10:00", "Melanie", "Hey Caroline! The kids and I went camping in the mountains."),
           line("2023-07-08 10:00", "Melanie", "My favourite recipe is a lentil soup."),
           line("2023-08-08 10:00", "Melanie", "Another camping trip, this time we camped in the forest!")]
    answer = ask("Where has Melanie camped?", *ctx)
    assert gives(answer, "beach, mountains, forest")
    assert "lentil" not in answer


def test_a_sentence_that_asks_loses_to_the_reply_that_states():
    ctx = [line("2023-07-15 13:50", "Caroline", "Which creative projects do your kids enjoy, besides pottery?"),
           line("2023-07-15 13:51", "Melanie", "The kids and I love painting landscapes together.")]
    answer = ask("What creative project do Melanie and her kids do together besides pottery?", *ctx)
    assert "painting" in answer and "?" not in answer


def test_a_greeted_listener_is_not_the_answer():
    ctx = [line("2023-05-08 10:00", "Maria", "Hey John, I made friends at the homeless shelter with Laura.")]
    assert ask("Who did Maria make friends with at the shelter?", *ctx) == "Laura"


def test_would_questions_answer_yes_only_when_the_context_states_it():
    ctx = [line("2023-05-08 10:00", "Caroline", "I'm still looking into counseling jobs, it's my career goal.")]
    assert ask("Would Caroline pursue writing as a career?", *ctx).startswith("Likely no")
    assert ask("Would Caroline pursue counseling as a career?", *ctx).startswith("Yes")


def test_a_thin_last_sentence_takes_the_contentful_one_before_it():
    ctx = [line("2023-05-06 17:13", "Maria",
                "Just yesterday I joined a nearby church. I wanted to feel closer to a community and my faith.")]
    answer = ask("What did Maria do to feel closer to a community and her faith?", *ctx)
    assert "joined a nearby church" in answer


def test_a_pointing_sentence_takes_the_shared_images_caption():
    ctx = [line("2023-07-15 13:54", "Melanie", "The kids were so excited to get their hands dirty and make something "
                "lovely with clay in the garden, they made this! [shares an image: a photo of a cup with a dog face on it]")]
    answer = ask("What did Melanie's kids make with clay?", *ctx)
    assert answer.endswith("they made this: a cup with a dog face on it")
