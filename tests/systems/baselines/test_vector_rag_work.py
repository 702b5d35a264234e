"""vector-RAG's search does the work its docstring promises, and no more.

The matrix is a buffer grown by doubling: a search allocates only when the rows outgrew it,
converts from the row list only the rows added since the last search, and sorts only the
candidates at least as similar as the k-th best. A change to any of these keeps the hits and
wastes work, so these tests count the work: the module's numpy is replaced by a proxy that
records each buffer allocation, each row written from the Python row list, each partition and
the size of each sort. The hits are checked against a stable full sort at the same time.
"""

from __future__ import annotations

import lsrep.systems.vector_rag as vector_rag
import numpy as np
import pytest
from lsrep.systems.vector_rag import VectorRagMemory


class Work:
    """What vector-RAG asked numpy to do: buffers allocated (rows), rows converted from the row
    list, partitions, and the length of each argsort."""

    def __init__(self) -> None:
        self.buffers: list[int] = []
        self.listed_rows = 0
        self.partitions = 0
        self.sorted: list[int] = []

    def reset(self) -> None:
        self.__init__()


@pytest.fixture
def work(monkeypatch) -> Work:
    real, seen = np, Work()

    class Buffer(np.ndarray):
        def __setitem__(self, key, value):
            if isinstance(value, list):
                seen.listed_rows += len(value)
            super().__setitem__(key, value)

    class CountingNumpy:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def empty(shape, *args, **kw):
            seen.buffers.append(shape[0])
            return real.empty(shape, *args, **kw).view(Buffer)

        @staticmethod
        def partition(a, kth, *args, **kw):
            seen.partitions += 1
            return real.partition(a, kth, *args, **kw)

        @staticmethod
        def argsort(a, *args, **kw):
            seen.sorted.append(len(a))
            return real.argsort(a, *args, **kw)

    monkeypatch.setattr(vector_rag, "np", CountingNumpy())
    return seen


class TableEmbedder:
    name = "table"

    def __init__(self) -> None:
        self.rows: dict[str, np.ndarray] = {}

    def embed(self, texts):
        return np.asarray([self.rows[t] for t in texts])


def distinct_vectors(n: int, seed: int = 3) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 16))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def stable_top(vectors: np.ndarray, q: np.ndarray, k: int) -> list[str]:
    sims = np.round(vectors @ q, 12)
    return [f"t{i}" for i in np.argsort(-sims, kind="stable")[:k]]


def filled_memory(vectors: np.ndarray, k: int = 30) -> tuple[VectorRagMemory, TableEmbedder]:
    e = TableEmbedder()
    m = VectorRagMemory(embedder=e, top_k=k)
    for i, v in enumerate(vectors):
        e.rows[f"turn {i}"] = v
        m.add(f"t{i}", f"turn {i}")
    e.rows["q"] = vectors[0] * 0.5 + vectors[-1] * 0.5
    return m, e


def test_the_buffer_doubles_only_when_outgrown_and_each_row_is_converted_once(work):
    vectors = distinct_vectors(200)
    e = TableEmbedder()
    m = VectorRagMemory(embedder=e, top_k=30)
    for i, v in enumerate(vectors):
        e.rows[f"turn {i}"] = e.rows[f"q{i}"] = v
        m.add(f"t{i}", f"turn {i}")
        assert [h.turn_id for h in m.search(f"q{i}")] == stable_top(vectors[: i + 1], v, 30)
    # 64 rows first; outgrown at 65 -> 2 * 65; outgrown at 131 -> 2 * 131
    assert work.buffers == [64, 130, 262]
    assert work.listed_rows == 200  # regrowing copies the old buffer, not the row list again


def test_a_search_with_no_new_turn_allocates_and_converts_nothing(work):
    m, _ = filled_memory(distinct_vectors(100))
    first = m.search("q")
    work.reset()
    assert m.search("q") == first and m.search("q") == first
    assert work.buffers == [] and work.listed_rows == 0


def test_new_turns_within_capacity_reuse_the_buffer_and_convert_only_themselves(work):
    vectors = distinct_vectors(70)
    m, e = filled_memory(vectors[:20])
    m.search("q")
    assert work.buffers == [64] and work.listed_rows == 20  # max(64, 2 * 20)
    for i in range(20, 64):  # up to exactly the capacity
        e.rows[f"turn {i}"] = vectors[i]
        m.add(f"t{i}", f"turn {i}")
    work.reset()
    assert [h.turn_id for h in m.search("q")] == stable_top(vectors[:64], e.rows["q"], 30)
    assert work.buffers == [] and work.listed_rows == 44
    e.rows["turn 64"] = vectors[64]
    m.add("t64", "turn 64")
    work.reset()
    m.search("q")
    assert work.buffers == [130] and work.listed_rows == 1  # the 64 kept rows are copied as one block


def test_only_the_candidates_are_sorted(work):
    vectors = distinct_vectors(200)
    m, e = filled_memory(vectors, k=30)
    work.reset()
    assert [h.turn_id for h in m.search("q")] == stable_top(vectors, e.rows["q"], 30)
    assert work.partitions == 1 and work.sorted == [30]  # distinct similarities: exactly k candidates


@pytest.mark.parametrize("n,k", [(30, 30), (5, 30), (1, 1)])
def test_at_most_k_rows_sort_everything_without_a_partition(work, n, k):
    vectors = distinct_vectors(n)
    m, e = filled_memory(vectors, k=k)
    work.reset()
    assert [h.turn_id for h in m.search("q")] == stable_top(vectors, e.rows["q"], k)
    assert work.partitions == 0 and work.sorted == [n]


@pytest.mark.parametrize("n,k", [(200, 30), (97, 10), (31, 30), (64, 7), (500, 30)])
def test_the_kth_threshold_is_the_kth_best_similarity(work, n, k):
    vectors = distinct_vectors(n, seed=n)
    for j in range(5):
        m, e = filled_memory(vectors, k=k)
        e.rows["q"] = vectors[(j * 17) % n]
        work.reset()
        assert [h.turn_id for h in m.search("q")] == stable_top(vectors, e.rows["q"], k)
        assert work.sorted == [k]  # neither fewer (wrong hits) nor more (wasted sort)
