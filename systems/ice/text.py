"""Tokens, stems, sentences and ICE's token estimate (characters / 4, rounded up)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t don didn doesn isn wasn weren won
    ll re ve d m o y also us let get got i'm i've i'd it's that's""".split()
)


def estimate_tokens(text: str) -> int:
    """ICE's token estimate: characters / 4, rounded up (seed-systems 2.4, chosen)."""
    return (len(text) + 3) // 4


def words(text: str) -> list[str]:
    """Lowercase word tokens in order."""
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Lowercase non-stopword tokens in order, repeats dropped."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and w not in seen:
            seen[w] = None
    return list(seen)


def stem(word: str) -> str:
    """A crude suffix stripper, enough to match `answers` with `answer`."""
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def stems(text: str) -> set[str]:
    """Stems of the content words of a text."""
    return {stem(w) for w in content_words(text)}


def sentences(text: str) -> list[str]:
    """Sentences (split on terminal punctuation and newlines), stripped, non-empty."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def normalise_name(name: str) -> str:
    """Entity-name key: the lowercase words joined by single spaces."""
    return " ".join(words(name))


def ngrams(text: str, max_n: int = 5) -> list[str]:
    """Every normalised word n-gram of the text up to max_n words, longest first."""
    toks = words(text)
    out: dict[str, None] = {}
    for n in range(min(max_n, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            out[" ".join(toks[i : i + n])] = None
    return list(out)


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query over the content words, each quoted (no syntax errors on punctuation)."""
    terms = content_words(text)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
