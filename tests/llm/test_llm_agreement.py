"""Agreement statistics against values computed by hand (no sklearn)."""

from __future__ import annotations

import math

import pytest

from lsrep.judge.agreement import cohen_kappa, pairwise_agreement, percent_agreement


def _table(counts: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    a, b = [], []
    for (x, y), n in counts.items():
        a += [x] * n
        b += [y] * n
    return a, b


def test_two_by_two_kappa():
    # yes/yes 20, yes/no 5, no/yes 10, no/no 15: po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5
    a, b = _table({("y", "y"): 20, ("y", "n"): 5, ("n", "y"): 10, ("n", "n"): 15})
    assert percent_agreement(a, b).value == pytest.approx(0.7)
    result = cohen_kappa(a, b)
    assert result.value == pytest.approx(0.4) and result.n == 50 and result.method == "cohen_kappa"


def test_rubric_kappa_plain_and_weighted():
    # pairs (1,1) (1,2) (2,2) (3,5) on a 1-5 scale
    a, b = [1, 1, 2, 3], [1, 2, 2, 5]
    scale = range(1, 6)
    # plain: po = 0.5, pe = 0.5*0.25 + 0.25*0.5 = 0.25 -> (0.5-0.25)/0.75
    assert cohen_kappa(a, b, categories=scale).value == pytest.approx(1 / 3)
    # linear: observed disagreement (1/4 + 2/4)/4 = 0.1875, expected 0.34375 -> 1 - 6/11
    linear = cohen_kappa(a, b, categories=scale, weights="linear")
    assert linear.value == pytest.approx(5 / 11) and linear.method == "cohen_kappa_linear"
    # quadratic: 0.078125 / 0.21875 -> 1 - 5/14
    assert cohen_kappa(a, b, categories=scale, weights="quadratic").value == pytest.approx(9 / 14)


def test_adjacent_swap_on_uniform_margins():
    a, b = [1, 2, 3, 4, 5], [1, 2, 3, 5, 4]
    assert cohen_kappa(a, b, categories=range(1, 6)).value == pytest.approx(0.5)
    # observed 0.1 vs expected 40/4/25 = 0.4
    assert cohen_kappa(a, b, categories=range(1, 6), weights="linear").value == pytest.approx(0.75)


def test_perfect_and_undefined():
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]).value == pytest.approx(1.0)
    constant = cohen_kappa(["a", "a"], ["a", "a"])
    assert math.isnan(constant.value) and constant.n == 2
    assert math.isnan(percent_agreement([], []).value)


def test_missing_labels_are_skipped():
    result = percent_agreement(["a", None, "b", "b"], ["a", "b", None, "a"])
    assert result.value == pytest.approx(0.5) and result.n == 2


def test_errors():
    with pytest.raises(ValueError):
        percent_agreement(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        cohen_kappa([1, 7], [1, 2], categories=range(1, 6))


def test_pairwise():
    seqs = {"p0": ["c", "c", "w"], "p1": ["c", "w", "w"], "p2": ["c", "c", "w"]}
    out = pairwise_agreement(seqs)
    assert set(out) == {("p0", "p1"), ("p0", "p2"), ("p1", "p2")}
    assert out[("p0", "p2")][0].value == 1.0 and out[("p0", "p2")][1].value == pytest.approx(1.0)
    # p0 vs p1: po = 2/3; margins c: 2/3 vs 1/3 -> pe = 2/9 + 2/9 = 4/9; kappa = (2/9)/(5/9)
    assert out[("p0", "p1")][1].value == pytest.approx(0.4)
