"""Time between two events, for the offline answerer: "How many weeks passed between X and Y?".

A question asking how much time lies between two things ("how many weeks passed between ...", "how long
did it take ... to ...", "how many months after ... did ...") is answered by arithmetic on the dates of the
two best-matching lines that name different days: each line's event date is the date its best sentence
names (relative expressions resolved against the day it was said, as for when-questions), else the day
it was said; a span of days ("the week before 13 August 2023") counts by its middle day. The answer is
the distance in the unit asked ("2 weeks"), else in the coarsest unit that is at least 2 ("5 months").
Abstains from this rule (None) when the context does not hold two lines dated differently.

Plain calendar arithmetic; nothing here names a particular event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from lsrep.temporal import whole_date

_ELAPSED = re.compile(
    r"\bhow (?:many|much) (?P<unit>days?|weeks?|months?|years?|time)\b(?!\s+(?:a|an|per|each|every)\b)"
    r"(?=.*\b(?:between|passed|elapsed|went by|go by|gone by|take|took|after|before|apart|later|earlier|since)\b)"
    r"|\bhow long (?:did it take|does it take|had it been|was it|after|before|between|passed)\b"
    r"|\bhow long\b(?=.*\b(?:between|after|before)\b)", re.I)
_DAYS = {"day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25}
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
          10: "ten", 11: "eleven", 12: "twelve"}


def asks_elapsed(question: str) -> bool:
    """The question asks how much time lies between two events (not "how long has X been ...")."""
    return bool(_ELAPSED.search(question)) and not re.search(r"\bhow long ago\b", question, re.I)


def _unit(question: str) -> str | None:
    m = _ELAPSED.search(question)
    unit = (m.group("unit") or "").lower().rstrip("s") if m else ""
    return unit if unit in _DAYS else None


def _middle(text: str) -> date | None:
    span = whole_date(text)
    if span is None or not span.year_known:
        return None
    return span.start + (span.end - span.start) / 2


def elapsed(question: str, lines: Sequence[tuple[float, Any]], event_date: Callable[[Any], str]) -> str | None:
    """`lines`: (score, best sentence of a line), best first; `event_date(sentence)`: the date it names or
    was said. The distance between the best line's event and the next best line's event on another day."""
    dated: list[date] = []
    for _, s in lines:
        day = _middle(event_date(s))
        if day is None:
            continue
        if not dated:
            dated.append(day)
        elif day != dated[0]:
            dated.append(day)
            break
    if len(dated) < 2:
        return None
    days = abs((dated[1] - dated[0]).days)
    unit = _unit(question)
    if unit is None:
        unit = next(u for u in ("year", "month", "week", "day") if days / _DAYS[u] >= 2 or u == "day")
    n = round(days / _DAYS[unit])
    if n < 1:
        return None
    return f"{_WORDS.get(n, str(n))} {unit}{'s' if n != 1 else ''}"
