"""full-context: the whole history in time order; over the limit the OLDEST turns go, and the cut
is reported exactly (never silent)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lsrep.adapters.full_context import ASSEMBLE, TRUNCATE, FullContextAdapter, FullContextOptions
from lsrep.systems.full_context import FullContextMemory, Line, estimate

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def test_estimate_is_characters_over_four_rounded_up():
    assert [estimate("x" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def filled(limit: int | None, sizes: list[int]) -> FullContextMemory:
    m = FullContextMemory(context_limit=limit)
    for i, n in enumerate(sizes):
        m.add(f"t{i}", f"s{i // 2}", "x" * (4 * n))  # exactly n tokens each
    return m


def test_within_the_limit_everything_is_returned_in_time_order():
    for limit in (None, 10, 100):
        recall = filled(limit, [3, 3, 4]).recall()
        assert [line.turn_id for line in recall.lines] == ["t0", "t1", "t2"]
        assert (recall.dropped_turns, recall.dropped_tokens) == (0, 0)


def test_over_the_limit_the_oldest_turns_are_dropped_and_counted():
    recall = filled(7, [3, 3, 4]).recall()
    assert [line.turn_id for line in recall.lines] == ["t1", "t2"]  # the newest that fit, in time order
    assert (recall.dropped_turns, recall.dropped_tokens) == (1, 3)
    recall = filled(6, [3, 3, 4]).recall()
    assert [line.turn_id for line in recall.lines] == ["t2"]
    assert (recall.dropped_turns, recall.dropped_tokens) == (2, 6)


def test_a_turn_that_exactly_fills_the_limit_is_kept_and_a_gap_stops_the_walk():
    assert [line.turn_id for line in filled(7, [5, 3, 4]).recall().lines] == ["t1", "t2"]
    # Walking back from the newest, the first turn that does not fit ends the context even if an
    # older, smaller one would fit: the kept lines stay one contiguous recent window.
    recall = filled(8, [1, 5, 4]).recall()
    assert [line.turn_id for line in recall.lines] == ["t2"] and recall.dropped_turns == 2
    assert filled(3, [4]).recall().lines == [] and filled(3, [4]).recall().dropped_tokens == 4


def test_a_repeated_turn_is_added_once_and_clear_forgets_it():
    m = FullContextMemory(context_limit=5)
    for _ in range(3):
        m.add("t0", "s0", "x" * 16)
    assert m.lines == [Line("t0", "s0", "x" * 16, 4)]
    assert m.recall().dropped_turns == 0  # the total counts it once (4 <= 5)
    m.clear()
    assert m.recall().lines == []
    m.add("t0", "s0", "x" * 24)
    assert m.recall().dropped_turns == 1  # re-added after clear; the old total is gone (6 > 5)


def _turn(i: int, text: str) -> ReplayTurn:
    return ReplayTurn(turn_id=f"t{i}", session_id=f"s{i // 2}", conversation_id="c", index=i,
                      timestamp=T0 + timedelta(days=i), role="user", speaker="Ana", content=text)


def _adapter(limit: int | None) -> tuple[FullContextAdapter, list[FidelityEvent]]:
    adapter = FullContextAdapter(AdapterSetup(options=FullContextOptions(context_limit=limit)))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    adapter.reset(conversation_id="c", now=T0)
    return adapter, events


def test_the_adapter_reports_the_cut_and_keeps_the_newest():
    adapter, events = _adapter(limit=40)
    texts = ["first thing said " * 3, "second thing said " * 3, "third thing said " * 3]
    for i, text in enumerate(texts):
        adapter.ingest(_turn(i, text), now=T0)
    result = adapter.query("anything?", now=T0)
    kept = [f.source_turn_ids[0] for f in result.fragments]
    assert kept == sorted(kept) and kept[-1] == "t2" and "t0" not in kept
    assert result.truncated_tokens > 0
    assert sum(f.tokens for f in result.fragments) <= 40
    assert all(f.kind == "transcript" and f.mechanisms == (ASSEMBLE,) for f in result.fragments)
    assert "2026-01-07" in result.fragments[-1].text and "Ana" in result.fragments[-1].text
    cut = [e for e in events if e.mechanism == TRUNCATE]
    assert [e.stage for e in cut] == ["eligible", "executed", "output"]
    assert cut[1].params["dropped_tokens"] == result.truncated_tokens and cut[1].count == 3 - len(kept)


def test_the_adapter_within_the_limit_cuts_nothing_and_says_why():
    adapter, events = _adapter(limit=None)
    for i in range(3):
        adapter.ingest(_turn(i, f"turn {i}"), now=T0)
    result = adapter.query("anything?", now=T0)
    assert [f.source_turn_ids for f in result.fragments] == [("t0",), ("t1",), ("t2",)]
    assert result.truncated_tokens == 0
    cut = [e for e in events if e.mechanism == TRUNCATE]
    assert [(e.stage, e.reason) for e in cut] == [("ineligible", "idle: within limit")]
    assembled = [e.stage for e in events if e.mechanism == ASSEMBLE]
    assert assembled == ["eligible", "executed", "output", "selected"]
    assert adapter.context_limit is None and FullContextOptions().context_limit == 16000


def test_snapshot_restore_and_digest():
    adapter, _ = _adapter(limit=None)
    adapter.ingest(_turn(0, "one"), now=T0)
    before, snap = adapter.state_digest(), adapter.snapshot()
    adapter.ingest(_turn(1, "two"), now=T0)
    assert adapter.state_digest() != before
    adapter.restore(snap)
    assert adapter.state_digest() == before and len(adapter.query("q", now=T0).fragments) == 1


def test_options_bounds_capabilities_and_immutable_lines():
    import dataclasses

    import pytest
    from pydantic import ValidationError

    assert FullContextOptions(context_limit=1).context_limit == 1
    with pytest.raises(ValidationError):
        FullContextOptions(context_limit=0)
    assert FullContextAdapter.supports_snapshot is True
    assert all(not m.can_disable for m in FullContextAdapter.mechanisms)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Line("t0", "s0", "x", 1).tokens = 2  # type: ignore[misc]


def test_exactly_one_dropped_turn_is_reported_as_a_cut():
    adapter, events = _adapter(limit=4)
    adapter.ingest(_turn(0, "x" * 16), now=T0)
    adapter.ingest(_turn(1, "y"), now=T0)
    lines = adapter.memory.lines
    adapter.memory.context_limit = lines[1].tokens  # room for the newest turn only
    result = adapter.query("q", now=T0)
    assert [f.source_turn_ids[0] for f in result.fragments] == ["t1"]
    cut = [e for e in events if e.mechanism == TRUNCATE]
    assert [e.stage for e in cut] == ["eligible", "executed", "output"] and cut[1].count == 1
    assert result.truncated_tokens == lines[0].tokens


def test_the_protocol_methods_take_now_by_keyword_only():
    import pytest

    adapter, _ = _adapter(limit=None)
    with pytest.raises(TypeError):
        adapter.reset("c", T0)
    with pytest.raises(TypeError):
        adapter.ingest(_turn(0, "x"), T0)
    with pytest.raises(TypeError):
        adapter.query("q", T0)


def test_the_dropped_count_is_exact_for_any_history_length():
    for n, limit in ((6, 3), (7, 2), (12, 5), (5, 4)):
        recall = filled(limit, [1] * n).recall()
        assert [line.turn_id for line in recall.lines] == [f"t{i}" for i in range(n - limit, n)]
        assert (recall.dropped_turns, recall.dropped_tokens) == (n - limit, n - limit)


def _fresh_fragments(adapter: FullContextAdapter) -> tuple:
    """The plain rule: one fragment built afresh per kept line (what `query` did before its cache)."""
    from lsrep.contract import Fragment

    return tuple(Fragment(text=line.text, source_turn_ids=(line.turn_id,), tokens=line.tokens,
                          mechanisms=(ASSEMBLE,), kind="transcript") for line in adapter.memory.recall().lines)


def test_fragments_reused_across_queries_equal_fragments_built_afresh():
    adapter, _ = _adapter(limit=60)
    seen = []
    for i in range(40):
        adapter.ingest(_turn(i, f"turn {i} " + "word " * (i % 7)), now=T0)
        if i % 3 == 0:
            first, again = adapter.query("q", now=T0), adapter.query("q", now=T0)
            assert first.fragments == again.fragments == _fresh_fragments(adapter)
            # Reused, not rebuilt: the second query hands out the same fragment objects.
            assert all(a is b for a, b in zip(first.fragments, again.fragments, strict=True))
            seen.append(first.fragments)
        if i == 20:
            snap = adapter.snapshot()
        if i == 30:
            adapter.restore(snap)  # new line objects: their fragments are built from them
            assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
    assert any(len(f) < len(adapter.memory.lines) for f in seen)  # the cut was exercised
    # A turn id seen before a reset, re-added with other text, gets the new text's fragment.
    adapter.reset(conversation_id="c", now=T0)
    adapter.ingest(_turn(39, "quite another text"), now=T0)
    assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
    assert "quite another text" in adapter.query("q", now=T0).fragments[0].text
    adapter.memory.clear()
    adapter.memory.add("t39", "s0", "after clear, the same id")
    assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
    # Cleared and refilled to the same length: still the new lines' fragments.
    adapter.memory.clear()
    assert adapter.query("q", now=T0).fragments == () == _fresh_fragments(adapter)
    adapter.memory.add("t39", "s0", "cleared once more")
    assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
    # A limit changed on the memory itself: the recall is made again under it.
    for i in range(40, 50):
        adapter.ingest(_turn(i, f"turn {i} words"), now=T0)
    wide = adapter.query("q", now=T0)
    adapter.memory.context_limit = 10
    narrow = adapter.query("q", now=T0)
    assert narrow.fragments == _fresh_fragments(adapter) and len(narrow.fragments) < len(wide.fragments)
    assert narrow.truncated_tokens == adapter.memory.recall().dropped_tokens > wide.truncated_tokens


def test_a_subclass_whose_reset_skips_the_caches_still_queries():
    class OwnReset(FullContextAdapter):
        def reset(self, *, conversation_id: str, now) -> None:
            self.memory = FullContextMemory(context_limit=None)

    adapter = OwnReset(AdapterSetup(options=FullContextOptions(context_limit=None)))
    adapter.reset(conversation_id="c", now=T0)
    adapter.ingest(_turn(0, "one"), now=T0)
    assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
    adapter.ingest(_turn(1, "two"), now=T0)
    assert adapter.query("q", now=T0).fragments == _fresh_fragments(adapter)
