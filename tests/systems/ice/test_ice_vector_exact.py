"""ICE's vector leg reuses a query's product with the rows it already saw, bit for bit.

The rule is one BLAS product of the query with every stored vector (`matrix @ q`), then the
stable top k. `ProductCache` computes, for a query vector asked before, only the rows added
since; these tests compare it with the whole product bit for bit (float32 bits, not closeness:
ties and near-ties decide the ranking), and the store's searches with the plain rule.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from lsrep.systems.ice.embedding import (
    PRODUCT_BLOCK,
    ProductCache,
    blockwise_check,
    blockwise_exact,
)
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord

T0 = datetime(2024, 1, 1, tzinfo=UTC)
TOPICS = ["general", "health", "work"]


def _bits(a: np.ndarray) -> list[int]:
    return np.asarray(a, dtype=np.float32).view(np.uint32).tolist()


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_the_block_rule_holds_for_this_blas():
    """The fast path must actually run here, or the comparisons below compare the rule with itself."""
    assert all(blockwise_exact(d) for d in (4, 7, 64, 384, 512))


@pytest.mark.parametrize("dim", [512, 100, 7])
def test_product_cache_equals_the_whole_product(dim):
    rng = np.random.default_rng(dim)
    buf = _unit(rng, 3000, dim)
    # A few vectors asked again and again, some once, and exact duplicates of stored rows.
    queries = [_unit(rng, 1, dim)[0] for _ in range(6)] + [buf[5].copy(), buf[700].copy()]
    cache = ProductCache()
    n, compared, reused = 0, 0, 0
    while n < buf.shape[0]:
        n = min(buf.shape[0], n + int(rng.choice([1, 3, 20, 63, 64, 65, 200])))
        for q in rng.permutation(len(queries))[:5]:
            before = cache._entries.get(queries[q].tobytes())
            got = cache.product(buf[:n], queries[q])
            assert _bits(got) == _bits(buf[:n] @ queries[q]), (dim, n, q)
            compared += 1
            reused += before is not None
    assert compared > 100 and reused > compared // 2


def test_product_cache_is_bounded_and_starts_again_after_eviction():
    rng = np.random.default_rng(1)
    buf = _unit(rng, 600, 64)
    cache = ProductCache(max_entries=3)
    queries = [_unit(rng, 1, 64)[0] for _ in range(5)]
    for n in (130, 300, 600):
        for q in queries:
            assert _bits(cache.product(buf[:n], q)) == _bits(buf[:n] @ q)
        assert len(cache._entries) == 3
    small = ProductCache(max_bytes=600 * 4)  # room for one query's rows
    for q in queries:
        assert _bits(small.product(buf, q)) == _bits(buf @ q)
        assert len(small._entries) == 1


def test_no_cache_when_blas_may_use_threads(monkeypatch):
    """A threaded product splits rows where it likes: the cache stands aside."""
    blockwise_exact.cache_clear()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    try:
        assert not blockwise_exact(512)
        cache = ProductCache()
        buf = _unit(np.random.default_rng(2), 300, 512)
        assert _bits(cache.product(buf, buf[0])) == _bits(buf @ buf[0])
        assert not cache._entries
    finally:
        monkeypatch.undo()
        blockwise_exact.cache_clear()
    assert blockwise_exact(512)


def _grouped(group: int):
    """A product like a BLAS that takes rows `group` at a time and the last `n % group` with
    other arithmetic (here: one ulp up), from the start of each call."""
    def product(a: np.ndarray, q: np.ndarray) -> np.ndarray:
        out = a @ q
        tail = a.shape[0] % group
        if tail:
            out[-tail:] = np.nextafter(out[-tail:], np.float32(np.inf))
        return out
    return product


def test_the_self_check_rejects_a_blas_whose_groups_the_blocks_do_not_cover():
    """The check is a real one: groups dividing the block pass, larger groups fail."""
    assert blockwise_check(32, _grouped(4)) and blockwise_check(32, _grouped(PRODUCT_BLOCK))
    assert not blockwise_check(32, _grouped(2 * PRODUCT_BLOCK))
    assert not blockwise_check(32, _grouped(3))
    assert not blockwise_check(32, lambda a, q: (a @ q) * np.float32(1 + 1e-6 * (a.shape[0] > 100)))


def _store_search_plain(store: EpisodicStore, q: np.ndarray, k: int, topic: str | None) -> list[str]:
    rows = store.conn.execute("SELECT t.turn_id, v.vec, t.topic FROM turns t JOIN turn_vectors v"
                              " ON v.rowid = t.rowid ORDER BY t.rowid").fetchall()
    matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    sims = matrix @ q
    order = [i for i in np.argsort(-sims, kind="stable") if topic is None or rows[i][2] == topic]
    return [rows[i][0] for i in order[:k]]


@pytest.mark.parametrize("seed", range(3))
def test_vector_search_equals_the_plain_rule_as_the_store_grows(tmp_path, seed):
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    dim = 64
    store = EpisodicStore(tmp_path / "vec.sqlite")
    probes = [_unit(rng, 1, dim)[0] for _ in range(4)]
    stored: list[np.ndarray] = []
    n = 0
    for stage in range(12):
        for _ in range(pick.choice([1, 7, 40, 64, 90])):
            # exact duplicates and sign flips make ties; the same probe vector comes back
            vec = stored[pick.randrange(len(stored))] if stored and pick.random() < 0.15 else _unit(rng, 1, dim)[0]
            stored.append(vec)
            rec = TurnRecord(f"t{n:05d}", "c1", f"s{n // 20}", n, T0 + timedelta(minutes=n), "user", "x")
            assert store.add(rec, vec, pick.choice(TOPICS))
            n += 1
        for q in [*probes, stored[pick.randrange(len(stored))]]:
            for k in (1, 5, 30):
                for topic in (None, "work"):
                    assert store.vector_search(q, k, topic) == _store_search_plain(store, q, k, topic), (
                        seed, stage, k, topic)
        if stage == 6:  # a reopened store starts with no cached rows and agrees too
            store.close()
            store = EpisodicStore(tmp_path / "vec.sqlite")
    assert n > 2 * PRODUCT_BLOCK and store._vec._products._entries
