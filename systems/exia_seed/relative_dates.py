"""Relative day expressions resolved against the day a sentence was said.

Only expressions that name one calendar day are resolved: `yesterday`, `last night`, `today`,
`tonight`, `tomorrow`, `last <weekday>`, `next <weekday>`, `N days ago`, `N weeks ago`,
`in N days`. `Last week`, `last month`, `last year` and `a few days ago` name a span, not a
day, and stay unresolved: a consolidator that turned them into a day would invent a date.

The citation checker accepts an event date derivable this way from a cited source and its
day (seed-systems 4.3.4 step 7: "strip an event date that is not derivable from the cited
text or the batch date").
"""

from __future__ import annotations

import re
from datetime import date, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}
_FIXED = {"yesterday": -1, "last night": -1, "today": 0, "tonight": 0, "this morning": 0,
          "this afternoon": 0, "this evening": 0, "tomorrow": 1}
_PATTERN = re.compile(
    r"\b(?:(?P<fixed>yesterday|last night|today|tonight|this (?:morning|afternoon|evening)|tomorrow)"
    r"|(?P<dir>last|next) (?P<weekday>" + "|".join(WEEKDAYS) + r")"
    r"|(?P<n>\d{1,2}|" + "|".join(_NUMBERS) + r") (?P<unit>days?|weeks?) ago"
    r"|in (?P<m>\d{1,2}|" + "|".join(_NUMBERS) + r") days?)\b",
    re.IGNORECASE,
)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def relative_days(text: str, said: date) -> list[date]:
    """The days the text names relative to `said`, in order of appearance."""
    found: list[date] = []
    for m in _PATTERN.finditer(text):
        if m["fixed"]:
            found.append(said + timedelta(days=_FIXED[" ".join(m["fixed"].lower().split())]))
        elif m["weekday"]:
            target = WEEKDAYS.index(m["weekday"].lower())
            if m["dir"].lower() == "last":
                back = (said.weekday() - target) % 7 or 7
                found.append(said - timedelta(days=back))
            else:
                ahead = (target - said.weekday()) % 7 or 7
                found.append(said + timedelta(days=ahead))
        elif m["n"]:
            days = _count(m["n"]) * (7 if m["unit"].lower().startswith("week") else 1)
            found.append(said - timedelta(days=days))
        else:
            found.append(said + timedelta(days=_count(m["m"])))
    return found
