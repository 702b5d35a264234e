"""`top_k_stable`'s work: when k covers every score it sorts once and never partitions (the
partition path would give the same positions, so only the work tells the two apart)."""

from __future__ import annotations

import numpy as np
import pytest
from lsrep.systems.ice.lexical import top_k_stable


def _no_partition(*args, **kwargs):
    raise AssertionError("partitioned although k covers every score")


@pytest.mark.parametrize("extra", [0, 1, 5])
def test_k_at_or_past_the_size_sorts_without_partitioning(monkeypatch, extra):
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9, 0.3])
    expected = list(np.argsort(-scores, kind="stable"))
    monkeypatch.setattr(np, "partition", _no_partition)
    assert list(top_k_stable(scores, scores.size + extra)) == expected


def test_k_below_the_size_partitions_and_keeps_the_stable_order():
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9, 0.3])
    calls = []
    real = np.partition

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(np, "partition", counting)
        got = list(top_k_stable(scores, scores.size - 1))
    assert calls == [1]
    assert got == list(np.argsort(-scores, kind="stable"))[:scores.size - 1]
