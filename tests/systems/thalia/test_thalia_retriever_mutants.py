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


def test_the_idf_of_an_absent_term_uses_document_frequency_zero():
    import math

    from lsrep.systems.thalia.lexical import BM25

    bm = BM25(["wifi password", "garden party", "wifi router"])
    assert bm.idf("absent") == math.log(1.0 + (3 + 0.5) / 0.5)
    assert bm.idf("wifi") == math.log(1.0 + (3 - 2 + 0.5) / (2 + 0.5))


def test_without_fusion_the_concatenated_lanes_are_scored_by_rank_with_weight_one():
    texts = ["guest wifi", "garden party", "wifi password bluefish42", "password hint"]
    out, _ = retrieve(texts, "wifi password", ablate=frozenset({"retriever.rrf"}))
    ranking = out.full_ranking
    assert [r.fused_score for r in ranking] == [1.0 / (60 + i + 1) for i in range(len(ranking))]


def test_mmr_reports_reordering_and_its_ineligible_reasons():
    texts = ["wifi password bluefish42", "wifi password bluefish42 again", "password hint", "guest wifi"]
    out, rec = retrieve(texts, "wifi password", mmr=True, mmr_lambda=0.0)
    (event,) = rec.of("retriever.mmr", "output")
    plain, _ = retrieve(texts, "wifi password")
    moved = [r.window.window_id for r in out.full_ranking] != [r.window.window_id for r in plain.full_ranking]
    assert event.params["reordered"] is moved and moved
    _, rec = retrieve(texts, "wifi password", mmr=True, mmr_lambda=1.0)
    assert rec.of("retriever.mmr", "output")[0].params["reordered"] is False
    _, rec = retrieve([], "wifi", mmr=True)
    assert [e.reason for e in rec.of("retriever.mmr", "ineligible")] == ["nothing ranked"]
    _, rec = retrieve(texts, "wifi", mmr=False)
    assert [e.reason for e in rec.of("retriever.mmr", "ineligible")] == ["mmr is off"]


def test_lane_events_carry_scores_to_twelve_decimals():
    texts = ["wifi password bluefish42", "guest wifi", "password hint", "garden party"]
    from lsrep.systems.thalia.lexical import BM25
    from lsrep.systems.thalia.semantic import SemanticIndex

    _, rec = retrieve(texts, "wifi password")
    raw = {"retriever.bm25": [h.score for h in BM25(texts).top_k("wifi password", 8)],
           "retriever.hashing": [h.score for h in SemanticIndex(texts, HashingEmbedder()).top_k("wifi password", 8)]}
    for lane, scores in raw.items():
        (event,) = rec.of(lane, "executed")
        assert event.params["scores"] == [round(s, 12) for s in scores]
        assert any(round(s, 11) != round(s, 12) for s in scores)


def test_bm25_with_a_repeated_document_term_follows_the_formula():
    import math

    from lsrep.systems.thalia.lexical import BM25

    docs = ["wifi wifi router", "garden party", "wifi"]
    bm = BM25(docs)
    n, n_t, avg = 3, 2, 6 / 3
    idf = math.log(1 + (n - n_t + 0.5) / (n_t + 0.5))
    for d, (f, dl) in {0: (2, 3), 2: (1, 1)}.items():
        want = idf * f * 2.5 / (f + 1.5 * (0.25 + 0.75 * dl / avg))
        assert math.isclose(bm.scores("wifi")[d], want, rel_tol=1e-12)


def test_evidence_under_the_budget_is_inline_and_the_overflow_folder_is_created(tmp_path):
    from lsrep.systems.thalia import DeliveryMode

    texts = ["wifi password bluefish42", "guest wifi", "password hint"]
    out, _ = retrieve(texts, "wifi password", evidence_dir=str(tmp_path / "inline"))
    assert 0 < out.evidence_tokens < out.budget_tokens and out.delivery_mode is DeliveryMode.INLINE
    assert out.evidence_file is None and not (tmp_path / "inline").exists()  # no overflow file when inline
    nested = tmp_path / "a" / "b" / "c"
    out, _ = retrieve(texts, "wifi password", context_budget_tokens=3, evidence_dir=str(nested))
    assert out.delivery_mode is DeliveryMode.FILE_BASED and out.evidence_file.startswith(str(nested))


def test_expand_query_appends_the_terms_and_leaves_a_query_without_terms_alone():
    from lsrep.systems.thalia.lexical import expand_query

    assert expand_query("wifi password", ["router", "guest"]) == "wifi password router guest"
    assert expand_query("wifi password", []) == "wifi password"


def test_a_lane_keeps_only_positive_scores_so_a_negative_cosine_is_no_hit():
    from lsrep.systems.thalia.lexical import LaneHit, rank_hits

    assert rank_hits([0.5, -0.2, 0.0, 0.7], 5) == [LaneHit(3, 0.7), LaneHit(0, 0.5)]


def test_a_lane_with_no_window_among_the_capped_reports_no_selection():
    out, rec = retrieve(["wifi password bluefish42", "guest wifi"], "wifii passwordd")  # no exact token
    assert rec.of("retriever.bm25", "executed")[0].count == 0 and out.ranked
    assert rec.of("retriever.bm25", "selected") == [] and rec.of("retriever.hashing", "selected")


def test_the_inline_prefix_stops_counting_at_the_first_window_that_overflows(monkeypatch):
    import lsrep.systems.thalia.retriever as retriever

    counted: list[str] = []

    def counting(text: str) -> int:
        counted.append(text)
        return token_count(text)

    monkeypatch.setattr(retriever, "token_count", counting)
    ranked = [RankedEvidence(window(i, t), 1.0, 1.0) for i, t in enumerate(["wifi password", "x " * 50, "ok", "a b"])]
    assert inline_prefix(ranked, token_count("wifi password")) == tuple(ranked[:1])
    assert counted == ["wifi password", "x " * 50]  # the windows after the overflow are not even counted


def test_bm25_length_normalisation_with_a_small_b():
    import math

    from lsrep.systems.thalia.lexical import BM25

    bm = BM25(["wifi router box", "garden party", "wifi"], k1=1.2, b=0.3)
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avg = 6 / 3
    want = idf * 1 * 2.2 / (1 + 1.2 * (1 - 0.3 + 0.3 * 3 / avg))
    assert math.isclose(bm.scores("wifi")[0], want, rel_tol=1e-12)


def test_prf_keeps_three_letter_terms_and_drops_two_letter_ones():
    from lsrep.systems.thalia.lexical import expansion_terms

    assert expansion_terms("wifi", ["wifi cat ox router", "cat router"], 5) == ["cat", "router"]


def test_prf_ineligible_reasons_and_repeated_overflow_files_in_one_folder(tmp_path):
    _, rec = retrieve(["wifi"], "wifi", query_expansion=False)
    assert [e.reason for e in rec.of("retriever.prf", "ineligible")] == ["query_expansion is off"]
    _, rec = retrieve([], "wifi", query_expansion=True)
    assert [e.reason for e in rec.of("retriever.prf", "ineligible")] == ["no windows"]
    texts = ["wifi password bluefish42", "guest wifi", "password hint"]
    first, _ = retrieve(texts, "wifi password", context_budget_tokens=3, evidence_dir=str(tmp_path))
    second, _ = retrieve(texts, "guest wifi", context_budget_tokens=3, evidence_dir=str(tmp_path))
    assert first.evidence_file != second.evidence_file and len(list(tmp_path.iterdir())) == 2


def test_prf_drops_one_letter_terms_and_lane_hits_are_immutable():
    import dataclasses

    import pytest
    from lsrep.systems.thalia.lexical import LaneHit, expansion_terms

    assert expansion_terms("wifi", ["wifi x router", "x"], 5) == ["router"]  # "x": a token, not a stopword
    with pytest.raises(dataclasses.FrozenInstanceError):
        LaneHit(0, 1.0).score = 0.0  # type: ignore[misc]
