"""THALIA's shared tokenizer (seed-systems 3.3.1) and its stopword list.

T(x) is the list of `[A-Za-z0-9]+` matches in lowercase(x), repeats kept; U(x) is the
set of distinct tokens. Retrieval and scoring use the same tokenizer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def tokenize(text: str) -> list[str]:
    """T(x): lowercase alphanumeric tokens in order, repeats kept [SEED]."""
    return _TOKEN.findall(text.lower())


def distinct_tokens(text: str) -> frozenset[str]:
    """U(x): the distinct tokens of T(x)."""
    return frozenset(tokenize(text))


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """The shipped English stopword list [CHOICE]."""
    path = Path(__file__).with_name("stopwords.txt")
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words.update(line.split())
    return frozenset(words)


def content_tokens(text: str) -> frozenset[str]:
    """U(x) minus stopwords."""
    stop = stopwords()
    return frozenset(t for t in tokenize(text) if t not in stop)


def token_count(text: str) -> int:
    """THALIA's own token estimate |T(x)| (the evidence budget's unit) [SEED]."""
    return len(tokenize(text))
