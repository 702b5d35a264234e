"""Vector-RAG baseline as in the LSREP paper: one vector per turn, top-k by cosine.

No decay, no fusion, no budget. The embedder is injected (anything with
`embed(texts) -> rows`); rows are assumed L2-normalised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> Any: ...


@dataclass(frozen=True)
class Hit:
    """A retrieved turn."""

    turn_id: str
    text: str
    similarity: float


@dataclass
class VectorRagMemory:
    """Stores each turn's vector; retrieves the top_k by cosine, similarity descending."""

    embedder: Embedder
    top_k: int = 30
    chronological: bool = False
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    _rows: list[np.ndarray] = field(default_factory=list)
    _matrix: np.ndarray | None = None
    """Rows 0.._filled of a buffer grown by doubling, so a search after new turns copies only those."""
    _filled: int = 0
    _held: set[str] = field(default_factory=set)

    def add(self, turn_id: str, text: str, embed_text: str | None = None) -> None:
        """Store a turn's text and the vector of `embed_text` (default: the text itself);
        a turn id already held is not stored again."""
        if turn_id in self._held:
            return
        self._held.add(turn_id)
        self.ids.append(turn_id)
        self.texts.append(text)
        vector_of = text if embed_text is None else embed_text
        self._rows.append(np.asarray(self.embedder.embed([vector_of]), dtype=np.float64)[0])

    def _grown(self) -> np.ndarray:
        n = len(self._rows)
        if self._matrix is None or self._matrix.shape[0] < n or self._filled > n:
            old, self._matrix = self._matrix, np.empty((max(64, 2 * n), self._rows[0].shape[0]))
            keep = min(self._filled, n) if old is not None else 0
            if keep:
                self._matrix[:keep] = old[:keep]
            self._filled = keep
        if self._filled < n:
            self._matrix[self._filled:n] = self._rows[self._filled:n]
            self._filled = n
        return self._matrix[:n]

    def search(self, question: str) -> list[Hit]:
        if not self.ids:
            return []
        matrix = self._grown()
        q = np.asarray(self.embedder.embed([question]), dtype=np.float64)[0]
        sims = np.round(matrix @ q, 12)
        # Equal similarities keep insertion (time) order: a stable sort of the candidates (every
        # row at least as similar as the k-th best, in index order) is the stable sort's top k.
        candidates = np.arange(len(sims))
        if len(sims) > self.top_k:
            kth = np.partition(sims, len(sims) - self.top_k)[len(sims) - self.top_k]
            candidates = np.flatnonzero(sims >= kth)
        order = candidates[np.argsort(-sims[candidates], kind="stable")][: self.top_k]
        if self.chronological:
            order = np.sort(order)
        return [Hit(self.ids[i], self.texts[i], float(sims[i])) for i in order]

    def clear(self) -> None:
        self.ids.clear()
        self._held.clear()
        self.texts.clear()
        self._rows.clear()
        self._matrix, self._filled = None, 0

    def dump(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "texts": list(self.texts), "rows": [r.copy() for r in self._rows]}

    def load(self, state: dict[str, Any]) -> None:
        self.ids, self.texts = list(state["ids"]), list(state["texts"])
        self._held = set(self.ids)
        self._rows = [r.copy() for r in state["rows"]]
        self._matrix, self._filled = None, 0
