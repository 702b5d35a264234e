"""Precise tests of ICE's vector-leg product cache, its BLAS self-check, the rowid map and the
batched decay (scripts/mutation/ice-vector-cache.toml).

`ProductCache.product` must be exactly `matrix @ q` (float32 bits) and do only the work its rule
names: for a query asked before, one product over the whole blocks added since (none when there
are none) and one over the last whole block and the rows after it. The work is counted by
handing it a matrix whose `@` records the rows of every product it is asked for; the values
are those of the plain ndarray product.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from lsrep.systems.ice import embedding
from lsrep.systems.ice.config import IceConfig
from lsrep.systems.ice.embedding import (
    PRODUCT_BLOCK,
    ProductCache,
    blockwise_check,
    blockwise_exact,
)
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord
from lsrep.systems.ice.vectors import TurnVectors
from lsrep.systems.ice.workers import decayed, decayed_all

T0 = datetime(2024, 1, 1, tzinfo=UTC)
B = PRODUCT_BLOCK


def _bits(a: np.ndarray) -> list[int]:
    return np.asarray(a, dtype=np.float32).view(np.uint32).tolist()


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


class Counted(np.ndarray):
    """An ndarray whose `@` logs the row count of each product (slices stay `Counted`)."""

    log: list[int] = []

    def __matmul__(self, other):
        Counted.log.append(self.shape[0])
        return np.asarray(self) @ np.asarray(other)


def _counted(m: np.ndarray) -> Counted:
    Counted.log = []
    return np.ascontiguousarray(m).view(Counted)


def _check(cache: ProductCache, m: Counted, n: int, q: np.ndarray) -> list[int]:
    """Product of the first n rows; asserts the bits and the byte count; returns the rows done."""
    Counted.log = []
    got = cache.product(m[:n], q)
    assert _bits(got) == _bits(np.asarray(m[:n]) @ q), n
    assert cache._bytes == sum(e.nbytes for e in cache._entries.values())
    return list(Counted.log)


def test_the_default_bounds_and_the_block():
    assert PRODUCT_BLOCK == 64
    cache = ProductCache()
    assert cache.max_bytes == 32 * 1024 * 1024 and cache.max_entries == 1024
    assert cache._bytes == 0 and cache._entries == {}


def test_work_of_a_query_asked_again_as_rows_are_added():
    rng = np.random.default_rng(3)
    m = _counted(_unit(rng, 12 * B + 5, 48))
    q, other = _unit(rng, 2, 48)
    cache = ProductCache()
    # below one whole block: the plain product, nothing kept
    assert _check(cache, m, B - 1, q) == [B - 1]
    assert cache._entries == {}
    assert _check(cache, m, B - 1, q) == [B - 1]
    # first time past a block: the whole product, its whole blocks kept
    assert _check(cache, m, B + 3, q) == [B + 3]
    assert [e.shape[0] for e in cache._entries.values()] == [B]
    # same length again: only the last block and the tail
    assert _check(cache, m, B + 3, q) == [B + 3]
    # exactly two blocks: one block added, an empty tail after the last whole block
    assert _check(cache, m, 2 * B, q) == [B, B]
    assert _check(cache, m, 2 * B, q) == [B]
    # five blocks and 7 rows: the three new blocks at once, then the last block and the tail
    assert _check(cache, m, 5 * B + 7, q) == [3 * B, B + 7]
    assert _check(cache, m, 5 * B + 9, q) == [B + 9]
    # another query: its own whole product, the first one's rows kept
    assert _check(cache, m, 5 * B + 9, other) == [5 * B + 9]
    assert _check(cache, m, 12 * B + 5, q) == [7 * B, B + 5]
    assert [e.shape[0] for e in cache._entries.values()] == [5 * B, 12 * B]
    # a shorter matrix than the rows kept: the whole product again, and the rows kept shrink
    assert _check(cache, m, 3 * B + 1, q) == [3 * B + 1]
    assert [e.shape[0] for e in cache._entries.values()] == [5 * B, 3 * B]
    assert _check(cache, m, 3 * B + 1, q) == [B + 1]
    assert _check(cache, m, 5 * B + 2, other) == [B + 2]


def test_one_whole_block_exactly_is_cached():
    rng = np.random.default_rng(5)
    m = _counted(_unit(rng, B, 16))
    q = _unit(rng, 1, 16)[0]
    cache = ProductCache()
    assert _check(cache, m, B, q) == [B]
    assert len(cache._entries) == 1
    assert _check(cache, m, B, q) == [B]  # the tail call of the last block: B rows, none new
    assert len(cache._entries) == 1


def test_eviction_is_least_recently_used_by_entries():
    rng = np.random.default_rng(6)
    m = _counted(_unit(rng, 2 * B, 8))
    qs = _unit(rng, 4, 8)
    cache = ProductCache(max_entries=3)
    for q in qs[:3]:
        _check(cache, m, 2 * B, q)
    assert _check(cache, m, 2 * B, qs[0]) == [B]  # asked again: now the newest
    _check(cache, m, 2 * B, qs[3])  # evicts qs[1], the least recently asked
    assert list(cache._entries) == [qs[2].tobytes(), qs[0].tobytes(), qs[3].tobytes()]
    assert _check(cache, m, 2 * B, qs[1]) == [2 * B]
    assert _check(cache, m, 2 * B, qs[3]) == [B]


def test_eviction_by_bytes_at_the_bound_and_past_it():
    rng = np.random.default_rng(7)
    m = _counted(_unit(rng, 3 * B, 8))
    qs = _unit(rng, 3, 8)
    one = 2 * B * 4  # bytes kept per query at 2 * B + 5 rows
    cache = ProductCache(max_bytes=2 * one)
    _check(cache, m, 2 * B + 5, qs[0])
    _check(cache, m, 2 * B + 5, qs[1])
    assert len(cache._entries) == 2 and cache._bytes == 2 * one  # at the bound: kept
    for _ in range(3):  # asked again and again: the count stays exact, nothing is evicted
        assert _check(cache, m, 2 * B + 5, qs[0]) == [B + 5]
        assert _check(cache, m, 2 * B + 5, qs[1]) == [B + 5]
    _check(cache, m, 2 * B + 5, qs[2])
    assert list(cache._entries) == [qs[1].tobytes(), qs[2].tobytes()]
    # growing one entry past the bound evicts the oldest, never the one just written
    _check(cache, m, 3 * B, qs[2])
    assert list(cache._entries) == [qs[2].tobytes()] and cache._bytes == 3 * B * 4
    # an entry larger than the bound alone is dropped right away
    tiny = ProductCache(max_bytes=B * 4 - 1)
    assert _check(tiny, m, B, qs[0]) == [B]
    assert tiny._entries == {} and tiny._bytes == 0


def test_the_default_byte_bound_holds_128_entries_of_a_quarter_mebibyte():
    """32 MiB = 128 entries of 65,536 float32 rows: the 129th evicts the first."""
    rows = 1 << 16
    m = np.ones((rows, 1), dtype=np.float32)
    cache = ProductCache()
    qs = [np.array([1.0 + i / 256], dtype=np.float32) for i in range(129)]
    for q in qs[:128]:
        cache.product(m, q)
    assert len(cache._entries) == 128 and cache._bytes == 32 << 20
    cache.product(m, qs[128])
    assert len(cache._entries) == 128 and next(iter(cache._entries)) == qs[1].tobytes()


def test_the_default_entry_bound_is_1024():
    m = np.ones((B, 2), dtype=np.float32)
    cache = ProductCache()
    for i in range(1025):
        cache.product(m, np.array([i, 1.0], dtype=np.float32))
        assert len(cache._entries) == min(i + 1, 1024)
    assert next(iter(cache._entries)) == np.array([1, 1.0], dtype=np.float32).tobytes()


def test_clear_forgets_rows_and_bytes():
    rng = np.random.default_rng(8)
    m = _counted(_unit(rng, 2 * B, 8))
    q = _unit(rng, 1, 8)[0]
    cache = ProductCache()
    _check(cache, m, 2 * B, q)
    cache.clear()
    assert cache._entries == {} and cache._bytes == 0
    assert _check(cache, m, 2 * B, q) == [2 * B]


def test_the_self_check_is_asked_for_the_matrix_width(monkeypatch):
    asked: list[int] = []

    def check(dim: int) -> bool:
        asked.append(dim)
        return dim != 7

    monkeypatch.setattr(embedding, "blockwise_exact", check)
    rng = np.random.default_rng(9)
    for dim in (7, 9):
        m = _counted(_unit(rng, 3 * B, dim))
        q = _unit(rng, 1, dim)[0]
        cache = ProductCache()
        _check(cache, m, 3 * B, q)
        assert _check(cache, m, 3 * B, q) == ([3 * B] if dim == 7 else [B])
        assert len(cache._entries) == (dim != 7)
    assert asked == [7, 7, 9, 9]


def test_a_failing_self_check_leaves_every_search_to_the_plain_product(monkeypatch):
    blockwise_exact.cache_clear()
    monkeypatch.setattr(embedding, "blockwise_check", lambda dim, product=np.matmul: False)
    try:
        assert not blockwise_exact(16)
        rng = np.random.default_rng(10)
        m = _counted(_unit(rng, 4 * B + 3, 16))
        q = _unit(rng, 1, 16)[0]
        cache = ProductCache()
        for n in (B, 2 * B + 1, 4 * B + 3, 4 * B + 3):
            assert _check(cache, m, n, q) == [n]
        assert cache._entries == {}
    finally:
        monkeypatch.undo()
        blockwise_exact.cache_clear()
    assert blockwise_exact(16)


def test_one_blas_thread_needs_both_variables_at_one(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    assert embedding._one_blas_thread()
    monkeypatch.setenv("MKL_NUM_THREADS", "2")
    assert not embedding._one_blas_thread()
    monkeypatch.delenv("MKL_NUM_THREADS")
    assert not embedding._one_blas_thread()
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "0")
    assert not embedding._one_blas_thread()


def test_the_self_check_runs_on_its_seeded_matrix_and_every_length():
    """The calls it makes: five blocks of a copy elsewhere in memory, then for every length n
    from one block to five blocks and one row the whole product and the tail call."""
    calls: list[tuple[np.ndarray, np.ndarray]] = []

    def product(a: np.ndarray, q: np.ndarray) -> np.ndarray:
        calls.append((a, q))
        return a @ q

    assert blockwise_check(5, product)
    rng = np.random.default_rng(20_261_206)
    rows = 5 * B + 1
    matrix = rng.standard_normal((rows, 5)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    q = rng.standard_normal(5).astype(np.float32)
    blocks, rest = calls[:5], calls[5:]
    for b, (a, qq) in enumerate(blocks):
        assert a.shape == (B, 5) and _bits(qq) == _bits(q)
        assert _bits(a.ravel()) == _bits(matrix[b * B:(b + 1) * B].ravel())
    whole, tails = rest[0::2], rest[1::2]
    assert [a.shape[0] for a, _q in whole] == list(range(B, rows + 1))
    assert [a.shape[0] for a, _q in tails] == [B + n % B for n in range(B, rows + 1)]
    assert _bits(whole[-1][0].ravel()) == _bits(matrix.ravel())
    block_base = blocks[0][0].base if blocks[0][0].base is not None else blocks[0][0]
    whole_base = whole[-1][0].base if whole[-1][0].base is not None else whole[-1][0]
    assert not np.shares_memory(block_base, whole_base)  # the blocks come from a copy
    assert all(np.shares_memory(a, block_base) for a, _q in tails)
    for n, (a, _q) in zip(range(B, rows + 1), tails, strict=True):
        top = n - n % B
        assert _bits(a.ravel()) == _bits(matrix[top - B:n].ravel())


def test_the_self_check_fails_at_the_first_length_that_differs():
    seen: list[int] = []

    def product(a: np.ndarray, q: np.ndarray) -> np.ndarray:
        seen.append(a.shape[0])
        out = a @ q
        if a.shape[0] == 2 * B + 2:  # only the whole product of 2 * B + 2 rows differs
            out[-1] = np.nextafter(out[-1], np.float32(np.inf))
        return out

    assert not blockwise_check(3, product)
    assert seen[:5] == [B] * 5
    assert seen[5:] == [m for n in range(B, 2 * B + 3) for m in (n, B + n % B)]


# -- TurnVectors -------------------------------------------------------------------------------

def test_turn_vectors_before_and_after_loading():
    tv = TurnVectors()
    assert tv.ids is None and tv.matrix().shape[0] == 0 and tv.search(np.ones(3), 5) == []
    tv.append("x", np.ones(3, dtype=np.float32), "general")  # not loaded: ignored
    assert tv.ids is None
    tv.load([])
    assert tv.ids == [] and tv.search(np.ones(3), 5) == []
    tv.append("a", np.array([1, 0, 0], dtype=np.float32), "work")
    tv.append("b", np.array([0, 1, 0], dtype=np.float32), "general")
    tv.append("c", np.array([1, 1, 0], dtype=np.float32) / np.sqrt(2), "work")
    assert tv.ids == ["a", "b", "c"] and tv._buf.shape == (16, 3)
    assert _bits(tv.matrix().ravel()) == _bits(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]], np.float32).ravel()
                                               / np.array([1, 1, 1, 1, 1, 1, np.sqrt(2), np.sqrt(2), 1], np.float32))
    q = np.array([1, 0.2, 0], dtype=np.float32)
    assert tv.search(q, 5) == ["a", "c", "b"]
    assert tv.search(q, 2) == ["a", "c"]
    assert tv.search(q, 5, "work") == ["a", "c"]
    assert tv.search(q, 5, "general") == ["b"]
    assert tv.search(q, 5, "travel") == []
    assert tv.search(q, 0) == []


def test_turn_vectors_load_rows_and_topic_codes():
    vecs = np.eye(4, dtype=np.float32)
    rows = [(f"r{i}", vecs[i].tobytes(), ["work", "general", "work", "health"][i]) for i in range(4)]
    tv = TurnVectors()
    tv.load(rows)
    assert tv.ids == ["r0", "r1", "r2", "r3"] and tv._buf.shape == (4, 4)
    assert tv._codes.tolist() == [0, 1, 0, 2] and tv._topic_code == {"work": 0, "general": 1, "health": 2}
    q = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)
    assert tv.search(q, 3) == ["r3", "r2", "r1"]
    assert tv.search(q, 9, "work") == ["r2", "r0"]
    # the first append past a loaded matrix doubles it, codes kept
    tv.append("r4", np.array([1, 1, 1, 1], dtype=np.float32) / 2, "health")
    assert tv._buf.shape == (8, 4) and tv._codes.tolist()[:5] == [0, 1, 0, 2, 2]
    assert tv.search(q, 9, "health") == ["r4", "r3"]
    # reloading starts afresh (a new file read)
    tv.load(rows[:2])
    assert tv.ids == ["r0", "r1"] and tv._buf.shape == (2, 4)
    assert tv.search(q, 9) == ["r1", "r0"]


def test_turn_vectors_grow_by_doubling_and_keep_rows_codes_and_products():
    rng = np.random.default_rng(11)
    dim = 300  # widths and row counts past 256: no small-integer identity luck
    vecs = _unit(rng, 600, dim)
    tv = TurnVectors()
    tv.load([])
    caps = []
    topics = ["a", "b", "c"]
    q = vecs[17].copy()
    for i in range(600):
        tv.append(f"t{i}", vecs[i], topics[i % 3])
        caps.append(tv._buf.shape[0])
        if i % 97 == 0 or i in (B - 1, B, 2 * B, 256, 257, 511, 512, 513):
            sims = vecs[:i + 1] @ q
            order = np.argsort(-sims, kind="stable")
            assert tv.search(q, 10) == [f"t{j}" for j in order[:10]], i
            assert tv.search(q, 10, "b") == [f"t{j}" for j in order if j % 3 == 1][:10], i
    assert sorted(set(caps)) == [16, 32, 64, 128, 256, 512, 1024]
    assert caps.index(32) == 16 and caps.index(1024) == 512
    assert tv._codes.shape[0] == 1024 and tv._codes[:600].tolist() == [i % 3 for i in range(600)]
    assert _bits(tv.matrix().ravel()) == _bits(vecs.ravel())


def test_turn_vectors_products_are_reused_between_growths():
    rng = np.random.default_rng(12)
    vecs = _unit(rng, 300, 8)
    tv = TurnVectors()
    tv.load([(f"t{i}", vecs[i].tobytes(), "g") for i in range(130)])
    q = vecs[3].copy()
    assert tv.search(q, 3)[0] == "t3"
    assert list(tv._products._entries) == [q.tobytes()]
    tv.append("t130", vecs[130], "g")  # the loaded 130 rows double to 260: products recomputed
    assert tv._products._entries == {}
    tv.search(q, 3)
    assert tv._products._entries[q.tobytes()].shape[0] == 2 * B
    for i in range(131, 200):
        tv.append(f"t{i}", vecs[i], "g")
    assert tv._buf.shape[0] == 260 and len(tv._products._entries) == 1  # no growth: kept
    tv.search(q, 3)
    assert tv._products._entries[q.tobytes()].shape[0] == 3 * B


def test_turn_vectors_a_new_width_starts_a_new_buffer():
    tv = TurnVectors()
    tv.load([])
    tv.append("a", np.array([1, 0], dtype=np.float32), "g")
    tv.append("b", np.array([0, 1], dtype=np.float32), "g")
    tv.append("c", np.array([0, 0, 1], dtype=np.float32), "h")  # wider
    assert tv._buf.shape == (16, 3) and tv.search(np.array([0, 0, 1], dtype=np.float32), 1) == ["c"]
    assert tv.search(np.array([0, 0, 1], dtype=np.float32), 3, "h") == ["c"]
    tv.append("d", np.array([0, 1], dtype=np.float32), "h")  # narrower
    assert tv._buf.shape == (16, 2) and tv.search(np.array([0, 1], dtype=np.float32), 1) == ["d"]
    assert tv.search(np.array([0, 1], dtype=np.float32), 4, "h")[0] == "d"


# -- EpisodicStore: vectors and rowids -------------------------------------------------------------

def _rec(i: int) -> TurnRecord:
    return TurnRecord(f"t{i:04d}", "c1", "s1", i, T0 + timedelta(minutes=i), "user", f"turn {i}")


def test_store_vectors_and_rowids(tmp_path):
    store = EpisodicStore(tmp_path / "e.sqlite")
    rng = np.random.default_rng(13)
    vecs = _unit(rng, 70, 6)
    for i in range(3):
        store.add(_rec(i), vecs[i], "g")
    ids, matrix = store._vectors()
    assert ids == ["t0000", "t0001", "t0002"] and _bits(matrix.ravel()) == _bits(vecs[:3].ravel())
    assert store._rowids is None  # read on first use only
    assert store.rowids() == {"t0000": 1, "t0001": 2, "t0002": 3}
    for i in range(3, 70):
        store.add(_rec(i), vecs[i], "g")
    assert store.rowids() == {f"t{i:04d}": i + 1 for i in range(70)}
    ids, matrix = store._vectors()
    assert len(ids) == 70 and _bits(matrix.ravel()) == _bits(vecs.ravel())
    assert store.vector_search(vecs[66], 2)[0] == "t0066"
    store.close()
    fresh = EpisodicStore(tmp_path / "e.sqlite")
    assert fresh.vector_search(vecs[66], 2)[0] == "t0066"
    assert fresh.rowids() == {f"t{i:04d}": i + 1 for i in range(70)}
    fresh.close()


def _strengths(store: EpisodicStore) -> list[tuple]:
    return [tuple(r) for r in store.conn.execute(
        "SELECT t.turn_id, s.strength, s.strength_at, s.last_access FROM turn_strength s"
        " JOIN turns t ON t.rowid = s.rowid ORDER BY s.rowid")]


def test_reinforce_and_set_strengths_rows_live_set_and_totals(tmp_path):
    store = EpisodicStore(tmp_path / "e.sqlite")
    for i in range(5):
        store.add(_rec(i), np.ones(3, dtype=np.float32), "g")
    now = T0 + timedelta(days=2)
    assert store.strength_stats() == (5, 5.0)
    assert store.strengths(above=0.05) == [(f"t{i:04d}", 1.0, (T0 + timedelta(minutes=i)).isoformat())
                                           for i in range(5)]
    store.set_strengths([("t0001", 0.05), ("t0003", 0.5), ("nope", 0.9), ("t0004", 0.05)], now)
    assert store.strength_stats() == (5, 2.6)
    assert [r[0] for r in store.strengths(above=0.05)] == ["t0000", "t0002", "t0003"]
    later = now + timedelta(hours=1)
    # reinforcement of a floor turn brings it back to the live set, at 1.0, now
    assert store.reinforce(["t0004", "ghost", "t0004", "t0003"], later) == ["t0004", "ghost", "t0004", "t0003"]
    assert store.strengths(above=0.05) == [
        ("t0000", 1.0, (T0).isoformat()), ("t0002", 1.0, (T0 + timedelta(minutes=2)).isoformat()),
        ("t0003", 1.0, later.isoformat()), ("t0004", 1.0, later.isoformat())]
    assert store.strength_stats() == (5, 4.05)
    rows = _strengths(store)
    assert rows[3] == ("t0003", 1.0, later.isoformat(), later.isoformat())
    assert rows[4] == ("t0004", 1.0, later.isoformat(), later.isoformat())
    assert rows[1] == ("t0001", 0.05, now.isoformat(), None)
    # raised from the floor by a write: back in the live set with its row
    store.set_strengths([("t0001", 0.3), ("t0002", 0.05)], later)
    assert store.strengths(above=0.05) == [
        ("t0000", 1.0, (T0).isoformat()), ("t0001", 0.3, later.isoformat()),
        ("t0003", 1.0, later.isoformat()), ("t0004", 1.0, later.isoformat())]
    assert store.strength_stats() == (5, 3.35)
    # a turn added after the rowid map was read is written by its own row
    store.add(_rec(5), np.ones(3, dtype=np.float32), "g")
    store.set_strengths([("t0005", 0.25)], later)
    store.reinforce(["t0002"], later)
    assert _strengths(store)[5] == ("t0005", 0.25, later.isoformat(), None)
    assert _strengths(store)[2] == ("t0002", 1.0, later.isoformat(), later.isoformat())
    assert store.strengths(above=0.05)[-1] == ("t0005", 0.25, later.isoformat())
    store.close()


def test_writes_before_any_read_of_the_live_set_or_totals(tmp_path):
    store = EpisodicStore(tmp_path / "e.sqlite")
    for i in range(3):
        store.add(_rec(i), np.ones(3, dtype=np.float32), "g")
    store.close()
    store = EpisodicStore(tmp_path / "e.sqlite")
    now = T0 + timedelta(days=1)
    store.set_strengths([("t0000", 0.2), ("t0002", 0.05)], now)
    store.reinforce(["t0001"], now)
    assert store._strengths is None
    assert store.strength_stats() == (3, 1.25)
    assert [r[:2] for r in store.strengths(above=0.05)] == [("t0000", 0.2), ("t0001", 1.0)]
    store.close()


# -- decay -----------------------------------------------------------------------------------------

def test_decayed_all_pins_the_formula_clamp_and_floor():
    config = IceConfig(decay_half_life_days=2.0, decay_floor=0.1)
    now = T0 + timedelta(days=4)
    rows = [("a", 1.0, T0.isoformat()),                                 # two half-lives: 0.25
            ("b", 0.8, (T0 + timedelta(days=2)).isoformat()),           # one: 0.4
            ("c", 0.3, T0.isoformat()),                                 # 0.075 -> floor 0.1
            ("d", 0.6, (now + timedelta(days=3)).isoformat()),          # set in the future: dt 0
            ("e", 1.0, (T0 + timedelta(days=2)).isoformat()),           # same stamp as b
            ("f", 0.5, (T0 + timedelta(hours=84)).isoformat())]         # half a day: 0.5 * 2^-0.25
    got = decayed_all(rows, now, config)
    assert got == [("a", 0.25), ("b", 0.4), ("c", 0.1), ("d", 0.6), ("e", 0.5), ("f", 0.5 * 2.0 ** -0.25)]
    assert got == [(i, decayed(s, at, now, config)) for i, s, at in rows]
    assert decayed_all([], now, config) == []


def test_decayed_all_computes_the_power_once_per_set_at(monkeypatch):
    """The work: one date parse (and power) per distinct "set at", whatever the row count (the parse
    is `strengths.decay_power`'s, which `decayed_all` calls)."""
    from lsrep.systems.ice import strengths

    parsed: list[str] = []

    class CountingDatetime(datetime):
        @classmethod
        def fromisoformat(cls, s: str) -> datetime:
            parsed.append(s)
            return datetime.fromisoformat(s)

    monkeypatch.setattr(strengths, "datetime", CountingDatetime)
    config = IceConfig(decay_half_life_days=3.0, decay_floor=0.05)
    stamps = [(T0 + timedelta(days=d)).isoformat() for d in (0, 1.5, 2)]
    rows = [(f"r{i}", 0.2 + 0.1 * (i % 7), stamps[(i * 5) % 3]) for i in range(30)]
    now = T0 + timedelta(days=6)
    got = decayed_all(rows, now, config)
    assert sorted(parsed) == sorted(stamps) and len(parsed) == 3
    monkeypatch.undo()
    assert got == [(i, decayed(s, at, now, config)) for i, s, at in rows]


def test_turn_vectors_shapes_before_and_after_an_empty_load():
    tv = TurnVectors()
    assert tv.matrix().shape == (0, 0) and tv._codes.shape == (0,)
    tv.load([])
    assert tv.matrix().shape == (0, 0) and tv._buf.shape == (0, 0) and tv._codes.shape == (0,)


def test_turn_vectors_one_loaded_row_then_appends():
    tv = TurnVectors()
    tv.load([("a", np.array([1, 0], dtype=np.float32).tobytes(), "x")])
    assert tv._buf.shape == (1, 2)
    tv.append("b", np.array([0, 1], dtype=np.float32), "y")
    assert tv._buf.shape == (2, 2) and tv.ids == ["a", "b"]
    tv.append("c", np.array([0.6, 0.8], dtype=np.float32), "x")
    assert tv._buf.shape == (4, 2)
    assert _bits(tv.matrix().ravel()) == _bits(np.array([1, 0, 0, 1, 0.6, 0.8], dtype=np.float32))
    assert tv.search(np.array([1, 0], dtype=np.float32), 3) == ["a", "c", "b"]
    assert tv.search(np.array([1, 0], dtype=np.float32), 3, "x") == ["a", "c"]
    assert tv.search(np.array([1, 0], dtype=np.float32), 3, "y") == ["b"]


def test_turn_vectors_a_new_width_after_many_rows_sizes_the_buffer_from_them():
    tv = TurnVectors()
    tv.load([(f"r{i}", np.ones(3, dtype=np.float32).tobytes(), "g") for i in range(20)])
    tv.append("w", np.array([0, 0, 0, 1], dtype=np.float32), "h")
    assert tv._buf.shape == (40, 4) and tv._codes.shape == (40,) and len(tv.ids) == 21
    assert tv.search(np.array([0, 0, 0, 1], dtype=np.float32), 2) == ["w", "r0"]
    assert tv.search(np.array([0, 0, 0, 1], dtype=np.float32), 2, "h") == ["w"]


def test_turn_vectors_of_width_zero_keep_their_topics():
    """Degenerate but accepted: zero-width vectors score 0, ties in storage order, topics kept."""
    tv = TurnVectors()
    tv.load([])
    for i, topic in enumerate(["a", "b", "a", "b", "c"]):
        tv.append(f"x{i}", np.zeros(0, dtype=np.float32), topic)
    assert tv._buf.shape == (16, 0)
    q = np.zeros(0, dtype=np.float32)
    assert tv.search(q, 9) == ["x0", "x1", "x2", "x3", "x4"]
    assert tv.search(q, 9, "a") == ["x0", "x2"] and tv.search(q, 9, "b") == ["x1", "x3"]
    assert tv.search(q, 9, "c") == ["x4"]
