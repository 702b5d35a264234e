"""ICE's lexical leg entry point (`EpisodicStore.lexical_search`): when it answers with the SQL
definition and when with the exact index, and that both give the definition's turns for every k.

The warm-up (`LEXICAL_WARMUP` queries answered by FTS5 before the index is built) is work, not
output: these tests pin it by whether the index exists after each query, so a store reopened for
every checkpoint never pays a rebuild, and the index is never built for a query that cannot use it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from lsrep.systems.ice.episodic import LEXICAL_WARMUP, EpisodicStore, TurnRecord

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _store(tmp_path) -> EpisodicStore:
    store = EpisodicStore(tmp_path / "lex.sqlite")
    for i in range(40):
        text = "lantern harbour" if i % 3 else "lantern violin harbour at dawn"
        rec = TurnRecord(f"t{i:05d}", "c1", f"s{i // 20}", i, T0 + timedelta(minutes=i), "user", text)
        assert store.add(rec, np.ones(4, dtype=np.float32), "general" if i % 2 else "travel")
    return store


def test_the_index_is_built_at_the_first_query_after_the_warm_up(tmp_path):
    store = _store(tmp_path)
    assert LEXICAL_WARMUP == 16
    for n in range(LEXICAL_WARMUP):
        assert store.lexical_search("lantern violin", 5) == store.lexical_search_fts("lantern violin", 5)
        assert store._lexical is None, n  # each warm-up query counted once
    assert store.lexical_search("lantern violin", 5) == store.lexical_search_fts("lantern violin", 5)
    assert store._lexical is not None  # the 17th query, not the 18th


def test_a_query_for_no_turn_never_builds_the_index(tmp_path):
    store = _store(tmp_path)
    for _ in range(3 * LEXICAL_WARMUP):
        assert store.lexical_search("lantern", 0) == []
    assert store._lexical is None
    assert store.lexical_search("lantern", 1) == store.lexical_search_fts("lantern", 1)  # warm-up done
    assert store._lexical is not None


def test_a_query_for_one_turn_uses_the_index_once_warm(tmp_path):
    store = _store(tmp_path)
    for _ in range(LEXICAL_WARMUP):
        store.lexical_search("harbour", 3)
    assert store._lexical is None
    assert store.lexical_search("violin", 1) == store.lexical_search_fts("violin", 1) == ["t00000"]
    assert store._lexical is not None


def test_empty_queries_after_the_warm_up_do_not_keep_it_going(tmp_path):
    # k = 0 queries are still counted past the warm-up; the next real query must use the index.
    store = _store(tmp_path)
    for _ in range(LEXICAL_WARMUP):
        store.lexical_search("harbour", 3)
    store.lexical_search("harbour", 0)
    store.lexical_search("harbour", 0)
    assert store._lexical is None
    assert store.lexical_search("dawn violin", 4) == store.lexical_search_fts("dawn violin", 4)
    assert store._lexical is not None


def test_every_k_gives_the_definitions_turns_before_and_after_the_warm_up(tmp_path):
    store = _store(tmp_path)
    for rounds in range(2):
        for k in (-1, 0, 1, 2, 13, 14, 40, 41):
            for topic in (None, "travel"):
                want = store.lexical_search_fts("lantern violin dawn", k, topic)
                assert store.lexical_search("lantern violin dawn", k, topic) == want, (rounds, k, topic)
    assert store._lexical is not None
    # the definition itself: SQLite's LIMIT -1 is no limit, ties in storage order, the topic filter
    assert len(store.lexical_search_fts("harbour", -1)) == 40
    assert store.lexical_search_fts("violin", 3, "travel") == ["t00000", "t00006", "t00012"]
    assert store.lexical_search_fts("  ", 3) == []
