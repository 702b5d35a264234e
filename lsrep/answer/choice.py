"""Choice questions for the offline answerer: "Would X prefer a national park or a theme park?".

Such a question is not answered yes or no: it is answered by one of its alternatives, the one
the context supports more (more of its content words, or words related to them, in the context's
lines), the first on a tie. "Answer yes or no" is not a choice of alternatives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_CHOICE = re.compile(r"\s+or\s+((?:(?:a|an|the|some|to|in|at|on)\s+)?[\w'’-]+(?:\s+[\w'’-]+){0,3})\s*\??\s*$", re.I)
_LEAD = re.compile(r"^(?:(?:a|an|the|some|to|in|at|on)\s+)+", re.I)


def alternatives(question: str) -> tuple[str, str] | None:
    """The two alternatives of a choice question ("a national park", "a theme park"), else None."""
    m = _CHOICE.search(question.strip())
    if not m or re.search(r"\byes\s+or\s+no\b", question, re.I):
        return None
    second = re.sub(r"\s+(?:first|instead|more|most|better|again)$", "", m.group(1).strip(), flags=re.I)
    before = question[:m.start()].split()
    width = len(second.split())
    first = " ".join(before[-width:]) if len(before) >= width else ""
    if not first or first.lower() == second.lower():
        return None
    return first, second


def choose(question: str, lines: Iterable[str], keys: Callable[[str], frozenset[str]],
           related: Callable[[str], frozenset[str]]) -> str | None:
    """The alternative the context's lines support more, without its article ("national park"); None when
    the question offers no choice."""
    pair = alternatives(question)
    if pair is None:
        return None
    bags = [keys(line) for line in lines]

    def support(option: str) -> int:
        own = keys(option) - (keys(pair[0]) & keys(pair[1]))  # "park" in both decides nothing
        return sum(1 for bag in bags for k in own if k in bag or related(k) & bag)

    first, second = pair
    pick = second if support(second) > support(first) else first
    return _LEAD.sub("", pick).strip(" ?.,")
