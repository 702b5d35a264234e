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
        # Vectorised over trigrams: each is keyed by its three code points and looked up in a
        # sorted table of (key -> signed bucket) that grows as new trigrams appear (SHA-1 only
        # for those). Each occurrence adds +-1, so the float sums are exact integers: equal to
        # adding sign * count per distinct trigram.
        table = _table(self.dim)
        ascii_text = padded.isascii()
        points = np.frombuffer(padded.encode("ascii" if ascii_text else "utf-32-le"),
                               dtype=np.uint8 if ascii_text else np.uint32)
        if ascii_text:  # the common case: a direct table indexed by the three 7-bit codes
            points = points.astype(np.int32)
            codes = table.ascii_codes((points[:-2] << 14) | (points[1:-1] << 7) | points[2:])
        else:
            points = points.astype(np.int64)
            codes = table.codes((points[:-2] << 42) | (points[1:-1] << 21) | points[2:])
        vec = np.bincount(codes >> 1, weights=1.0 - 2.0 * (codes & 1), minlength=self.dim)
        length = float(np.linalg.norm(vec))
        return vec / length if length > 0 else vec


class _TrigramTable:
    """Sorted trigram keys and their codes (bucket * 2, plus 1 where the sign is negative).

    Keys and codes are swapped in together as one tuple, so a thread reading while another
    adds trigrams sees either the old table or the new one.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.data = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        # ASCII trigrams, code + 1 (0: not computed yet); zero pages stay unallocated until used.
        self.direct = np.zeros(1 << 21, dtype=np.int64)

    def ascii_codes(self, keys: np.ndarray) -> np.ndarray:
        codes = self.direct[keys]
        unknown = codes == 0
        if unknown.any():
            for k in np.unique(keys[unknown]).tolist():  # idempotent writes: safe across threads
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
