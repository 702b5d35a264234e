"""Vector-RAG's grown matrix and partial top-k return exactly what a full stable sort of a fresh stack does."""

from __future__ import annotations

import numpy as np
from lsrep.systems.vector_rag import VectorRagMemory


class TableEmbedder:
    """Vectors from a fixed table (few distinct rows, so similarities tie often)."""

    name = "table"

    def __init__(self, seed: int = 3) -> None:
        rng = np.random.default_rng(seed)
        self.table = rng.normal(size=(5, 8))
        self.table /= np.linalg.norm(self.table, axis=1, keepdims=True)

    def embed(self, texts):
        return np.stack([self.table[int(t.split()[-1]) % 5] for t in texts])


def reference(memory: VectorRagMemory, question: str) -> list[tuple[str, float]]:
    q = memory.embedder.embed([question])[0]
    sims = np.round(np.vstack(memory._rows) @ q, 12)
    order = np.argsort(-sims, kind="stable")[: memory.top_k]
    return [(memory.ids[i], float(sims[i])) for i in order]


def test_search_matches_the_full_stable_sort_as_the_store_grows_and_is_restored():
    memory = VectorRagMemory(embedder=TableEmbedder(), top_k=7)
    rng = np.random.default_rng(0)
    snapshot = None
    for i in range(300):
        memory.add(f"t{i}", f"turn {rng.integers(0, 50)}")
        if i == 150:
            snapshot = memory.dump()
        if i % 13 == 0:
            question = f"q {rng.integers(0, 50)}"
            got = [(h.turn_id, h.similarity) for h in memory.search(question)]
            assert got == reference(memory, question)
            assert len(got) == min(7, i + 1)
    memory.load(snapshot)
    got = [(h.turn_id, h.similarity) for h in memory.search("q 2")]
    assert got == reference(memory, "q 2") and len(memory.ids) == 151
