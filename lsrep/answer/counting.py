"""Counting questions for the offline answerer: the number asked for, or a count of the lines stating it.

"How many kids ...": the number (words or digits) with the word after it, preferring the noun the
question counts; "how often": the frequency ("twice a week"). A "how many" question whose best
sentence holds no number with that noun is answered by counting: the distinct days on which a
matching line states it ("found a trail" on one day, "found more trails" on another: 2), or the highest
ordinal a line gives the counted noun when that is more ("I won my fourth tournament": 4).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from lsrep.answer.asking import asks
from lsrep.text import STOPWORDS, fold

_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
                 "hundred thousand once twice a couple few several").split()
_NUMBER = re.compile(r"\b(\d+(?:[.,]\d+)?|" + "|".join(_NUMBER_WORDS) + r")\b(?:\s+([A-Za-z][\w-]*))?", re.I)

COUNT_SHARE = 0.5
"""A line counts toward a "how many" answer when its best sentence scores at least this share of the best."""
_HOW_MANY = re.compile(r"\bhow many\s+(?:(?:\w+\s+)?times\b|(?!(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b)"
                       r"([\w'-]+))", re.I)
"""A "how many" question that counts (not "how many weeks passed", a length of time)."""


_FREQUENCY = re.compile(
    r"\b(?:(?:once|twice|thrice|\w+ times|a few times|several times|multiple times|many times)\s+(?:a|per|each|every)\s+"
    r"(?:day|week|month|year|weekend)|every\s+(?:other\s+)?(?:day|week|month|year|weekend|morning|night|evening|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:daily|weekly|monthly|yearly|annually))\b", re.I)


def count_span(text: str, question: str) -> str | None:
    if re.search(r"\bhow often\b", question, re.I):
        m = _FREQUENCY.search(text)
        if m:
            return m.group(0)
    m = re.search(r"\bhow (?:many|much)\s+(\w+)", question, re.I)
    noun = fold(m.group(1).lower()) if m else None
    best = None
    for hit in _NUMBER.finditer(text):
        word = (hit.group(2) or "").lower()
        number = hit.group(1)
        if number.lower() in ("a",) or (number.lower() == "one" and word in ("of", "day")):
            continue
        phrase = f"{number} {hit.group(2)}" if hit.group(2) and word not in STOPWORDS else number
        if noun and fold(word) == noun:
            return phrase
        best = best or phrase
    return best


def counts_noun(text: str, question: str) -> bool:
    """The sentence gives a number with the noun a "how many" question counts ("two dogs", "twice")."""
    m = re.search(r"\bhow many\s+([\w'-]+)", question, re.I)
    span = count_span(text, question)
    if not m or not span:
        return False
    noun = fold(m.group(1).lower())
    if noun == fold("times"):
        return bool(re.search(r"\b(?:once|twice|thrice|\w+ times)\b", text, re.I))
    return fold(span.split()[-1].lower()) == noun


def counted(question: str, scored: Sequence[tuple], best_score: float, holds: Callable[[Any, str], bool],
            number_with_noun: Callable[[Any], bool]) -> str | None:
    """For "how many (times) ..." questions: the number of distinct days on which a line scoring at least
    COUNT_SHARE of the best states it (its line holding the counted noun, `holds(sentence, noun)`, when one
    is asked about), as digits;
    None when the best sentence already gives a number with the noun, or fewer than two days count."""
    m = _HOW_MANY.search(question)
    if not m or not scored:
        return None
    best = scored[0][2]
    if number_with_noun(best):
        return None
    noun = m.group(1)
    days: set[Any] = set()
    lines: set[str] = set()
    for score, _, s, _shared in scored:
        if score < best_score * COUNT_SHARE:
            break
        if s.line in lines or asks(s.text):
            continue
        lines.add(s.line)
        if noun and not holds(s, noun):
            continue
        days.add(s.when)
    nth = max((ordinal(s.line, noun) for _, _, s, _shared in scored),
              default=0)
    if nth >= 2 and nth > len(days):
        return str(nth)  # "I won my fourth tournament": at least four, whatever the context holds of the others
    return str(len(days)) if len(days) >= 2 else None


_ORDINALS = {w: i for i, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
                                        "twelfth".split(), start=1)}
_ORDINAL = re.compile(r"\b(" + "|".join(_ORDINALS) + r"|\d+(?:st|nd|rd|th))\s+((?:[\w'-]+\s+){0,3}?)([\w'-]+)",
                      re.I)


def ordinal(text: str, noun: str | None) -> int:
    """The highest ordinal a text gives the counted noun ("my fourth video game tournament": 4; "your third
    one": 3), else 0."""
    best = 0
    for m in _ORDINAL.finditer(text):
        word = m.group(3).lower()
        if noun and fold(word) != fold(noun.lower()) and word != "one":
            continue
        token = m.group(1).lower()
        n = _ORDINALS.get(token) or int(re.match(r"\d+", token).group(0))
        best = max(best, n)
    return best
