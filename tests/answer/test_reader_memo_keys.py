"""The reader's memos of issue #20 part 2, key by key: each test fails when its memo's key leaves out
what the memoised work reads (hand-mutated: see the commit message).

- `extractive._question` (once per question): another question, another analysis;
- `bridge._named_in_line` (per line and speakers' words): another speaker set, another naming;
- `memo.Context` built column by column: an undated line takes the call's own now, and every
  sentence keeps its fragment, line, speaker and order.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

import lsrep.answer.extractive as extractive
from lsrep.answer import memo
from lsrep.answer.bridge import _named_in_line, named_in
from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.contract import Fragment

QUESTIONS = [
    "Where did Ana move to?", "When did Ana move to Lisbon?", "Which cities has Ana lived in?",
    "What kind of event did Bob attend?", "What do Ana and Bob both like?", "How many dogs does Bob have?",
    "Would Ana move back to Paris?", "What does Ana like besides painting?", "Who did Ana meet at the cafe?",
]


@pytest.fixture(autouse=True)
def _fresh_memo():
    memo.clear()
    yield
    memo.clear()


def test_question_analysis_is_that_of_each_question():
    fresh = {q: extractive._question.fresh(q) for q in QUESTIONS}  # type: ignore[attr-defined]
    assert len({tuple(map(str, v)) for v in fresh.values()}) == len(QUESTIONS)  # each question reads its own
    for q in QUESTIONS + list(reversed(QUESTIONS)):
        assert extractive._question(q) == fresh[q]


TURNS = (
    "[2023-05-08 10:00] Ana: I moved to Lisbon last spring, the light there is wonderful.\n",
    "[2023-05-08 10:01] Bob: I went to a jazz concert with my sister, Clara, on Friday.\n",
    "[2023-06-01 09:00] Ana: Painting and hiking are what I love most. I also like swimming.\n",
    "[2023-06-01 09:02] Bob: We both like hiking! I have two dogs, Rex and Milo.\n",
    "Ana: I might move back to Paris one day, who knows.\n",
)


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_same_question_against_other_contexts_is_answered_from_each(question):
    reader = ExtractiveAnswerer()
    contexts = [TURNS, TURNS[:2], TURNS[2:], TURNS[::-1]]
    with memo.disabled():
        plain = [reader.answer(question, [Fragment(text=t, source_turn_ids=()) for t in c],
                               datetime(2023, 7, 1)) for c in contexts]
    warm = [reader.answer(question, [Fragment(text=t, source_turn_ids=()) for t in c], datetime(2023, 7, 1))
            for c in contexts + contexts]
    assert warm == plain + plain


def test_a_naming_memo_holds_the_speakers():
    line = "Thanks so much, my friend, Ben! And my old area, West County, flooded."
    with_ben = _named_in_line(line, frozenset({"ben"}))
    without = _named_in_line(line, frozenset({"ana"}))
    assert with_ben == (("my old area", "West County"),)
    assert without == (("my friend", "Ben"), ("my old area", "West County"))
    assert named_in([line], frozenset({"ben"})) == {"my old area": "West County"}
    assert named_in([line], frozenset({"ana"})) == {"my friend": "Ben", "my old area": "West County"}


def test_the_first_naming_over_the_lines_wins_whatever_the_memo_holds():
    a, b = "I love my home town, Porto.", "Back in my home town, Braga, it rained."
    assert named_in([a, b], frozenset()) == {"my home town": "Porto"}
    assert named_in([b, a], frozenset()) == {"my home town": "Braga"}
    assert named_in([b, b, a], frozenset()) == {"my home town": "Braga"}


def test_a_context_dates_undated_lines_by_its_own_now_and_keeps_each_sentence():
    texts = (TURNS[4], TURNS[0] + TURNS[1], TURNS[4])
    first = memo.context(texts, date(2023, 7, 1))
    later = memo.context(texts, date(2024, 1, 2))
    with memo.disabled():
        plain = memo.Context(texts, date(2024, 1, 2))
    assert [s.when for s in first.sentences if "Paris" in s.text] == [date(2023, 7, 1)] * 2
    assert [s.when for s in later.sentences if "Paris" in s.text] == [date(2024, 1, 2)] * 2
    assert later.sentences == plain.sentences and later.bags == plain.bags and later.lines == plain.lines
    assert [s.order for s in later.sentences] == list(range(len(later.sentences)))
    assert later.starts == (0, 1, len(later.sentences) - 1)
    # Per sentence: (text, line, date, speaker) as the fragment's own sentences say.
    rebuilt = [(s.text, s.line, s.when, s.speaker) for s in later.sentences]
    expected = [(t, line, when or date(2024, 1, 2), who)
                for text in texts for t, line, when, who in memo.fragment_sentences(text)]
    assert rebuilt == expected
    assert {s.when for s in later.sentences if s.speaker == "Bob"} == {date(2023, 5, 8)}
