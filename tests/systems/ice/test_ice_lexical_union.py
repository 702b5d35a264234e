"""`union_sorted` (the candidate turns of the lexical max-score cut) against the rule it
replaces, `np.unique(np.concatenate(postings))`, kept here as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from lsrep.systems.ice.lexical import union_sorted


@pytest.mark.parametrize("seed", range(4))
def test_union_sorted_is_unique_of_the_concatenation(seed):
    rng = np.random.default_rng(seed)
    for trial in range(300):
        n_docs = int(rng.integers(1, 400))
        postings = []
        for _ in range(int(rng.integers(1, 5))):
            share = rng.choice([0.01, 0.1, 0.6, 1.0])
            postings.append(np.flatnonzero(rng.random(n_docs) < share).astype(np.int64))
        got = union_sorted(postings, n_docs)
        want = np.unique(np.concatenate(postings))
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), trial


def test_union_sorted_pinned():
    a, b = np.array([0, 3, 7], dtype=np.int64), np.array([3, 4, 9], dtype=np.int64)
    assert union_sorted([a, b], 10).tolist() == [0, 3, 4, 7, 9]
    assert union_sorted([b, a, np.zeros(0, dtype=np.int64)], 10).tolist() == [0, 3, 4, 7, 9]
    assert union_sorted([a], 10) is a  # one posting is already its own union
    assert union_sorted([np.zeros(0, dtype=np.int64)] * 2, 5).tolist() == []
