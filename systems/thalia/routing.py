"""Task classification, routing and the explicit-memory cue (seed-systems 3.3.11-3.3.12).

The categories and the routing rule are [SEED]; the keyword rules are [CHOICE]: ordered,
first match wins.
"""

from __future__ import annotations

import re

from .contracts import Route, TaskCategory

_WORDS = lambda *ws: re.compile(r"\b(" + "|".join(ws) + r")\b", re.IGNORECASE)  # noqa: E731

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_CODE = (
    re.compile(r"```"),
    re.compile(r"(?:^|\s)(?:\.{0,2}/)?[\w.-]+/[\w./-]+"),          # file paths
    re.compile(r"\b\w+\.(?:py|js|ts|rs|go|java|c|cpp|h|json|yaml|yml|toml|sh|md)\b"),
    re.compile(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b"),                      # snake_case identifiers
    re.compile(r"\w\(\)"),                                          # calls
    _WORDS("error", "function", "deploy", "stack trace", "exception", "traceback"),
)
RULES: tuple[tuple[TaskCategory, tuple[re.Pattern[str], ...]], ...] = (
    ("code", _CODE),
    ("knowledge-update", (_WORDS("now", "currently", "still", "changed", "updated", "latest",
                                 "anymore", "switched"),)),
    ("temporal", (_WORDS("when", "what date", "how long", "before", "after", "ago", "first",
                         "last", *_MONTHS, *_DAYS),)),
    ("multi-session", (_WORDS("across", "in total", "how many", "all the", "sessions",
                              "each time"),)),
    ("preference", (_WORDS("prefer", "favorite", "favourite", "like", "recommend", "rather"),)),
)
"""Ordered keyword rules [CHOICE]; `single-session` is everything else."""

REACT_CATEGORIES: frozenset[str] = frozenset({"multi-session", "code", "knowledge-update"})
"""Routed read -> integrate (-> retry) [SEED; multi-hop read as multi-session, INFER]."""

MEMORY_CUE = re.compile(
    r"\b(remember|don't forget|do not forget|note that|keep in mind|save this|memorize)\b",
    re.IGNORECASE)
"""Explicit memory request x_N [CHOICE regex]."""

_CUE_STRIP = re.compile(
    r"^\s*(?:please[,\s]+)?(?:remember|don't forget|do not forget|note|keep in mind|save this|"
    r"memorize)(?:\s+that)?\s*[:,-]?\s*", re.IGNORECASE)


def classify_task(text: str) -> TaskCategory:
    """c_q: the first rule whose pattern matches; `single-session` otherwise."""
    for category, patterns in RULES:
        if any(p.search(text) for p in patterns):
            return category
    return "single-session"


def route_for(category: str) -> Route:
    return "react" if category in REACT_CATEGORIES else "single-pass"


def explicit_memory_request(text: str) -> bool:
    """x_N: the text carries an explicit memory cue."""
    return bool(MEMORY_CUE.search(text))


def requires_consolidation(category: str, text: str) -> bool:
    """r_N: knowledge-update task or an explicit memory cue [SEED]."""
    return category == "knowledge-update" or explicit_memory_request(text)


def strip_cue(text: str) -> str:
    """The fact without a leading cue phrase: 'Remember that X' -> 'X' [CHOICE]."""
    stripped = _CUE_STRIP.sub("", " ".join(text.split()), count=1).strip()
    return stripped[:1].upper() + stripped[1:] if stripped else " ".join(text.split())
