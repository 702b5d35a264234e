"""Dates in a sentence for the offline answerer: which date expression answers a when-question."""

from __future__ import annotations

import bisect
import re
from datetime import date

from lsrep.answer.when import resolve_more, years_ago
from lsrep.answer.words import QUESTION_WORDS, keys
from lsrep.temporal import (
    RELATIVE,
    absolute_matches,
    resolve_day_of_month,
    resolve_relative,
    resolve_since,
    whole_date,
)

PAST_QUESTION = re.compile(r"^\W*(?:when|on what date|what date|which (?:day|month|year))\s+(?:did|was|were|had)\b",
                           re.I)
"""A when-question about something done ("When did X start ...?")."""
PLANNED = re.compile(r"\b(?:plan|planned|planning|intend|intended|going to|schedul\w*|expect\w*|meant to|"
                     r"hop(?:e|ed) to)\b", re.I)
"""A past question about a plan ("When did X plan to visit?") asks for the date planned, ahead of its saying."""


def date_span(text: str, when: date, question: str = "") -> str | None:
    """The date a sentence names (absolute before relative); of several, the one nearest a word of the
    question ("I've trained since last year and the race is next Sunday": for the race, next Sunday)."""
    found = [(m[0], text[m[0]:m[1]]) for m in absolute_matches(text)]
    if not found:
        found = [(m.start(), years_ago(m.group(0), when) or r) for m in RELATIVE.finditer(text)
                 if (r := resolve_relative(m, when))]
    if len(found) > 1 and question:
        asked = keys(question) - QUESTION_WORDS
        spots = [m.start() for m in re.finditer(r"[\w'’-]+", text) if keys(m.group(0)) & asked]
        if spots:
            return min(found, key=lambda f: (_distance(spots, f[0]), f[0]))[1]
    if found:
        return found[0][1]
    return resolve_more(text, when) or resolve_day_of_month(text, when) or resolve_since(text, when)


def _distance(spots: list[int], at: int) -> int:
    """Characters from `at` to the nearest of the sorted positions `spots`."""
    i = bisect.bisect_left(spots, at)
    return min(abs(spots[j] - at) for j in (i - 1, i) if 0 <= j < len(spots))


def ahead(span: str, said: date) -> bool:
    """The date expression lies wholly after the day it was said on."""
    found = whole_date(span)
    return found is not None and found.year_known and found.start > said
