"""The semantic lane: cosine over the injected embedder (hashing-trigram by default).

Only positive similarities rank; ties by ascending index after 12-decimal rounding
[SEED]. The corpus is embedded once per query; MMR reuses the same vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .embedding import Embedder, embed_matrix
from .lexical import LaneHit, rank_hits


class SemanticIndex:
    """Vectors of one candidate corpus; `top_k(query, k)` is the lane's interface [SEED]."""

    def __init__(self, docs: Sequence[str], embedder: Embedder) -> None:
        self.embedder = embedder
        self.vectors = embed_matrix(embedder, docs) if docs else np.zeros((0, 1))

    def similarities(self, query: str) -> list[float]:
        if len(self.vectors) == 0:
            return []
        q = embed_matrix(self.embedder, [query])[0]
        return [float(x) for x in self.vectors @ q]

    def top_k(self, query: str, k: int) -> list[LaneHit]:
        return rank_hits(self.similarities(query), k)

    def sim(self, i: int, j: int) -> float:
        """Cosine of two corpus documents (0 when either vector is zero)."""
        return float(self.vectors[i] @ self.vectors[j])
