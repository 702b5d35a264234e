"""The semantic lane's embedder: THALIA's hashing-trigram surrogate (seed-systems 3.3.5).

Lowercase, collapse whitespace, pad with two spaces; hash every character trigram
(repeats kept) with SHA-1 into D buckets, the sign from the fifth digest byte [SEED];
bucket = big-endian digest bytes 0-3 mod D, sign + when byte 4 is even [CHOICE];
sum, then L2-normalise (empty input: the zero vector). A learned embedder plugs in
behind the same `embed(texts) -> 2-D array` interface.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    """Anything with `embed(texts)` returning one row per text."""

    def embed(self, texts: Sequence[str]) -> Any: ...


class HashingEmbedder:
    """Deterministic hashing-trigram embedder (no weights, no downloads)."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.name = f"thalia-hashing-trigram-sha1-d{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            out[row] = self.embed_one(text)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        norm_text = " ".join(text.lower().split())
        if not norm_text:
            return vec
        padded = f"  {norm_text}  "
        for i in range(len(padded) - 2):
            bucket, sign = _bucket(padded[i : i + 3], self.dim)
            vec[bucket] += sign
        length = float(np.linalg.norm(vec))
        return vec / length if length > 0 else vec


@lru_cache(maxsize=200_000)
def _bucket(trigram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.sha1(trigram.encode("utf-8")).digest()
    return int.from_bytes(digest[0:4], "big") % dim, (1.0 if digest[4] % 2 == 0 else -1.0)


def embed_matrix(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Rows for texts, L2-normalised defensively; zero rows stay zero."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float64)
    rows = np.asarray(embedder.embed(list(texts)), dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    return rows / safe


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """sim = e(a)·e(b) when both norms are > 0, else 0 [SEED]."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))
