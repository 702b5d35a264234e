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


# The rendering prefix `render_lines` puts before a line's words: `[YYYY-MM-DD] Speaker: ` (or
# `Speaker: ` without dates). Recalled windows join an episode's lines with spaces, so a dated
# prefix can also start mid-line.
_RENDER_PREFIX = re.compile(r"(?:^|(?<=\s))\[\d{4}-\d{2}-\d{2}\] [^:\n]{1,60}: |^[^:\n\[]{1,60}: ", re.MULTILINE)


def strip_rendering(text: str) -> str:
    """A rendered window or answer without its `[date] Speaker:` prefixes: the turns' own words."""
    return _RENDER_PREFIX.sub("", text)


def said_tokens(text: str) -> frozenset[str]:
    """Content tokens of what was said: U(x) minus stopwords, rendering prefixes excluded.

    Citation, support and ReAct integration compare these, so a shared date or speaker name
    (present on every line) does not make two lines share content.
    """
    return content_tokens(strip_rendering(text))


def token_count(text: str) -> int:
    """THALIA's own token estimate |T(x)| (the evidence budget's unit) [SEED]."""
    return len(tokenize(text))
