"""THALIA's weighted RRF, recency bonus and MMR on hand-computed cases (S-THALIA 3.3.6-3.3.8)."""

from __future__ import annotations

import pytest
from lsrep.systems.thalia.fusion import Fused, Lane, Scored, apply_recency, mmr_order, weighted_rrf


def test_rrf_uses_zero_based_ranks_plus_one_and_the_lane_weight():
    fused = weighted_rrf([Lane("bm25", (7, 3), 0.65), Lane("sem", (3, 9), 0.35)])
    scores = {f.doc: f.score for f in fused}
    assert scores[7] == pytest.approx(0.65 / 61)
    assert scores[3] == pytest.approx(0.65 / 62 + 0.35 / 61)
    assert scores[9] == pytest.approx(0.35 / 62)
    assert [f.doc for f in fused] == [3, 7, 9]
    assert weighted_rrf([Lane("a", (1,), 1.0)], k=0)[0].score == pytest.approx(1.0)  # k is the constant


def test_a_repeated_id_in_a_lane_counts_once_and_does_not_consume_a_rank():
    fused = {f.doc: f.score for f in weighted_rrf([Lane("a", (5, 5, 6), 1.0)])}
    assert fused[5] == pytest.approx(1 / 61) and fused[6] == pytest.approx(1 / 62)


def test_rrf_ties_order_by_ascending_id_and_scores_are_reported_unrounded():
    fused = weighted_rrf([Lane("a", (9, 4), 1.0), Lane("b", (4, 9), 1.0)])
    assert [f.doc for f in fused] == [4, 9]
    assert fused[0] == Fused(4, 1 / 61 + 1 / 62)


def test_recency_adds_rho_times_smax_scaled_by_position_and_resorts():
    items = [Scored(0, 0.5, 0), Scored(1, 0.4, 5), Scored(2, 0.45, 10), Scored(3, 0.9, -1)]
    out = apply_recency(items, 0.1)
    got = {it.doc: it.score for it in out}
    assert got[0] == 0.5  # position 0 gets nothing
    assert got[1] == round(0.4 + 0.1 * 0.9 * 5 / 10, 8)
    assert got[2] == round(0.45 + 0.1 * 0.9, 8)
    assert got[3] == 0.9  # a recalled window (negative index) is unchanged
    assert [it.doc for it in out] == [3, 2, 0, 1]


def test_recency_ties_order_by_source_index_and_rounds_to_eight_decimals():
    out = apply_recency([Scored(0, 0.5, 2), Scored(1, 0.5, 1), Scored(2, 0.5, 0)], 1e-9)
    assert [it.doc for it in out] == [2, 1, 0]  # differences below 1e-8 round away: a tie, by source index
    assert all(it.score == 0.5 for it in out)


def test_recency_with_one_transcript_position_changes_nothing():
    items = [Scored(0, 0.2, 0), Scored(1, 0.7, -1)]
    assert apply_recency(items, 0.5) == [Scored(1, 0.7, -1), Scored(0, 0.2, 0)]
    assert apply_recency([], 0.5) == []


def test_mmr_with_lambda_one_keeps_the_order_and_with_redundancy_demotes_near_duplicates():
    scores = [0.9, 0.85, 0.5]
    assert mmr_order(scores, lambda i, j: 1.0, 1.0) == [0, 1, 2]
    dup = {(0, 1): 1.0, (1, 0): 1.0}
    order = mmr_order(scores, lambda i, j: dup.get((i, j), 0.0), 0.5)
    assert order == [0, 2, 1]  # 1 repeats 0: its MMR is .5*.875 - .5*1 < .5*0
    assert mmr_order([], lambda i, j: 0.0, 0.5) == []


def test_mmr_relevance_is_min_max_normalised_and_ties_go_to_relevance_then_position():
    # rel = [1, .5, 0]; with lambda .5 and sim(2, 0) = 0, sim(1, 0) = 0: order by relevance.
    assert mmr_order([3.0, 2.0, 1.0], lambda i, j: 0.0, 0.5) == [0, 1, 2]
    # Equal MMR values: the more relevant wins the tie.
    sims = {(1, 0): 0.5, (2, 0): 0.0}
    # after 0: MMR(1) = .5*.5 - .5*.5 = 0; MMR(2) = .5*0 - 0 = 0 -> tie -> 1 (rel .5) before 2 (rel 0)
    assert mmr_order([3.0, 2.0, 1.0], lambda i, j: sims.get((i, j), 0.0), 0.5) == [0, 1, 2]
    assert mmr_order([0.4, 0.4], lambda i, j: 0.0, 0.3) == [0, 1]  # all equal: rel 1 for all, lower position


def test_mmr_redundancy_is_the_maximum_similarity_to_any_chosen_item():
    # rel = [1, 2/3, 1/3, 0], lambda .5. After 0: MMR(1)=1/3, MMR(2)=1/6-.45, MMR(3)=0 -> 1.
    # After 1, item 2's redundancy stays max(.9, 0) = .9, so 3 (MMR 0) beats 2.
    sims = {(2, 0): 0.9}
    order = mmr_order([1.0, 0.9, 0.8, 0.7], lambda i, j: sims.get((i, j), 0.0), 0.5)
    assert order == [0, 1, 3, 2]
    sims2 = {(1, 0): 0.95}
    assert mmr_order([1.0, 0.9, 0.8], lambda i, j: sims2.get((i, j), 0.0), 0.5) == [0, 2, 1]
