"""Agreement between two label sequences: percent agreement and Cohen's kappa.

Pure functions over paired sequences. Positions where either side is None
(a failed pass, an unlabelled item) are left out, and `n` says how many pairs
counted. Kappa is NaN when chance agreement is 1 (both raters constant and
identical), where it is undefined.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np


@dataclass(frozen=True)
class AgreementResult:
    """One agreement statistic over paired labels."""

    value: float
    """The statistic (NaN when undefined)."""
    n: int
    """Number of pairs counted."""
    method: str
    """`percent`, `cohen_kappa`, `cohen_kappa_linear` or `cohen_kappa_quadratic`."""


def _pairs(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> list[tuple]:
    if len(a) != len(b):
        raise ValueError(f"sequences differ in length: {len(a)} and {len(b)}")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def percent_agreement(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> AgreementResult:
    """Share of pairs with the same label."""
    pairs = _pairs(a, b)
    if not pairs:
        return AgreementResult(math.nan, 0, "percent")
    return AgreementResult(sum(x == y for x, y in pairs) / len(pairs), len(pairs), "percent")


def cohen_kappa(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    *,
    categories: Sequence[Hashable] | None = None,
    weights: Literal["none", "linear", "quadratic"] = "none",
) -> AgreementResult:
    """Cohen's kappa, unweighted or weighted by distance between ordered categories.

    `categories` fixes the label set and, for weighted kappa, its order (for a 1-5
    rubric pass `range(1, 6)` so distances use the whole scale). Defaults to the
    labels seen, sorted. Weighted kappa = 1 - sum(w * observed) / sum(w * expected)
    with disagreement weights |i - j| / (k - 1) (linear) or its square (quadratic).
    """
    method = "cohen_kappa" if weights == "none" else f"cohen_kappa_{weights}"
    pairs = _pairs(a, b)
    if not pairs:
        return AgreementResult(math.nan, 0, method)
    cats = list(categories) if categories is not None else sorted(
        {x for p in pairs for x in p}, key=lambda v: (str(type(v)), v)
    )
    index = {c: i for i, c in enumerate(cats)}
    unknown = {x for p in pairs for x in p} - index.keys()
    if unknown:
        raise ValueError(f"labels outside the categories: {sorted(map(str, unknown))}")
    k = len(cats)
    observed = np.zeros((k, k))
    for x, y in pairs:
        observed[index[x], index[y]] += 1
    observed /= len(pairs)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    if weights == "none":
        w = (i != j).astype(float)
    else:
        w = np.abs(i - j) / max(k - 1, 1)
        if weights == "quadratic":
            w = w**2
    denominator = float((w * expected).sum())
    if denominator == 0.0:
        return AgreementResult(math.nan, len(pairs), method)
    return AgreementResult(1.0 - float((w * observed).sum()) / denominator, len(pairs), method)


def pairwise_agreement(
    sequences: Mapping[str, Sequence[Hashable | None]],
    *,
    categories: Sequence[Hashable] | None = None,
    weights: Literal["none", "linear", "quadratic"] = "none",
) -> dict[tuple[str, str], tuple[AgreementResult, AgreementResult]]:
    """(percent agreement, kappa) for every pair of named sequences (e.g. passes or judges)."""
    out = {}
    for (na, a), (nb, b) in itertools.combinations(sequences.items(), 2):
        out[(na, nb)] = (
            percent_agreement(a, b),
            cohen_kappa(a, b, categories=categories, weights=weights),
        )
    return out
