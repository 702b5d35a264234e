"""The default embedder: signed SHA-1 buckets of character trigrams, L2-normalised.

The same algorithm as the harness's offline embedder (THALIA's hashing surrogate), copied
here so that ICE stands alone; given the same dimension, both give identical vectors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    """Anything with `embed(texts) -> 2-D array of L2-normalised rows`."""

    def embed(self, texts: Sequence[str]) -> Any: ...


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
    bucket = int.from_bytes(digest[0:4], "big") % dim
    sign = 1.0 if digest[4] % 2 == 0 else -1.0
    return bucket, sign


def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """One text's vector as float32 (how ICE stores vectors)."""
    return np.asarray(embedder.embed([text]), dtype=np.float32)[0]


def to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


class VectorCache:
    """Ids and their vectors in storage order, loaded once and appended to as rows are added.

    Searching a store then costs one matrix product, not one decode per stored row. The rows
    buffer grows by doubling, so appending is amortised O(1). `None` until first loaded.
    """

    def __init__(self) -> None:
        self.ids: list[str] | None = None
        self._buf = np.zeros((0, 0), dtype=np.float32)

    def load(self, rows: list[tuple[str, bytes]]) -> None:
        self.ids = [r[0] for r in rows]
        self._buf = (np.vstack([from_blob(r[1]) for r in rows]) if rows
                     else np.zeros((0, 0), dtype=np.float32))

    def append(self, item_id: str, vec: np.ndarray) -> None:
        """Add a row if the cache is loaded (an unloaded cache reads it from the store later)."""
        if self.ids is None:
            return
        vec = np.asarray(vec, dtype=np.float32)
        n = len(self.ids)
        if self._buf.shape[0] == 0 or self._buf.shape[1] != vec.shape[0]:
            self._buf = np.zeros((max(16, 2 * n), vec.shape[0]), dtype=np.float32)
        elif n == self._buf.shape[0]:
            grown = np.zeros((2 * n, self._buf.shape[1]), dtype=np.float32)
            grown[:n] = self._buf
            self._buf = grown
        self._buf[n] = vec
        self.ids.append(item_id)

    def matrix(self) -> np.ndarray:
        return self._buf[:len(self.ids or ())]
