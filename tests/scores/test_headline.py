"""The headline cannot be won by abstaining; ranks, strata and calibration names."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lsrep import stats
from lsrep.errors import ConfigError
from lsrep.headline import (
    CALIBRATION_SYSTEMS,
    by_rank,
    condition_scores,
    expects_abstention,
    stratum,
)

ANSWER = json.dumps({"ask": True, "expect_abstain": False, "in_force": [{"answer": "x", "valid_from": "t1"}]})
ABSTAIN = json.dumps({"ask": True, "expect_abstain": True})


def obs(cond, probe, correct, *, abstain=False, category=None, kind="current", checkpoint=0, outcome=None):
    return {"condition": cond, "trajectory": "t", "probe_id": probe, "kind": "abstention" if abstain else kind,
            "category": category, "expected": ABSTAIN if abstain else ANSWER, "correct": correct,
            "outcome": outcome or ("correct" if correct else "wrong"), "proven_leak": 0, "checkpoint": checkpoint}


def test_always_abstaining_system_is_ranked_last_not_first():
    rows = []
    # 30 abstention probes, 10 answerable ones: the abstainer collects every abstention credit...
    for i in range(30):
        rows.append(obs("abstainer", f"a{i}", 1, abstain=True, outcome="abstained"))
        rows.append(obs("reader", f"a{i}", 0, abstain=True))
    for i in range(10):
        rows.append(obs("abstainer", f"q{i}", 0, outcome="abstained"))
        rows.append(obs("reader", f"q{i}", int(i < 3)))
    # ...so its share credited over all observations beats the reader's (30/40 against 3/40)...
    overall = {c: np.mean([r["correct"] for r in rows if r["condition"] == c]) for c in ("abstainer", "reader")}
    assert overall["abstainer"] > overall["reader"]
    # ...but the headline ranks it last.
    scores = {s.condition: s for s in condition_scores(rows, ["abstainer", "reader"], seed=1, boot=200)}
    assert scores["reader"].rank == 1 and scores["abstainer"].rank == 2
    assert scores["abstainer"].headline.value == 0.0
    assert scores["abstainer"].abstention_accuracy == 1.0 and scores["abstainer"].abstention_n == 30
    assert scores["reader"].answerable.n == 10 and scores["reader"].answerable_correct == 3
    assert [s.condition for s in by_rank(list(scores.values()))] == ["reader", "abstainer"]


def test_headline_weighs_strata_equally():
    rows = [obs("c", f"p{i}", 1, category="single-hop") for i in range(20)]
    rows += [obs("c", "m0", 0, category="multi-hop")]
    (score,) = condition_scores(rows, ["c"], seed=3, boot=200)
    assert score.headline.value == pytest.approx(0.5)
    assert score.answerable.value == pytest.approx(20 / 21)
    assert dict((s, (n, c)) for s, n, c in score.strata) == {"single-hop": (20, 20), "multi-hop": (1, 0)}
    assert "stratified" in score.headline.method and "probe" in score.headline.unit


def test_ties_share_a_rank_and_unjudged_are_left_out():
    rows = [obs("a", "p", 1), obs("b", "p", 1), obs("c", "p", 0), obs("c", "p2", None)]
    ranks = {s.condition: (s.rank, s.unjudged) for s in condition_scores(rows, ["a", "b", "c"], seed=0, boot=50)}
    assert ranks == {"a": (1, 0), "b": (1, 0), "c": (3, 1)}


def test_calibration_systems_are_never_ranked():
    rows = [obs("oracle", "p", 1), obs("null", "p", 0), obs("x", "p", 0)]
    scores = {s.condition: s for s in condition_scores(rows, ["oracle", "null", "x"], seed=0, boot=50,
                                                         systems={"oracle": "oracle", "null": "null", "x": "null"})}
    assert scores["oracle"].calibration and scores["oracle"].rank is None
    assert scores["null"].rank == 1 and scores["x"].rank == 1
    assert by_rank(list(scores.values()))[-1].condition == "oracle"


def test_no_answerable_probes_gives_no_rank():
    (score,) = condition_scores([obs("a", "p", 1, abstain=True)], ["a"], seed=0, boot=50)
    assert math.isnan(score.headline.value) and score.rank is None


def test_stratum_and_expectation_helpers():
    assert stratum({"category": "temporal", "kind": "current"}) == "temporal"
    assert stratum({"category": None, "kind": "historical"}) == "historical"
    assert expects_abstention({"expected": ABSTAIN}) and not expects_abstention({"expected": ANSWER})


def test_stratified_cluster_mean_keeps_every_stratum():
    values = [1.0] * 6 + [0.0, 0.0]
    clusters = ["a", "a", "b", "b", "c", "c", "d", "e"]
    strata = ["s"] * 6 + ["t", "t"]
    est = stats.stratified_cluster_mean(values, clusters, strata, np.random.default_rng(0), b=300)
    assert est.value == pytest.approx(0.5)
    # Stratum s is always 1 and t always 0 in every replicate: the interval cannot move.
    assert est.interval == pytest.approx((0.5, 0.5))
    assert est.clusters == 5 and est.n == 8


@pytest.mark.parametrize("field", ["name", "system"])
def test_a_campaign_cannot_name_a_calibration_system(example, field):
    from lsrep.runner import run_campaign

    text = example.read_text()
    old = 'name = "null"\nsystem = "null"'
    assert old in text
    new = 'name = "oracle"\nsystem = "null"' if field == "name" else 'name = "null"\nsystem = "oracle"'
    example.write_text(text.replace(old, new))
    with pytest.raises(ConfigError, match="calibration systems"):
        run_campaign(example, store_path=example.parent / "x.sqlite")
    assert not (example.parent / "x.sqlite").exists()
    assert set(CALIBRATION_SYSTEMS) == {"oracle", "oracle-stale", "oracle-future"}
