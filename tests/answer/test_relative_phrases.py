"""Relative expressions the resolver once got wrong or left open: each is resolved against the day it was said."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.answer.when import resolve_more
from lsrep.contract import Fragment
from lsrep.temporal import RELATIVE, resolve_relative

WEDNESDAY = date(2023, 5, 10)
FRIDAY = date(2023, 5, 12)


def resolved(text: str, anchor: date) -> list[tuple[str, str | None]]:
    return [(m.group(0), resolve_relative(m, anchor)) for m in RELATIVE.finditer(text)]


@pytest.mark.parametrize(("said", "anchor", "expected"), [
    # Two days ahead, not "tomorrow" inside the phrase (which read one day ahead).
    ("we fly out the day after tomorrow", WEDNESDAY, [("the day after tomorrow", "12 May 2023")]),
    ("the day before yesterday", WEDNESDAY, [("the day before yesterday", "8 May 2023")]),
    ("I went tomorrow?", WEDNESDAY, [("tomorrow", "11 May 2023")]),
    # "this coming Friday" is the next Friday; said on a Friday, the one a week later.
    ("the game is this coming Friday", WEDNESDAY, [("this coming Friday", "12 May 2023")]),
    ("the game is this coming Friday", FRIDAY, [("this coming Friday", "19 May 2023")]),
    ("see you the coming Monday", WEDNESDAY, [("coming Monday", "15 May 2023")]),
    ("the upcoming weekend", WEDNESDAY, [("upcoming weekend", "the weekend after 10 May 2023")]),
    ("this coming month", WEDNESDAY, [("this coming month", "June 2023")]),
    # "this Friday" said after Friday stays the one just past (unchanged).
    ("this Friday", date(2023, 5, 13), [("this Friday", "12 May 2023")]),
    ("I saw it the other night", WEDNESDAY, [("the other night", "a few days before 10 May 2023")]),
    ("Friday is coming", WEDNESDAY, []),
])
def test_relative_phrases(said, anchor, expected):
    assert resolved(said, anchor) == expected


@pytest.mark.parametrize(("said", "expected"), [
    ("We met in mid-May at the fair.", "May 2023"),
    ("It was early-June when we left.", "June 2023"),
    ("We will go in late-August.", "August 2023"),
    ("We met in mid May at the fair.", "May 2023"),
    ("We met mid-May 5 at noon.", None),  # a month followed by a number is a date, not this family
])
def test_hyphenated_part_of_month(said, expected):
    assert resolve_more(said, date(2023, 7, 10)) == expected


def test_when_question_reads_this_coming_weekday_forward():
    frag = Fragment(text="[2023-05-10 09:00] Jon (user): My dance recital is this coming Friday, wish me luck!")
    answer = ExtractiveAnswerer().answer("When is Jon's dance recital?", [frag], datetime(2023, 6, 1))
    assert answer == "12 May 2023"
