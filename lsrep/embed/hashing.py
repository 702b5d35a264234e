"""Embedders the harness can hand to systems. The hashing embedder is the offline default.

`HashingEmbedder` is THALIA's hashing-trigram surrogate (seed-systems section 3.3.5):
signed SHA-1 buckets of character trigrams, L2-normalised. Every system that embeds
reads vectors from the same embedder, so a matched comparison compares memory, not
vectors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from lsrep.text import collapse_whitespace

BATCH_CHARS = 1 << 18
"""Texts are embedded together in chunks of about this many characters (bounded temporaries)."""


class HashingEmbedder:
    """Deterministic hashing-trigram embedder (no weights, no downloads)."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.name = f"hashing-trigram-sha1-d{dim}"
        self._primed: dict[str, np.ndarray] = {}
        self._pending: list[str] = []
        self._pending_set: set[str] = set()
        self._next = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text; all texts of the call are embedded together (same vectors as one by one)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        todo, norms = [], []
        for row, text in enumerate(texts):
            hit = self._lookup(text) if self._pending_set or self._primed else None
            if hit is not None:
                out[row] = hit
                continue
            norm = _normalised(text)
            if norm:
                todo.append(row)
                norms.append(norm)
        if todo:
            out[todo] = self._embed_normalised(norms)
        return out

    def prime(self, texts: Sequence[str]) -> None:
        """Embed these texts in batches, for the `embed` calls that follow.

        A system embeds turn by turn; the adapter host primes the embedder with the contents of a
        prefetched batch of turns, so most later one-text calls are lookups: the first call for a
        primed text embeds it with the primed texts after it (one chunk of about `BATCH_CHARS`).
        A text is found under its exact string, whitespace-collapsed as `embedding_text` gives it
        (`" ".join(text.split())`), so a hit is by definition that text's vector. Each vector is
        handed out once and a chunk replaces the one before: memory stays one chunk.
        """
        self._pending = list(dict.fromkeys(key for key in map(collapse_whitespace, texts) if key))
        self._pending_set = set(self._pending)
        self._next = 0
        self._primed = {}

    def _lookup(self, text: str) -> np.ndarray | None:
        hit = self._primed.pop(text, None)
        while hit is None and text in self._pending_set:
            start = end = self._next
            size = 0
            while end < len(self._pending) and size < BATCH_CHARS:
                size += len(self._pending[end]) + 4
                end += 1
            keys = self._pending[start:end]
            self._next = end
            self._pending_set.difference_update(keys)
            # `key` has single spaces only and lowercasing never makes whitespace: key.lower() is
            # its normalised form (the tests compare primed vectors with the definition).
            self._primed = dict(zip(keys, self._embed_chunk([key.lower() for key in keys]), strict=True))
            hit = self._primed.pop(text, None)
        return hit

    def _embed_normalised(self, norms: list[str]) -> np.ndarray:
        """Rows for non-empty normalised texts, embedded in chunks of about `BATCH_CHARS`."""
        out = np.empty((len(norms), self.dim), dtype=np.float64)
        start = size = 0
        for end, norm in enumerate(norms, 1):
            size += len(norm) + 4
            if size >= BATCH_CHARS or end == len(norms):
                out[start:end] = self._embed_chunk(norms[start:end])
                start, size = end, 0
        return out

    def _embed_chunk(self, norms: list[str]) -> np.ndarray:
        # Every text padded with two spaces each side and joined; its trigrams are those starting in
        # its own padded span (the two starting in a span's last two places cross into the next
        # text: counted in a spare slot, dropped). Each trigram is keyed by its three code points and
        # looked up in a table of (key -> signed bucket) that grows as new trigrams appear (SHA-1
        # only for those). Occurrences are counted per (text, bucket, sign) in integers and each
        # bucket's value is its + count minus its - count: the exact integers the signed sum gives,
        # in any order, so the squared norms are exact too.
        n, dim = len(norms), self.dim
        padded = "".join(f"  {norm}  " for norm in norms)
        spans = np.fromiter((len(norm) + 4 for norm in norms), dtype=np.int64, count=n)
        ends = np.cumsum(spans)
        table = _table(dim)
        if padded.isascii():  # the common case: a direct table indexed by the three 7-bit codes
            points = np.frombuffer(padded.encode("ascii"), dtype=np.uint8).astype(np.int32)
            codes = table.ascii_codes((points[:-2] << 14) | (points[1:-1] << 7) | points[2:])
        else:
            points = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
            codes = table.codes((points[:-2] << 42) | (points[1:-1] << 21) | points[2:])
        width = 2 * dim
        # Slot of each trigram: its text's row * 2 dim + its code (bucket * 2 + sign bit).
        flat = np.repeat(np.arange(0, n * width, width, dtype=np.int64), spans)[:-2]
        flat += codes
        crossing = ends[:-1]
        flat[crossing - 2] = flat[crossing - 1] = n * width
        counts = np.bincount(flat, minlength=n * width + 1)[:n * width].reshape(n, dim, 2)
        vecs = (counts[:, :, 0] - counts[:, :, 1]).astype(np.float64)
        lengths = np.sqrt(np.einsum("ij,ij->i", vecs, vecs))
        lengths[lengths == 0] = 1.0  # a text whose signs cancel keeps its zero vector
        return vecs / lengths[:, None]


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


class _TrigramTable:
    """Sorted trigram keys and their codes (bucket * 2, plus 1 where the sign is negative).

    Keys and codes are swapped in together as one tuple, so a thread reading while another
    adds trigrams sees either the old table or the new one.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.data = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        # ASCII trigrams, code + 1 (0: not computed yet); zero pages stay unallocated until used.
        # int16 where the codes fit (4 MiB of address space instead of 16).
        small = 2 * dim + 1 < np.iinfo(np.int16).max
        self.direct = np.zeros(1 << 21, dtype=np.int16 if small else np.int64)

    def ascii_codes(self, keys: np.ndarray) -> np.ndarray:
        codes = self.direct[keys]
        unknown = codes == 0
        if unknown.any():
            # The distinct new keys, by a mark per key (np.unique would sort, and import numpy.ma
            # into every adapter host); idempotent writes: safe across threads.
            seen = np.zeros(len(self.direct), dtype=np.bool_)
            seen[keys[unknown]] = True
            for k in np.flatnonzero(seen).tolist():
                self.direct[k] = 1 + _code(chr(k >> 14) + chr((k >> 7) & 0x7F) + chr(k & 0x7F), self.dim)
            codes = self.direct[keys]
        return codes - 1

    def codes(self, keys: np.ndarray) -> np.ndarray:
        table, values = self.data
        at = np.searchsorted(table, keys)
        found = at < len(table)
        found[found] = table[at[found]] == keys[found]
        if not found.all():
            missing = np.unique(keys[~found])
            new = np.array([_code(_trigram(int(k)), self.dim) for k in missing.tolist()], dtype=np.int64)
            merged = np.concatenate([table, missing])
            order = np.argsort(merged, kind="stable")
            table, values = merged[order], np.concatenate([values, new])[order]
            self.data = (table, values)
            at = np.searchsorted(table, keys)
        return values[at]


def _trigram(key: int) -> str:
    return chr(key >> 42) + chr((key >> 21) & 0x1FFFFF) + chr(key & 0x1FFFFF)


def _code(trigram: str, dim: int) -> int:
    bucket, sign = _bucket(trigram, dim)
    return bucket * 2 + (1 if sign < 0 else 0)


@lru_cache(maxsize=16)
def _table(dim: int) -> _TrigramTable:
    return _TrigramTable(dim)


@lru_cache(maxsize=200_000)
def _bucket(trigram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.sha1(trigram.encode("utf-8", "surrogatepass")).digest()
    bucket = int.from_bytes(digest[0:4], "big") % dim
    sign = 1.0 if digest[4] % 2 == 0 else -1.0
    return bucket, sign
