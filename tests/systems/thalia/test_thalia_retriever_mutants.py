"""The Retriever's details the stage tests left open, each pinned by an exact value: the inline
prefix at exactly the budget, the RRF output event's 12-decimal scores, recency's rank deltas
and its ineligibility reason."""

from __future__ import annotations

from datetime import datetime

from lsrep.systems.thalia import HarnessConfig
from lsrep.systems.thalia.contracts import EvidenceWindow, RankedEvidence
from lsrep.systems.thalia.embedding import HashingEmbedder
from lsrep.systems.thalia.events import EventRelay
from lsrep.systems.thalia.retriever import Retriever, inline_prefix
from lsrep.systems.thalia.text import token_count
from thalia_testkit import Recorder

T = datetime(2024, 5, 1, 9, 0)


def window(i: int, text: str) -> EvidenceWindow:
    return EvidenceWindow(window_id=f"line:{i}", source_index=i, text=text, turn_id=i, source_id=f"t{i}",
                          session_id="s1", timestamp=T, origin="inspector")


def retrieve(texts: list[str], query: str, **config):
    rec = Recorder()
    out = Retriever(HarnessConfig(**config), HashingEmbedder(), EventRelay(rec)).retrieve(
        query, [window(i, t) for i, t in enumerate(texts)], "single-hop")
    return out, rec


def test_the_inline_prefix_keeps_a_window_that_ends_exactly_at_the_budget():
    ranked = [RankedEvidence(window(i, t), 1.0, 1.0) for i, t in enumerate(["wifi password here", "guest wifi"])]
    sizes = [token_count(r.window.text) for r in ranked]
    assert inline_prefix(ranked, sum(sizes)) == tuple(ranked)
    assert inline_prefix(ranked, sum(sizes) - 1) == tuple(ranked[:1])
    assert inline_prefix(ranked, sizes[0]) == tuple(ranked[:1])
    assert inline_prefix(ranked, sizes[0] - 1) == ()


def test_the_rrf_output_event_carries_scores_to_twelve_decimals():
    out, rec = retrieve(["wifi password bluefish42", "guest wifi", "password hint", "garden party"],
                        "wifi password")
    (event,) = rec.of("retriever.rrf", "output")
    assert event.params["scores"] == [round(r.fused_score, 12) for r in out.full_ranking]
    assert any(round(r.fused_score, 11) != round(r.fused_score, 12) for r in out.full_ranking)


def test_recency_reports_each_moved_windows_rank_delta():
    texts = ["wifi password bluefish42", "guest wifi", "password hint", "wifi password again"]
    plain, _ = retrieve(texts, "wifi password")
    out, rec = retrieve(texts, "wifi password", recency_weight=1.0)
    before = [r.window.window_id for r in plain.full_ranking]
    after = [r.window.window_id for r in out.full_ranking]
    assert before != after
    (event,) = rec.of("retriever.recency", "output")
    want = {w: before.index(w) - after.index(w) for w in after if before.index(w) != after.index(w)}
    assert event.params["rank_deltas"] == want and want


def test_recency_ineligible_reasons():
    _, rec = retrieve([], "wifi", recency_weight=0.5)
    assert [e.reason for e in rec.of("retriever.recency", "ineligible")] == ["nothing ranked"]
    _, rec = retrieve(["wifi"], "wifi", recency_weight=0.0)
    assert [e.reason for e in rec.of("retriever.recency", "ineligible")] == ["recency_weight is 0"]
