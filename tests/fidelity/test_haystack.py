"""The harness's full-haystack BM25, the reference point for THALIA's Inspector recall (T-1)."""

from __future__ import annotations

import math

import pytest
from lsrep.reports.haystack import Haystack


def turns(*texts: str) -> list[dict]:
    return [{"idx": i, "turn_id": f"t{i}", "content": t} for i, t in enumerate(texts)]


def test_bm25_scores_match_the_formula_and_ties_keep_turn_order():
    stack = Haystack(turns("the wifi password is bluefish", "wifi wifi router", "lunch was pasta", "wifi"))
    # t1 (wifi twice in 3 tokens) and t3 (wifi once in 1 token) score exactly alike: turn order decides.
    assert stack.top("what is the wifi password", 4, k=10) == ["t0", "t1", "t3"]
    # By hand for "password" alone: only t0 (5 tokens) has it; N = 4, df = 1, mean length 3.
    idf = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 1 * 2.5 / (1 + 1.5 * (1 - 0.75 + 0.75 * 5 / 3))
    ((tid, score),) = stack.scores("password", 4)
    assert tid == "t0" and score == pytest.approx(expected)
    assert stack.top("nothing matches here", 4) == []


def test_only_turns_before_the_checkpoint_are_ranked():
    stack = Haystack(turns("lunch was pasta", "the wifi password is bluefish", "wifi"))
    assert stack.top("wifi password", 1) == []
    assert stack.top("wifi password", 2) == ["t1"]
    assert set(stack.top("wifi password", 3)) == {"t1", "t2"}


@pytest.mark.parametrize("k", [1, 2])
def test_k_caps_the_list(k):
    stack = Haystack(turns("a wifi", "b wifi", "c wifi"))
    assert stack.top("wifi", 3, k=k) == ["t0", "t1"][:k]
