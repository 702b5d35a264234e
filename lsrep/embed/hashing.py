"""Embedders the harness can hand to systems. The hashing embedder is the offline default.

`HashingEmbedder` is THALIA's hashing-trigram surrogate (seed-systems section 3.3.5):
signed SHA-1 buckets of character trigrams, L2-normalised. Every system that embeds
reads vectors from the same embedder, so a matched comparison compares memory, not
vectors.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np


class HashingEmbedder:
    """Deterministic hashing-trigram embedder (no weights, no downloads)."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.name = f"hashing-trigram-sha1-d{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text)
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        norm_text = " ".join(text.lower().split())
        if not norm_text:
            return np.zeros(self.dim, dtype=np.float64)
        padded = f"  {norm_text}  "
        counts = Counter(padded[i : i + 3] for i in range(len(padded) - 2))
        buckets = np.empty(len(counts), dtype=np.int64)
        weights = np.empty(len(counts), dtype=np.float64)
        for k, (trigram, n) in enumerate(counts.items()):
            bucket, sign = _bucket(trigram, self.dim)
            buckets[k], weights[k] = bucket, sign * n
        vec = np.bincount(buckets, weights=weights, minlength=self.dim)
        length = float(np.linalg.norm(vec))
        return vec / length if length > 0 else vec


@lru_cache(maxsize=200_000)
def _bucket(trigram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.sha1(trigram.encode("utf-8", "surrogatepass")).digest()
    bucket = int.from_bytes(digest[0:4], "big") % dim
    sign = 1.0 if digest[4] % 2 == 0 else -1.0
    return bucket, sign
