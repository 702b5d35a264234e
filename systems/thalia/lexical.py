"""The lexical lane: Okapi BM25 over the candidate windows, and PRF query expansion.

BM25(q, d) = Σ_{t∈T(q)} idf(t)·f(t,d)(k1+1) / (f(t,d) + k1(1 − b + b|d|/avgdl)),
idf(t) = ln(1 + (N − n_t + 0.5)/(n_t + 0.5)), summed over query-token occurrences [SEED].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .text import stopwords, tokenize

ORDER_DECIMALS = 12
"""Scores are compared after rounding to 12 decimals; ties go to the lower index [SEED]."""


@dataclass(frozen=True)
class LaneHit:
    """A document's rank-relevant score in one lane."""

    doc: int
    score: float


def bm25_idf(n_docs: int, doc_freq: int) -> float:
    """ln(1 + (N − n_t + 0.5)/(n_t + 0.5)), never negative [SEED]."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def rank_hits(scores: Sequence[float], k: int) -> list[LaneHit]:
    """Positive scores, descending after 12-decimal rounding, ties by ascending index; first k."""
    order = sorted((i for i, s in enumerate(scores) if s > 0),
                   key=lambda i: (-round(scores[i], ORDER_DECIMALS), i))
    return [LaneHit(doc=i, score=scores[i]) for i in order[:k]]


class BM25:
    """BM25 statistics of one candidate corpus (N, n_t, avgdl are corpus-local) [SEED]."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(tokenize(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.n_docs = len(docs)
        self.avgdl = (sum(self.lengths) / self.n_docs) if self.n_docs else 0.0
        self.df: Counter[str] = Counter()
        for tf in self.tfs:
            self.df.update(tf.keys())

    def idf(self, term: str) -> float:
        return bm25_idf(self.n_docs, self.df.get(term, 0))

    def scores(self, query: str) -> list[float]:
        out = [0.0] * self.n_docs
        k1, b = self.k1, self.b
        for term in tokenize(query):  # occurrences: a repeated query token counts again
            n_t = self.df.get(term, 0)
            if n_t == 0:
                continue  # absent from the corpus: contributes 0
            idf = bm25_idf(self.n_docs, n_t)
            for d, tf in enumerate(self.tfs):
                f = tf.get(term, 0)
                if f:
                    norm = 1.0 - b + b * (self.lengths[d] / self.avgdl if self.avgdl else 1.0)
                    out[d] += idf * f * (k1 + 1.0) / (f + k1 * norm)
        return out

    def top_k(self, query: str, k: int) -> list[LaneHit]:
        """Documents with a positive score, best first; zero-score documents are excluded."""
        return rank_hits(self.scores(query), k)


def expansion_terms(query: str, feedback_docs: Sequence[str], top_terms: int) -> list[str]:
    """PRF terms: c(t) = feedback windows containing t, minus stopwords, query terms and
    tokens of length <= 2; sorted by c descending then alphabetically; first K [SEED]."""
    original = set(tokenize(query))
    stop = stopwords()
    counts: Counter[str] = Counter()
    for doc in feedback_docs:
        counts.update({t for t in tokenize(doc)
                       if t not in stop and t not in original and len(t) > 2})
    ranked = sorted((t for t, c in counts.items() if c > 0), key=lambda t: (-counts[t], t))
    return ranked[:top_terms]


def expand_query(query: str, terms: Sequence[str]) -> str:
    """q' = q ‖ terms: the original query is kept whole, so q' ⊇ q (invariant)."""
    return query if not terms else f"{query} {' '.join(terms)}"
