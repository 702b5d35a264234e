"""Tokenisation, normalisation and token estimates shared by the answerer, scorer and stores."""

from __future__ import annotations

import re
import string
from functools import lru_cache

_TOKEN = re.compile(r"[A-Za-z0-9]+")

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t don did didn doesn isn wasn weren won
    ll re ve d m o y also us let get got""".split()
)
"""A standard English stopword list (about 130 words), used for content-word tests."""


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric tokens, in order, repeats kept."""
    return _TOKEN.findall(text.lower())


def content_tokens(text: str) -> frozenset[str]:
    """Distinct tokens that are not stopwords."""
    if len(text) <= 2000:
        return _content_tokens_cached(text)
    return frozenset(t for t in tokens(text) if t not in STOPWORDS)


@lru_cache(maxsize=65536)
def _content_tokens_cached(text: str) -> frozenset[str]:
    # Context lines recur across probes and checkpoints; tokenise each once.
    return frozenset(t for t in tokens(text) if t not in STOPWORDS)


def estimate_tokens(text: str) -> int:
    """The harness's one token estimator for prompts: characters / 4, rounded up."""
    return (len(text) + 3) // 4


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation})


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, drop punctuation and articles, fold spaces."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())
