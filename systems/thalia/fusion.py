"""Weighted reciprocal-rank fusion, the recency bonus and MMR re-ranking (3.3.6-3.3.8)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .lexical import ORDER_DECIMALS

RECENCY_DECIMALS = 8
"""The recency-adjusted score is rounded to 8 decimals [SEED]."""


@dataclass(frozen=True)
class Lane:
    """One lane's ranking (document ids, best first) and its weight."""

    name: str
    ranking: tuple[int, ...]
    weight: float


@dataclass(frozen=True)
class Fused:
    doc: int
    score: float
    """The unrounded weighted-RRF sum (reported as is)."""


def weighted_rrf(lanes: Sequence[Lane], k: int = 60) -> list[Fused]:
    """RRF(c) = Σ_ℓ w_ℓ / (k + r_ℓ(c) + 1), r 0-based; each lane de-duplicated first [SEED].

    Ordering: score rounded to 12 decimals, descending, then ascending id.
    """
    scores: dict[int, float] = {}
    for lane in lanes:
        seen: set[int] = set()
        rank = 0
        for doc in lane.ranking:
            if doc in seen:
                continue  # keep the first occurrence only
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + lane.weight / (k + rank + 1)
            rank += 1
    order = sorted(scores, key=lambda d: (-round(scores[d], ORDER_DECIMALS), d))
    return [Fused(doc=d, score=scores[d]) for d in order]


@dataclass(frozen=True)
class Scored:
    """An item in a ranked list: its id, score and transcript source index."""

    doc: int
    score: float
    source_index: int


def apply_recency(items: Sequence[Scored], weight: float) -> list[Scored]:
    """s'_i = round8(s_i + ρ·s_max·i/i_max) for i >= 0 when i_max > 0 [SEED].

    Recalled windows (i < 0) are unchanged. Re-sorted by adjusted score descending, then
    source index ascending. A zero weight returns the list untouched (recency_zero_noop).
    """
    if weight == 0 or not items:
        return list(items)
    eligible = [it.source_index for it in items if it.source_index >= 0]
    i_max = max(eligible) if eligible else 0
    s_max = max(it.score for it in items)
    out = []
    for it in items:
        if it.source_index >= 0 and i_max > 0:
            adjusted = round(it.score + weight * s_max * it.source_index / i_max, RECENCY_DECIMALS)
            out.append(Scored(it.doc, adjusted, it.source_index))
        else:
            out.append(it)
    return sorted(out, key=lambda it: (-it.score, it.source_index))


def mmr_order(scores: Sequence[float], sim: Callable[[int, int], float], lam: float) -> list[int]:
    """Greedy MMR over positions 0..n-1 of a ranked list; returns positions in MMR order.

    rel_i is the min-max normalised score (1 for all when all are equal) [SEED]; scores are
    rounded to 12 decimals before normalising so that fusion ties stay exact ties.
    MMR(i|S) = λ·rel_i − (1 − λ)·max({sim(i, j): j ∈ S} ∪ {0}); ties go to relevance, then
    the lower position. With λ = 1 this is the input order (invariant).
    """
    n = len(scores)
    if n == 0:
        return []
    rounded = [round(s, ORDER_DECIMALS) for s in scores]
    lo, hi = min(rounded), max(rounded)
    rel = [1.0] * n if hi == lo else [(s - lo) / (hi - lo) for s in rounded]
    chosen: list[int] = []
    redundancy = [0.0] * n
    remaining = list(range(n))
    while remaining:
        def key(i: int) -> tuple[float, float, int]:
            value = lam * rel[i] - (1.0 - lam) * redundancy[i]
            return (-round(value, ORDER_DECIMALS), -round(rel[i], ORDER_DECIMALS), i)
        best = min(remaining, key=key)
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            redundancy[i] = max(redundancy[i], sim(i, best))
    return chosen
