"""Stage 0 and routing pinned by exact values (the `thalia-inspector` mutation session): the
adaptive window cap, the coarse block filter (block scores, ties, zero-score fill, the partial last
block), the fine ranking, every event the Inspector emits with its counts, ids and parameters, the
windows' ρ, rank, radius text and widening; the semantic lane on an empty corpus; the
explicit-memory rule's sentence walk and the cue stripping."""

from __future__ import annotations

import dataclasses
import math

import pytest
from lsrep.systems.thalia.config import HarnessConfig
from lsrep.systems.thalia.embedding import HashingEmbedder
from lsrep.systems.thalia.events import EventRelay
from lsrep.systems.thalia.inspector import (
    Inspector,
    Partition,
    effective_max_windows,
    kept_block_count,
    partition_blocks,
    select_records,
)
from lsrep.systems.thalia.routing import explicit_memory_request, requires_consolidation, strip_cue
from lsrep.systems.thalia.semantic import SemanticIndex
from lsrep.systems.thalia.transcript import token_pattern
from thalia_testkit import T0, Recorder, transcript_of

_transcript = transcript_of


def _inspect(lines: list[str], query: str, **config):
    rec = Recorder()
    out = Inspector(HarnessConfig(**config), EventRelay(rec)).inspect(query, _transcript(lines))
    return out, rec


def _events(rec: Recorder) -> list[tuple]:
    return [(e.mechanism, e.stage, e.reason, e.count, e.ids, e.source_turn_ids, e.params) for e in rec.events]


def _peek(n: int) -> dict:
    return {"records": n, "sessions": 1 if n else 0, "turns": n, "speakers": {"User": n} if n else {}}


def _ids(*idx: int) -> tuple[str, ...]:
    return tuple(f"line:{i}" for i in idx)


def _sources(*idx: int) -> tuple[str, ...]:
    return tuple(f"t{i}" for i in idx)


# -- the pure functions -------------------------------------------------------------------------

def test_the_adaptive_cap_is_the_ceiling_of_lines_over_ratio_never_below_the_base():
    cfg = HarnessConfig(max_windows=15, adaptive_window_ratio=5)
    assert effective_max_windows(cfg, 301, True) == 61  # ⌈60.2⌉
    assert effective_max_windows(cfg, 300, True) == 60
    assert effective_max_windows(cfg, 301, False) == 15
    assert effective_max_windows(cfg, 50, True) == 15
    assert effective_max_windows(HarnessConfig(max_windows=2, adaptive_window_ratio=3), 7, True) == 3


def test_the_kept_block_count():
    assert kept_block_count(15, 5) == 4
    assert kept_block_count(14, 5) == 3
    assert kept_block_count(4, 5) == 1
    assert kept_block_count(7, 2) == 4
    assert kept_block_count(1500, 5) == 301


def test_a_partition_is_an_immutable_value():
    p = Partition(n_blocks=3, kept=(0, 2))
    assert p == Partition(3, (0, 2)) and hash(p) == hash(Partition(3, (0, 2)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.n_blocks = 4  # type: ignore[misc]


def test_blocks_rank_by_summed_matches_then_by_ascending_index():
    counts = {21: 1, 6: 2, 7: 1, 12: 3, 0: 1}  # blocks of 5: 0 -> 1, 1 -> 3, 2 -> 3, 4 -> 1
    assert partition_blocks(counts, 25, 5, 1) == Partition(5, (1,))
    assert partition_blocks(counts, 25, 5, 2) == Partition(5, (1, 2))
    assert partition_blocks(counts, 25, 5, 3) == Partition(5, (0, 1, 2))  # 0 and 4 tie: 0 first
    assert partition_blocks(counts, 25, 5, 4) == Partition(5, (0, 1, 2, 4))
    # The tie goes to the lower block whatever order the counts arrive in.
    assert partition_blocks({20: 1, 2: 1}, 25, 5, 1) == Partition(5, (0,))
    assert partition_blocks({2: 1, 20: 1}, 25, 5, 1) == Partition(5, (0,))
    assert partition_blocks({20: 2, 2: 1}, 25, 5, 1) == Partition(5, (4,))


def test_the_block_count_rounds_up_and_zero_score_blocks_fill_in_ascending_order():
    assert partition_blocks({17: 2}, 26, 5, 3) == Partition(6, (0, 1, 3))
    assert partition_blocks({2: 1}, 30, 5, 3) == Partition(6, (0, 1, 2))   # block 0 is already in
    assert partition_blocks({7: 1}, 30, 5, 3) == Partition(6, (0, 1, 2))
    assert partition_blocks({}, 30, 5, 2) == Partition(6, (0, 1))
    assert partition_blocks({}, 7, 5, 4) == Partition(2, (0, 1))           # fewer blocks than m
    assert partition_blocks({}, 0, 5, 2) == Partition(0, ())


def test_the_fill_keeps_exactly_m_blocks_when_m_is_large():
    assert partition_blocks({}, 1500, 5, 301) == Partition(300, tuple(range(300)))
    assert partition_blocks({}, 1600, 5, 301) == Partition(320, tuple(range(301)))
    assert partition_blocks({1599: 1}, 1600, 5, 301) == Partition(320, (*range(300), 319))


def test_select_records_with_and_without_the_block_filter():
    counts = {3: 1, 12: 2, 13: 1, 27: 2, 26: 1}
    # No filter: every match, ρ desc then index asc, first cap.
    assert select_records(counts, 30, 3, 5, False) == ([12, 27, 3], None)
    assert select_records(counts, 30, 10, 5, False) == ([12, 27, 3, 13, 26], None)
    # No filter, no signal: transcript order.
    assert select_records({}, 30, 4, 5, False) == ([0, 1, 2, 3], None)
    assert select_records({}, 3, 4, 5, False) == ([0, 1, 2], None)
    # Filter: m = cap // size + 1 blocks; only matches inside them are candidates.
    assert select_records(counts, 30, 4, 5, True) == ([12, 13], Partition(6, (2,)))
    assert select_records(counts, 30, 5, 5, True) == ([12, 27, 13, 26], Partition(6, (2, 5)))
    # Filter without matches: every record of the kept blocks, the last block cut at n.
    assert select_records({}, 13, 15, 5, True) == (list(range(13)), Partition(3, (0, 1, 2)))
    assert select_records({}, 13, 9, 5, True) == (list(range(9)), Partition(3, (0, 1)))
    assert select_records({}, 7, 15, 5, True) == (list(range(7)), Partition(2, (0, 1)))


def test_select_records_on_a_filtered_tail_block():
    # One kept block (cap 4 < size 5): the best block is the partial last one.
    counts = {1: 1, 26: 2, 27: 1}
    assert select_records(counts, 28, 4, 5, True) == ([26, 27], Partition(6, (5,)))
    assert select_records({}, 28, 4, 5, True) == ([0, 1, 2, 3], Partition(6, (0,)))


# -- the stage's events and output ----------------------------------------------------------------

LINES = ["wifi router in the hall", "garden party on sunday", "the wifi password is bluefish42", "coffee",
         "password hint: a fish", "wifi", "museum", "guitar lesson", "recipe", "marathon", "invoice", "puppy",
         "kitchen"]


def test_adaptive_widening_events_and_windows():
    out, rec = _inspect(LINES, "What is the wifi password?", max_windows=2, adaptive_windows=True,
                        adaptive_window_ratio=4)
    patterns = [token_pattern("password"), token_pattern("wifi")]
    assert _events(rec) == [
        ("inspector.peek", "eligible", None, None, (), (), {}),
        ("inspector.peek", "executed", None, None, (), (), _peek(13)),
        ("inspector.peek", "output", None, 13, (), (), {}),
        ("inspector.adaptive_windows", "eligible", None, None, (), (), {}),
        ("inspector.adaptive_windows", "executed", None, None, (), (),
         {"base": 2, "effective": 4, "n_lines": 13, "ratio": 4}),
        ("inspector.adaptive_windows", "output", None, 4, (), (), {}),
        ("inspector.fallback_order", "ineligible", "query has content tokens", None, (), (), {}),
        ("inspector.grep", "eligible", None, 2, (), (), {}),
        ("inspector.grep", "executed", None, 4, (), (), {"patterns": patterns}),
        ("inspector.grep", "output", None, 4, (), (), {}),
        ("inspector.fallback_overlap", "ineligible", "grep matched", None, (), (), {}),
        ("inspector.partition", "ineligible", "records within threshold", None, (), (),
         {"records": 13, "threshold": 200}),
        ("inspector.grep", "selected", None, 4, _ids(2, 0, 4, 5), _sources(2, 0, 4, 5), {"confidence": 1.0}),
        ("inspector.adaptive_windows", "selected", None, 2, _ids(4, 5), _sources(4, 5), {}),
    ]
    assert [(w.window_id, w.rho, w.inspector_rank, w.widened) for w in out.windows] == [
        ("line:2", 1.0, 0, False), ("line:0", 0.5, 1, False), ("line:4", 0.5, 2, True), ("line:5", 0.5, 3, True)]
    assert [w.text for w in out.windows] == [LINES[2], LINES[0], LINES[4], LINES[5]]
    assert all(w.origin == "inspector" and w.timestamp == T0 and w.session_id == "s" for w in out.windows)
    assert [(w.turn_id, w.source_id, w.source_index) for w in out.windows] == [
        (3, "t2", 2), (1, "t0", 0), (5, "t4", 4), (6, "t5", 5)]
    m = out.metadata
    assert (m.query_tokens, m.patterns, m.selected_indices, m.confidence, m.fallback) == (
        ("password", "wifi"), tuple(patterns), (2, 0, 4, 5), 1.0, "none")
    assert (m.n_records, m.n_matches, m.effective_max_windows, m.partitioned, m.n_blocks, m.kept_blocks,
            m.records_discarded, m.discarded_matches) == (13, 4, 4, False, 0, (), 0, ())


def test_without_widening_nothing_is_widened_and_the_cap_is_ranked_once(monkeypatch):
    import lsrep.systems.thalia.inspector as inspector

    calls = []
    real = inspector.select_matches

    def counting(*args):
        calls.append(args[3])
        return real(*args)

    monkeypatch.setattr(inspector, "select_matches", counting)
    out, rec = _inspect(LINES, "wifi password", max_windows=5, adaptive_windows=True, adaptive_window_ratio=4)
    assert calls == [5] and out.metadata.effective_max_windows == 5
    assert not any(w.widened for w in out.windows) and len(out.windows) == 4
    assert rec.stages("inspector.adaptive_windows") == {"eligible", "executed"}
    calls.clear()
    out, _ = _inspect(LINES, "wifi password", max_windows=2, adaptive_windows=True, adaptive_window_ratio=4)
    assert calls == [4, 2] and [w.widened for w in out.windows] == [False, False, True, True]
    calls.clear()
    out, rec = _inspect(LINES, "wifi password", max_windows=2, adaptive_windows=True, adaptive_window_ratio=4,
                        ablate=frozenset({"inspector.adaptive_windows"}))
    assert calls == [2] and not any(w.widened for w in out.windows)
    assert rec.stages("inspector.adaptive_windows") == {"eligible", "skipped"}


def _partition_lines(n: int, matches: dict[int, str]) -> list[str]:
    return [matches.get(i, f"filler line {i}") for i in range(n)]


def test_partition_events_metadata_and_discarded_matches():
    lines = _partition_lines(30, {3: "wifi", 12: "wifi password", 13: "password", 27: "wifi password"})
    out, rec = _inspect(lines, "wifi password", max_windows=4, partition_threshold=10, partition_size=5)
    evs = _events(rec)
    assert evs[evs.index(("inspector.fallback_overlap", "ineligible", "grep matched", None, (), (), {})) + 1:] == [
        ("inspector.partition", "eligible", None, None, (), (), {"records": 30, "threshold": 10}),
        ("inspector.partition", "executed", None, 25, (), (), {
            "blocks": 6, "kept_blocks": [2], "records_kept": 5, "records_discarded": 25,
            "discarded_matches": [3, 27], "partition_size": 5}),
        ("inspector.partition", "output", None, 5, (), (), {}),
        ("inspector.grep", "selected", None, 2, _ids(12, 13), _sources(12, 13), {"confidence": 1.0}),
        ("inspector.partition", "selected", None, 2, _ids(12, 13), _sources(12, 13), {}),
    ]
    m = out.metadata
    assert (m.partitioned, m.n_blocks, m.kept_blocks, m.records_discarded, m.discarded_matches,
            m.selected_indices, m.n_matches) == (True, 6, (2,), 25, (3, 27), (12, 13), 4)


def test_a_kept_partial_last_block_counts_only_its_records():
    lines = _partition_lines(28, {1: "wifi", 26: "wifi password", 27: "password"})
    out, rec = _inspect(lines, "wifi password", max_windows=4, partition_threshold=10, partition_size=5)
    (executed,) = rec.of("inspector.partition", "executed")
    assert executed.count == 25 and executed.params["records_kept"] == 3
    assert executed.params["records_discarded"] == 25 and executed.params["discarded_matches"] == [1]
    assert rec.of("inspector.partition", "output")[0].count == 3
    assert out.metadata.records_discarded == 25 and out.metadata.kept_blocks == (5,)
    assert out.metadata.selected_indices == (26, 27)


def test_fallback_order_events_past_the_threshold():
    lines = _partition_lines(12, {})
    out, rec = _inspect(lines, "what is the", max_windows=3, partition_threshold=10)
    assert _events(rec) == [
        ("inspector.peek", "eligible", None, None, (), (), {}),
        ("inspector.peek", "executed", None, None, (), (), _peek(12)),
        ("inspector.peek", "output", None, 12, (), (), {}),
        ("inspector.adaptive_windows", "ineligible", "adaptive_windows is off", None, (), (), {}),
        ("inspector.grep", "ineligible", "query has no content tokens", None, (), (), {}),
        ("inspector.fallback_overlap", "ineligible", "no relevance signal", None, (), (), {}),
        ("inspector.fallback_order", "eligible", None, None, (), (), {}),
        ("inspector.fallback_order", "executed", None, 12, (), (), {}),
        ("inspector.partition", "ineligible", "no relevance signal (fallback_order)", None, (), (),
         {"records": 12, "threshold": 10}),
        ("inspector.fallback_order", "output", None, 3, (), (), {}),
        ("inspector.fallback_order", "selected", None, 3, _ids(0, 1, 2), _sources(0, 1, 2), {"confidence": 0.0}),
    ]
    assert [(w.rho, w.inspector_rank) for w in out.windows] == [(0.0, 0), (0.0, 1), (0.0, 2)]
    assert out.metadata.fallback == "order" and out.metadata.confidence == 0.0 and out.metadata.patterns == ()


def test_the_partition_reason_at_exactly_the_threshold():
    _, rec = _inspect(_partition_lines(10, {}), "what is the", partition_threshold=10)
    assert [e.reason for e in rec.of("inspector.partition")] == ["records within threshold"]
    _, rec = _inspect(_partition_lines(10, {}), "filler", partition_threshold=10)
    assert [e.reason for e in rec.of("inspector.partition")] == ["records within threshold"]
    _, rec = _inspect(_partition_lines(11, {}), "filler", partition_threshold=10)
    assert rec.stages("inspector.partition") >= {"eligible", "executed"}


def test_fallback_overlap_events_with_the_block_filter():
    lines = _partition_lines(12, {})
    out, rec = _inspect(lines, "zebra giraffe", max_windows=3, partition_threshold=10, partition_size=5)
    evs = _events(rec)
    start = evs.index(("inspector.fallback_order", "ineligible", "query has content tokens", None, (), (), {}))
    assert evs[start:] == [
        ("inspector.fallback_order", "ineligible", "query has content tokens", None, (), (), {}),
        ("inspector.grep", "eligible", None, 2, (), (), {}),
        ("inspector.grep", "executed", None, 0, (), (),
         {"patterns": [token_pattern("giraffe"), token_pattern("zebra")]}),
        ("inspector.fallback_overlap", "eligible", None, None, (), (), {}),
        ("inspector.fallback_overlap", "executed", None, 12, (), (), {}),
        ("inspector.partition", "eligible", None, None, (), (), {"records": 12, "threshold": 10}),
        ("inspector.partition", "executed", None, 7, (), (), {
            "blocks": 3, "kept_blocks": [0], "records_kept": 5, "records_discarded": 7,
            "discarded_matches": [], "partition_size": 5}),
        ("inspector.partition", "output", None, 5, (), (), {}),
        ("inspector.fallback_overlap", "output", None, 3, (), (), {}),
        ("inspector.fallback_overlap", "selected", None, 3, _ids(0, 1, 2), _sources(0, 1, 2), {"confidence": 0.0}),
        ("inspector.partition", "selected", None, 3, _ids(0, 1, 2), _sources(0, 1, 2), {}),
    ]
    assert [w.rho for w in out.windows] == [0.0, 0.0, 0.0]
    assert out.metadata.fallback == "overlap" and out.metadata.records_discarded == 7


def test_an_empty_transcript_selects_nothing():
    out, rec = _inspect([], "wifi", adaptive_windows=True)
    assert _events(rec) == [
        ("inspector.peek", "eligible", None, None, (), (), {}),
        ("inspector.peek", "executed", None, None, (), (), _peek(0)),
        ("inspector.adaptive_windows", "eligible", None, None, (), (), {}),
        ("inspector.adaptive_windows", "executed", None, None, (), (),
         {"base": 15, "effective": 15, "n_lines": 0, "ratio": 5}),
        ("inspector.fallback_order", "ineligible", "query has content tokens", None, (), (), {}),
        ("inspector.grep", "eligible", None, 1, (), (), {}),
        ("inspector.grep", "executed", None, 0, (), (), {"patterns": [token_pattern("wifi")]}),
        ("inspector.fallback_overlap", "eligible", None, None, (), (), {}),
        ("inspector.fallback_overlap", "executed", None, 0, (), (), {}),
        ("inspector.partition", "ineligible", "records within threshold", None, (), (), {"records": 0, "threshold": 200}),
    ]
    assert out.windows == () and out.metadata.confidence == 0.0 and out.metadata.fallback == "overlap"
    out, rec = _inspect([], "what is the")
    assert out.windows == () and not rec.of("inspector.fallback_order", "output")
    assert not rec.of("inspector.fallback_order", "selected")


def test_confidence_counts_query_tokens_covered_by_the_windows_text():
    lines = ["router box", "wifi password", "garden", "museum"]
    out, rec = _inspect(lines, "wifi password router", max_windows=1)
    assert [w.window_id for w in out.windows] == ["line:1"] and out.windows[0].text == "wifi password"
    assert out.windows[0].rho == 2 / 3 and out.metadata.confidence == 2 / 3
    assert rec.of("inspector.grep", "selected")[0].params == {"confidence": 0.666667}
    # A radius brings the neighbour's "router" into the window, and with it full coverage.
    out, rec = _inspect(lines, "wifi password router", max_windows=1, window_radius=1)
    assert out.windows[0].text == "router box\nwifi password\ngarden"
    assert out.metadata.confidence == 1.0 and out.windows[0].rho == 2 / 3


def test_the_window_radius_takes_r_lines_on_each_side():
    lines = [f"filler {i}" for i in range(14)]
    lines[6] = "wifi password"
    out, _ = _inspect(lines, "wifi password", max_windows=1, window_radius=3)
    assert out.windows[0].text == "\n".join(lines[3:10])
    out, _ = _inspect(lines, "wifi password", max_windows=1, window_radius=1)
    assert out.windows[0].text == "\n".join(lines[5:8])
    out, _ = _inspect(lines, "wifi password", max_windows=1, window_radius=0)
    assert out.windows[0].text == "wifi password"
    edge = ["wifi password"] + lines[1:]
    out, _ = _inspect(edge, "wifi password", max_windows=1, window_radius=2)
    assert out.windows[0].text == "\n".join(edge[0:3])


# -- the semantic lane --------------------------------------------------------------------------

def test_the_semantic_lane_on_an_empty_and_a_one_document_corpus():
    empty = SemanticIndex([], HashingEmbedder())
    assert empty.similarities("wifi") == [] and empty.top_k("wifi", 5) == []
    one = SemanticIndex(["wifi password"], HashingEmbedder())
    (sim,) = one.similarities("wifi password")
    assert math.isclose(sim, 1.0, rel_tol=1e-9)
    assert [h.doc for h in one.top_k("wifi password", 5)] == [0]
    two = SemanticIndex(["wifi password", "garden party"], HashingEmbedder())
    assert two.sim(0, 0) == pytest.approx(1.0) and two.sim(0, 1) == pytest.approx(two.sim(1, 0))
    assert two.similarities("garden party")[1] == pytest.approx(1.0)


# -- routing ------------------------------------------------------------------------------------

def test_explicit_requests_need_a_cue_and_a_declarative_sentence():
    assert not explicit_memory_request("my wifi password is bluefish42")
    assert not requires_consolidation("single-session", "my wifi password is bluefish42")
    assert not explicit_memory_request("Remember that my flight to Oslo is on Tuesday?")  # a question
    assert explicit_memory_request("Remember that my flight to Oslo is on Tuesday.")
    assert not explicit_memory_request("   ")
    assert not explicit_memory_request("remember")


def test_the_sentence_walk_goes_past_advice_and_reminiscence():
    assert explicit_memory_request("Remember to take breaks. Remember that my flight is on Tuesday.")
    assert explicit_memory_request("I remember the trip. Remember that my flight is on Tuesday.")
    assert explicit_memory_request("I remember the trip. Remember that the cabin code is 4411.")
    assert not explicit_memory_request("I remember the trip. Remember to rest.")


def test_a_specific_fact_needs_that_or_a_colon():
    assert explicit_memory_request("Remember that Oslo is cold in May")
    assert explicit_memory_request("Note: the cabin code is 4411")
    assert not explicit_memory_request("Remember the cabin code is 4411")
    assert not explicit_memory_request("Remember that the weather is nice")
    assert requires_consolidation("single-session", "Remember that Oslo is cold in May")


def test_strip_cue_edges():
    assert strip_cue("remember that") == "remember that"
    assert strip_cue("  Remember   that my  office is in Berlin ") == "My office is in Berlin"
    assert strip_cue("note: remember that x1") == "Remember that x1"  # one leading cue only
    assert strip_cue("ab") == "Ab"
