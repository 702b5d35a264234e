"""The default embedder: signed SHA-1 buckets of character trigrams, L2-normalised.

The same algorithm as the harness's offline embedder (THALIA's hashing surrogate), copied
here so that ICE stands alone; given the same dimension, both give identical vectors.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
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
        self.generation = 0
        """Counts loads and reallocations (products kept over `matrix()` are dropped on a change)."""

    def load(self, rows: list[tuple[str, bytes]]) -> None:
        self.generation += 1
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
            self.generation += 1
        elif n == self._buf.shape[0]:
            grown = np.zeros((2 * n, self._buf.shape[1]), dtype=np.float32)
            grown[:n] = self._buf
            self._buf = grown
            self.generation += 1
        self._buf[n] = vec
        self.ids.append(item_id)

    def matrix(self) -> np.ndarray:
        return self._buf[:len(self.ids or ())]


PRODUCT_BLOCK = 64
"""Rows per block of a `ProductCache` (a multiple of any BLAS kernel's row group seen)."""


class ProductCache:
    """`matrix[:n] @ q` for query vectors that come back, computing only the rows added since.

    The rule is the one BLAS product over every stored row, and its float32 bits depend on how
    the kernel groups rows: OpenBLAS's `sgemv_t` takes outputs four at a time from the start of
    the call and the last `n % 4` one by one, with other arithmetic, so a row's value depends on
    where it sits in the call, not only on its data. A row inside a call that starts a multiple
    of `PRODUCT_BLOCK` rows from the first and ends on such a multiple has the value it has in
    the whole product, as long as the whole product covers it with full groups too; the rows
    after the last whole block are computed by a call that starts one block earlier and ends
    where the whole product ends, so they fall into the same groups and the same tail as there.

    That is a property of the BLAS build, not of the arithmetic, so it is checked, not assumed:
    the cache works only if BLAS runs on one thread (a threaded product splits the rows at
    other places) and a self-check on a seeded matrix of the same width (`blockwise_exact`)
    gives the whole product's bits for every length and block boundary tried; otherwise every
    search is the plain product. Searches are then the same bit for bit: the ten probes of a
    checkpoint come back at every checkpoint, and each costs the rows added since its last
    asking instead of the whole history.
    """

    def __init__(self, max_bytes: int = 32 << 20, max_entries: int = 1024) -> None:
        self._entries: dict[bytes, np.ndarray] = {}  # LRU order: oldest first
        self._bytes = 0
        self.max_bytes = max_bytes
        self.max_entries = max_entries

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def product(self, matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Exactly `matrix @ q` (float32 rows, C-contiguous)."""
        n = matrix.shape[0]
        top = n - n % PRODUCT_BLOCK
        if top < PRODUCT_BLOCK or not blockwise_exact(matrix.shape[1]):
            return matrix @ q
        key = q.tobytes()
        known = self._entries.pop(key, None)
        if known is not None:
            self._bytes -= known.nbytes
        if known is None or known.shape[0] > top:
            sims = matrix @ q
            known = sims[:top].copy()
        else:
            if known.shape[0] < top:
                known = np.concatenate([known, matrix[known.shape[0]:top] @ q])
            tail = (matrix[top - PRODUCT_BLOCK:n] @ q)[PRODUCT_BLOCK:]
            sims = np.concatenate([known, tail])
        self._entries[key] = known
        self._bytes += known.nbytes
        while self._entries and (self._bytes > self.max_bytes
                                 or len(self._entries) > self.max_entries):
            oldest = next(iter(self._entries))
            self._bytes -= self._entries.pop(oldest).nbytes
        return sims


def _one_blas_thread() -> bool:
    """BLAS asked for one thread (LSREP sets both before numpy loads; a user may not)."""
    return all(os.environ.get(var) == "1" for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))


@cache
def blockwise_exact(dim: int) -> bool:
    """Whether `ProductCache`'s block rule gives the whole product's bits here (one BLAS
    thread, and `blockwise_check` passes for this width); checked once per width."""
    return _one_blas_thread() and blockwise_check(dim)


def blockwise_check(dim: int, product: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul) -> bool:
    """On a seeded random matrix of width `dim`, for every length from one block to five
    blocks and one row: the rows cached block by block (from a copy of the matrix elsewhere
    in memory) and the tail call must equal the whole product bit for bit."""
    rng = np.random.default_rng(20_261_206)
    rows = 5 * PRODUCT_BLOCK + 1
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    moved = np.array(matrix, copy=True)  # another allocation: alignment may differ
    q = rng.standard_normal(dim).astype(np.float32)
    blocks = [product(moved[b:b + PRODUCT_BLOCK], q)
              for b in range(0, rows - PRODUCT_BLOCK + 1, PRODUCT_BLOCK)]
    for n in range(PRODUCT_BLOCK, rows + 1):
        whole = product(matrix[:n], q).view(np.uint32)
        top = n - n % PRODUCT_BLOCK
        tail = product(moved[top - PRODUCT_BLOCK:n], q)[PRODUCT_BLOCK:]
        parts = np.concatenate([*blocks[:top // PRODUCT_BLOCK], tail]).view(np.uint32)
        if not np.array_equal(whole, parts):
            return False
    return True
