"""full-context after the 2026-12-06 changes: the memory's `version` counts every change, the
newest-kept truncation walks only when over the limit, and the adapter's reused recall and
fragments never outlive a changed memory or limit (outputs, and work counts where only work
differs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lsrep.adapters.full_context import FullContextAdapter, FullContextOptions
from lsrep.systems.full_context import FullContextMemory

from lsrep.contract import AdapterSetup, ReplayTurn

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class CountingLines(list):
    """A memory's line list that counts the walks back from the newest line."""

    walks = 0

    def __reversed__(self):
        self.walks += 1
        return super().__reversed__()


def _turn(i: int, text: str, conversation: str = "c") -> ReplayTurn:
    return ReplayTurn(turn_id=f"t{i}", session_id=f"s{i // 2}", conversation_id=conversation, index=i,
                      timestamp=T0 + timedelta(days=i), role="user", speaker="Ana", content=text)


def _adapter(limit: int | None) -> FullContextAdapter:
    adapter = FullContextAdapter(AdapterSetup(options=FullContextOptions(context_limit=limit)))
    adapter.bind_events(lambda event: None)
    adapter.reset(conversation_id="c", now=T0)
    return adapter


def _ids(result) -> list[str]:
    return [f.source_turn_ids[0] for f in result.fragments]


def test_version_counts_every_change_and_only_changes():
    m = FullContextMemory(context_limit=None)
    assert m.version == 0
    seen = [m.version]
    for i in range(3):
        m.add(f"t{i}", "s0", "x")
        seen.append(m.version)
        m.add(f"t{i}", "s0", "x")  # held already: no change, same version
        assert m.version == seen[-1]
    m.clear()
    seen.append(m.version)
    m.add("t0", "s0", "x")
    seen.append(m.version)
    assert seen == [0, 1, 2, 3, 4, 5]  # one step per change: never a version seen before


def test_a_history_that_exactly_fills_the_limit_is_returned_without_a_walk():
    m = FullContextMemory(context_limit=8)
    m.lines = CountingLines()
    m.add("t0", "s0", "x" * 16)
    assert [x.turn_id for x in m.recall().lines] == ["t0"] and m.lines.walks == 0  # 4 < 8: no walk
    m.add("t1", "s0", "x" * 16)  # 4 + 4 tokens == the limit
    recall = m.recall()
    assert [x.turn_id for x in recall.lines] == ["t0", "t1"] and (recall.dropped_turns, recall.dropped_tokens) == (0, 0)
    assert m.lines.walks == 0
    m.add("t2", "s0", "x")  # 9 > 8: now the walk runs, newest kept
    recall = m.recall()
    assert [x.turn_id for x in recall.lines] == ["t1", "t2"] and (recall.dropped_turns, recall.dropped_tokens) == (1, 4)
    assert m.lines.walks == 1
    m.context_limit = None
    assert len(m.recall().lines) == 3 and m.lines.walks == 1  # no limit: no walk
    big = FullContextMemory(context_limit=1000)
    big.lines = CountingLines()
    big.add("t0", "s0", "x" * 2000)
    big.add("t1", "s0", "x" * 2000)  # 500 + 500 == 1000, an int outside the small-int cache
    assert len(big.recall().lines) == 2 and big.lines.walks == 0


def test_clear_restarts_the_running_total_at_zero():
    m = FullContextMemory(context_limit=4)
    m.add("t0", "s0", "x" * 16)
    m.clear()
    m.add("t1", "s0", "x" * 16)  # exactly the limit again
    recall = m.recall()
    assert [x.turn_id for x in recall.lines] == ["t1"] and (recall.dropped_turns, recall.dropped_tokens) == (0, 0)
    m.add("t2", "s0", "x" * 4)
    recall = m.recall()
    assert [x.turn_id for x in recall.lines] == ["t2"] and (recall.dropped_turns, recall.dropped_tokens) == (1, 4)


def test_repeated_queries_reuse_the_recall_and_a_change_remakes_it():
    adapter = _adapter(limit=None)
    calls = []
    memory_recall = FullContextMemory.recall

    def counted(self):
        calls.append(self)
        return memory_recall(self)

    FullContextMemory.recall = counted
    try:
        for i in range(3):
            adapter.ingest(_turn(i, f"turn {i}"), now=T0)
        first = adapter.query("q", now=T0)
        again = adapter.query("another", now=T0)
        assert first == again and len(calls) == 1  # same version and limit: reused
        adapter.ingest(_turn(1, "turn 1 again"), now=T0)  # held: no change, still reused
        assert adapter.query("q", now=T0) == first and len(calls) == 1
        adapter.ingest(_turn(3, "turn 3"), now=T0)
        assert _ids(adapter.query("q", now=T0)) == ["t0", "t1", "t2", "t3"] and len(calls) == 2
        adapter.memory.context_limit = adapter.memory.lines[-1].tokens  # room for the newest only
        narrow = adapter.query("q", now=T0)
        assert _ids(narrow) == ["t3"] and narrow.truncated_tokens > 0 and len(calls) == 3
    finally:
        FullContextMemory.recall = memory_recall


def test_another_memory_with_the_same_version_and_limit_never_gets_the_old_recall():
    a, b = _adapter(limit=100), _adapter(limit=100)
    for i in range(2):
        a.ingest(_turn(i, f"from a {i}"), now=T0)
        b.ingest(_turn(i + 5, f"from b {i}"), now=T0)
    assert a.memory.version == b.memory.version
    assert _ids(a.query("q", now=T0)) == ["t0", "t1"]
    a.restore(b.snapshot())  # another memory object, same (version, limit)
    result = a.query("q", now=T0)
    assert _ids(result) == ["t5", "t6"] and "from b 1" in result.fragments[-1].text


def test_fragments_of_lines_still_held_are_built_once():
    adapter = _adapter(limit=None)
    adapter.ingest(_turn(0, "zero"), now=T0)
    adapter.ingest(_turn(1, "one"), now=T0)
    before = adapter.query("q", now=T0).fragments
    adapter.ingest(_turn(2, "two"), now=T0)  # a new version: a new recall, the old lines' fragments kept
    after = adapter.query("q", now=T0).fragments
    assert _ids(adapter.query("q", now=T0)) == ["t0", "t1", "t2"]
    assert after[0] is before[0] and after[1] is before[1]


def test_a_restored_equal_memory_is_recalled_afresh_from_its_own_lines():
    """The reuse is keyed on the memory object, not on an equal one: after `restore` (a deep copy,
    equal in every field) the recall is made again and its fragments built from the new lines."""
    adapter = _adapter(limit=None)
    adapter.ingest(_turn(0, "zero"), now=T0)
    adapter.ingest(_turn(1, "one"), now=T0)
    before = adapter.query("q", now=T0).fragments
    adapter.restore(adapter.snapshot())
    assert adapter.memory == adapter._last_recall[0] and adapter.memory is not adapter._last_recall[0]
    recall, fragments, ids = adapter._recall()
    assert all(a is b for a, b in zip(recall.lines, adapter.memory.lines, strict=True))  # the restored lines
    assert fragments == before and all(a is not b for a, b in zip(fragments, before, strict=True))
    assert ids == ("t0", "t1") and adapter._last_recall[0] is adapter.memory


def test_vector_rag_digest_refuses_a_store_whose_turns_and_vectors_disagree():
    """The vector-RAG adapter, measured in the same session: an embedder that fails mid-ingest
    leaves a turn stored without its vector; the digest then fails loudly (zip strict) instead of
    hashing the turns that happen to have one."""
    import numpy as np
    import pytest
    from lsrep.adapters.vector_rag import VectorRagAdapter, VectorRagOptions

    class FailingEmbedder:
        name = "failing"

        def embed(self, texts):
            if any("boom" in t for t in texts):
                raise RuntimeError("embedder down")
            return np.ones((len(texts), 2))

    adapter = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(), embedder=FailingEmbedder()))
    adapter.reset(conversation_id="c", now=T0)
    adapter.ingest(_turn(0, "fine"), now=T0)
    whole = adapter.state_digest()
    with pytest.raises(RuntimeError):
        adapter.ingest(_turn(1, "boom"), now=T0)
    assert len(adapter.memory.ids) == 2 and len(adapter.memory._rows) == 1
    with pytest.raises(ValueError):
        adapter.state_digest()
    adapter.restore({"ids": ["t0"], "texts": adapter.memory.texts[:1], "rows": adapter.memory._rows[:1]})
    assert adapter.state_digest() == whole
