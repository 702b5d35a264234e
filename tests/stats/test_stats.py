"""lsrep.stats against hand-computed values and scipy reference results."""

from __future__ import annotations

import math
import time
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from scipy import stats as sps

from lsrep import stats


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- Wilson ------------------------------------------------------------------------------------
def wilson_by_hand(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = (z / (1 + z * z / n)) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(8, 10), (0, 10), (10, 10), (57, 189), (1, 3)])
def test_wilson_matches_the_hand_formula(k, n):
    est = stats.wilson_interval(k, n)
    lo, hi = wilson_by_hand(k, n, 1.959963984540054)
    assert est.value == pytest.approx(k / n)
    assert est.interval[0] == pytest.approx(max(0.0, lo), abs=1e-12)
    assert est.interval[1] == pytest.approx(min(1.0, hi), abs=1e-12)
    assert (est.n, est.level) == (n, 0.95)
    assert "independent" in est.unit


def test_wilson_published_value():
    # 8 successes in 10: the textbook 95% Wilson interval is (0.490, 0.943).
    lo, hi = stats.wilson_interval(8, 10).interval
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)


def test_wilson_empty_is_nan():
    est = stats.wilson_interval(0, 0)
    assert math.isnan(est.value) and est.n == 0


# -- McNemar, Holm -----------------------------------------------------------------------------
def test_mcnemar_exact_is_a_binomial_test_on_discordant_pairs():
    # 7 pairs A-only, 1 pair B-only, plus concordant pairs that must not matter.
    a = [1] * 7 + [0] + [1] * 5 + [0] * 4
    b = [0] * 7 + [1] + [1] * 5 + [0] * 4
    res = stats.mcnemar_exact(a, b)
    assert res.p_value == pytest.approx(sps.binomtest(7, 8, 0.5).pvalue)
    assert res.p_value == pytest.approx(2 * (8 + 1) / 2**8)  # hand: 2 * P(X >= 7), X ~ Bin(8, 1/2)
    assert dict(res.detail) == {"a_only": 7.0, "b_only": 1.0}
    assert res.n == len(a)


def test_mcnemar_without_discordant_pairs_is_one():
    assert stats.mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0


def test_holm_on_a_known_vector():
    adjusted = stats.holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_skips_missing_and_caps_at_one():
    assert stats.holm([0.5, None, 0.4]) == [pytest.approx(0.8), None, pytest.approx(0.8)]
    assert stats.holm([0.9, 0.8]) == [pytest.approx(1.0), pytest.approx(1.0)]


# -- sign-flip ---------------------------------------------------------------------------------
def test_sign_flip_exact_on_a_tiny_case():
    # Cluster totals 1, 2, 3: |sum| = 6 is reached by 2 of the 2^3 sign patterns.
    d = [1.0, 1.0, 1.0, 3.0, -1.0, 0.5, 0.5]
    clusters = ["a", "b", "b", "c", "c", "c", "c"]  # totals: a=1, b=2, c=3
    res = stats.sign_flip_test(d, clusters, rng())
    assert res.p_value == pytest.approx(2 / 8)
    assert res.clusters == 3 and res.n == 7
    assert "exact" in res.method


def test_sign_flip_exact_enumeration_by_brute_force():
    totals = np.array([0.4, -1.3, 2.0, 0.7])
    observed = abs(totals.sum())
    count = 0
    for mask in range(16):
        signs = np.array([1 if mask >> i & 1 else -1 for i in range(4)])
        count += abs(signs @ totals) >= observed - 1e-12
    res = stats.sign_flip_test(totals, ["w", "x", "y", "z"], rng())
    assert res.p_value == pytest.approx(count / 16)


def test_sign_flip_all_zero_is_one():
    assert stats.sign_flip_test([0.0, 0.0], ["a", "b"], rng()).p_value == 1.0


def test_sign_flip_monte_carlo_is_seeded():
    d = np.r_[np.ones(30), -np.ones(10)]
    clusters = list(range(40))
    p1 = stats.sign_flip_test(d, clusters, rng(1)).p_value
    assert p1 == stats.sign_flip_test(d, clusters, rng(1)).p_value
    assert 0 < p1 < 0.01


# -- bootstrap ---------------------------------------------------------------------------------
def clustered_sample(seed: int = 3, k: int = 40, m: int = 6):
    g = np.random.default_rng(seed)
    base = g.random(k)
    values = (g.random((k, m)) < base[:, None]).astype(float).ravel()
    clusters = np.repeat(np.arange(k), m)
    return values, [("t", int(c)) for c in clusters]


def test_bootstrap_identical_for_fixed_seed_different_for_different_seeds():
    v, c = clustered_sample()
    a = stats.cluster_bootstrap_mean(v, c, rng(7))
    b = stats.cluster_bootstrap_mean(v, c, rng(7))
    other = stats.cluster_bootstrap_mean(v, c, rng(8))
    assert a == b
    assert a.interval != other.interval
    assert a.value == other.value == pytest.approx(v.mean())


def test_bootstrap_states_its_unit_n_and_clusters():
    v, c = clustered_sample()
    est = stats.cluster_bootstrap_mean(v, c, rng())
    assert (est.n, est.clusters) == (240, 40)
    assert est.unit == stats.PROBE_UNIT
    assert "B=2000" in est.method
    assert est.interval[0] < est.value < est.interval[1]
    with pytest.raises(FrozenInstanceError):
        est.value = 0.0  # type: ignore[misc]


def test_cluster_bootstrap_is_wider_than_treating_observations_as_independent():
    v, c = clustered_sample()
    clustered = stats.cluster_bootstrap_mean(v, c, rng())
    naive = stats.cluster_bootstrap_mean(v, list(range(len(v))), rng())
    width = lambda e: e.interval[1] - e.interval[0]  # noqa: E731
    assert width(clustered) > width(naive)


def test_bootstrap_constant_clusters_and_nan():
    est = stats.cluster_bootstrap_mean([1.0, 1.0, math.nan, 1.0], ["a", "a", "b", "c"], rng())
    assert est.value == 1.0 and est.interval == (1.0, 1.0)
    assert (est.n, est.clusters) == (3, 2)
    empty = stats.cluster_bootstrap_mean([], [], rng())
    assert math.isnan(empty.value) and empty.n == 0


def test_rate_returns_bootstrap_and_wilson():
    v, c = clustered_sample()
    boot, wilson = stats.rate(v, c, rng())
    assert boot.value == wilson.value
    assert wilson.method == "Wilson score interval" and boot.clusters == 40


def test_bootstrap_is_fast_on_ten_thousand_observations():
    g = np.random.default_rng(0)
    v = (g.random(10_000) < 0.6).astype(float)
    c = [("t", i % 900) for i in range(10_000)]
    start = time.perf_counter()
    stats.cluster_bootstrap_mean(v, c, rng())
    stats.paired_difference(v, g.random(10_000) < 0.5, c, rng(), binary=True)
    assert time.perf_counter() - start < 2.0


# -- paired ------------------------------------------------------------------------------------
def test_paired_difference_value_and_tests():
    a = [1, 1, 1, 0, 1, 1, 0, 1]
    b = [0, 1, 0, 0, 0, 1, 0, 0]
    clusters = ["p1", "p1", "p2", "p2", "p3", "p3", "p4", "p4"]
    res = stats.paired_difference(a, b, clusters, rng(), names=("x", "y"), binary=True)
    assert (res.a, res.b) == ("x", "y")
    assert res.difference.value == pytest.approx(4 / 8)
    assert res.mcnemar.p_value == pytest.approx(sps.binomtest(4, 4).pvalue)
    # Cluster totals 1, 1, 1, 1: only the all-plus and all-minus patterns reach |4|.
    assert res.randomization.p_value == pytest.approx(2 / 16)
    assert res.difference.clusters == 4


def test_paired_difference_drops_pairs_with_a_missing_side():
    res = stats.paired_difference([1.0, math.nan, 0.5], [0.0, 1.0, 0.5], ["a", "b", "c"], rng())
    assert res.difference.n == 2 and res.difference.value == pytest.approx(0.5)
    assert res.mcnemar is None


def test_net_ordinal_superiority_by_hand():
    a = [5, 3, 2, 4, 4]
    b = [4, 3, 3, 1, None]
    res = stats.net_ordinal_superiority(
        [float("nan") if x is None else x for x in a], [float("nan") if x is None else x for x in b],
        ["p", "q", "r", "s", "t"], rng())
    # Pairs: A>B, tie, B>A, A>B  →  P(A>B) − P(B>A) = 2/4 − 1/4.
    assert res.value == pytest.approx(0.25)
    assert res.n == 4 and -1 <= res.interval[0] <= res.interval[1] <= 1
    assert "net ordinal superiority" in res.method


# -- agreement and seeding ---------------------------------------------------------------------
def test_cohen_kappa_by_hand():
    # p_o = 3/4, p_e = 0.5*0.25 + 0.5*0.75 = 0.5, kappa = (0.75 - 0.5) / 0.5.
    assert stats.cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]).value == pytest.approx(0.5)
    assert stats.percent_agreement([1, 1, 0, None], [1, 0, 0, 1]).value == pytest.approx(2 / 3)


def test_kappa_matches_the_model_layer_implementation():
    from lsrep.judge.agreement import cohen_kappa, percent_agreement

    a = ["correct", "stale", "wrong", "correct", None, "abstained", "correct", "wrong"]
    b = ["correct", "wrong", "wrong", "stale", "correct", "abstained", "correct", None]
    assert stats.cohen_kappa(a, b).value == pytest.approx(cohen_kappa(a, b).value)
    assert stats.percent_agreement(a, b).value == pytest.approx(percent_agreement(a, b).value)
    assert stats.cohen_kappa(a, b).n == cohen_kappa(a, b).n == 6
    assert math.isnan(stats.cohen_kappa([1, 1], [1, 1]).value)


def test_rng_for_is_stable_and_label_specific():
    x = stats.rng_for(5, "accuracy", "a").random(3)
    assert np.array_equal(x, stats.rng_for(5, "accuracy", "a").random(3))
    assert not np.array_equal(x, stats.rng_for(5, "accuracy", "b").random(3))
    assert not np.array_equal(x, stats.rng_for(6, "accuracy", "a").random(3))
