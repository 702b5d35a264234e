"""The summary leg's search keeps the products of query vectors asked before (`ProductCache`)
and takes the top k without sorting every summary: the same ids in the same order as one
product over every summary and a stable sort of it all (`search_scan`), bit for bit."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import numpy as np
import pytest
from lsrep.systems.ice.embedding import PRODUCT_BLOCK
from lsrep.systems.ice.overlays import SummaryStore

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("seed", range(3))
def test_summary_search_equals_the_whole_product_as_summaries_are_added(tmp_path, seed):
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    dim = 48
    path = tmp_path / "summaries.sqlite"
    store = SummaryStore(path)
    probes = [_unit(rng, dim) for _ in range(3)]
    stored: list[np.ndarray] = []
    compared = 0
    for stage in range(14):
        for _ in range(pick.choice([1, 5, 17, 40, 64])):
            # duplicated vectors tie exactly; the earlier summary must come first
            vec = stored[pick.randrange(len(stored))] if stored and pick.random() < 0.2 else _unit(rng, dim)
            stored.append(vec)
            store.add("c1", 0, 1, "2024-01-01", "2024-01-02", f"s{len(stored)}", ["t"], vec, T0)
        for q in [*probes, stored[pick.randrange(len(stored))], _unit(rng, dim)]:
            for k in (0, 1, 3, 8, 2000):
                assert store.search(q, k) == store.search_scan(q, k), (seed, stage, k)
                compared += 1
        if stage == 7:  # a reopened store starts without products and agrees too
            store.close()
            store = SummaryStore(path)
    assert len(stored) > 2 * PRODUCT_BLOCK and compared > 300
    assert store._products._entries  # the products were kept (the fast path ran)


def test_summary_products_are_dropped_when_the_rows_move(tmp_path):
    store = SummaryStore(tmp_path / "summaries.sqlite")
    rng = np.random.default_rng(5)
    q = _unit(rng, 16)
    for i in range(PRODUCT_BLOCK + 3):
        store.add("c1", i, i, "2024-01-01", "2024-01-01", f"s{i}", ["t"], _unit(rng, 16), T0)
    other = _unit(rng, 16)
    store.search(q, 3)
    store.search(other, 3)
    assert len(store._products._entries) == 2
    generation = store._vectors.generation
    for _ in range(4 * PRODUCT_BLOCK):  # past the next doubling of the row buffer
        store.add("c1", 0, 0, "2024-01-01", "2024-01-01", "x", ["t"], _unit(rng, 16), T0)
    assert store._vectors.generation > generation
    assert store.search(q, 5) == store.search_scan(q, 5)
    assert store._product_generation == store._vectors.generation
    assert list(store._products._entries) == [q.tobytes()]  # `other`'s product was dropped
