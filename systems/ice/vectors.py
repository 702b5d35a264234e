"""The episodic store's vectors in memory: one float32 row per turn, in storage order."""

from __future__ import annotations

import numpy as np

from .embedding import ProductCache, from_blob
from .lexical import top_k_stable


class TurnVectors:
    """Ids, vectors and topic codes of the stored turns, read from the file once and grown in
    place as turns are added (the row buffer doubles, so an ingest appends in amortised O(1)
    instead of copying the whole matrix). Query products go through a `ProductCache`."""

    def __init__(self) -> None:
        self.ids: list[str] | None = None  # None: not loaded yet
        self._buf = np.zeros((0, 0), dtype=np.float32)
        self._codes = np.zeros(0, dtype=np.int64)
        """Topic code of each row (see `_topic_code`), grown with `_buf`."""
        self._topic_code: dict[str, int] = {}
        self._products = ProductCache()

    def load(self, rows: list[tuple[str, bytes, str]]) -> None:
        """(turn id, vector blob, topic) of every stored turn, in storage order."""
        self._products.clear()
        self.ids = [r[0] for r in rows]
        self._buf = (np.vstack([from_blob(r[1]) for r in rows]) if rows
                     else np.zeros((0, 0), dtype=np.float32))
        self._codes = np.array([self._topic_code.setdefault(r[2], len(self._topic_code))
                                for r in rows], dtype=np.int64)

    def append(self, turn_id: str, vec: np.ndarray, topic: str) -> None:
        """Add a row if loaded (an unloaded cache reads it from the file later)."""
        if self.ids is None:
            return
        vec = np.asarray(vec, dtype=np.float32)
        n = len(self.ids)
        if self._buf.shape[0] == 0 or self._buf.shape[1] != vec.shape[0]:
            self._buf = np.zeros((max(16, n * 2), vec.shape[0]), dtype=np.float32)
            self._codes = np.zeros(self._buf.shape[0], dtype=np.int64)
            self._products.clear()
        elif n == self._buf.shape[0]:
            grown = np.zeros((n * 2, self._buf.shape[1]), dtype=np.float32)
            grown[:n] = self._buf
            self._buf = grown
            self._codes = np.concatenate([self._codes, np.zeros(n, dtype=np.int64)])
            self._products.clear()  # new memory: products are recomputed on it
        self._buf[n] = vec
        self._codes[n] = self._topic_code.setdefault(topic, len(self._topic_code))
        self.ids.append(turn_id)

    def matrix(self) -> np.ndarray:
        return self._buf[:len(self.ids or ())]

    def search(self, qvec: np.ndarray, k: int, topic: str | None = None) -> list[str]:
        """Turn ids by cosine with the query, best first (stable ties: storage order)."""
        ids = self.ids or []
        if not ids:
            return []
        sims = self._products.product(self.matrix(), np.asarray(qvec, dtype=np.float32))
        if topic is not None:
            code = self._topic_code.get(topic)
            if code is None:
                return []
            allowed = np.flatnonzero(self._codes[:len(ids)] == code)
            return [ids[i] for i in allowed[top_k_stable(sims[allowed], k)]]
        return [ids[i] for i in top_k_stable(sims, k)]
