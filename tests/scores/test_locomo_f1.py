"""LoCoMo's official QA metric, from its published definition (snap-research/LoCoMo task_eval/evaluation.py)."""

from __future__ import annotations

import pytest

from lsrep.judge import locomo_f1 as lf


def test_normalisation_drops_commas_punctuation_and_articles():
    assert lf.normalize_answer("The cat, and a Dog!") == "cat dog"
    assert lf.normalize_answer("7 May, 2023.") == "7 may 2023"
    # Articles go only as whole words.
    assert lf.normalize_answer("Theatre and anthem") == "theatre anthem"


@pytest.mark.parametrize(("word", "stem"), [
    ("running", "run"), ("caresses", "caress"), ("ponies", "poni"), ("painted", "paint"),
    ("generously", "gener"), ("hiking", "hike"), ("adoption", "adopt"), ("sunsets", "sunset"),
])
def test_tokens_are_porter_stemmed(word, stem):
    assert lf.tokens(word) == [stem]


def test_token_f1():
    assert lf.token_f1("painting sunsets", "painted a sunset") == 1.0
    assert lf.token_f1("Paris", "London") == 0.0
    # 1 shared of 2 predicted and 1 reference token: P = .5, R = 1, F1 = 2/3.
    assert lf.token_f1("in Paris", "Paris") == pytest.approx(2 / 3)
    assert lf.token_f1("", "Paris") == 0.0


def test_category_rules():
    # Multi-hop: split on commas; mean over reference parts of the best prediction part.
    assert lf.score("pottery, camping", "camping, pottery, painting", "multi-hop") == pytest.approx(2 / 3)
    assert lf.score("pottery camping", "camping, pottery", 1) == pytest.approx(2 / 3)
    # Open-domain: the reference is cut at its first `;`.
    assert lf.score("counseling", "counseling; she wants to help people", "open-domain") == 1.0
    assert lf.score("counseling", "counseling; she wants to help people", "single-hop") < 1.0
    # Temporal and single-hop: plain F1, no comma splitting.
    assert lf.score("7 May 2023", "7 May, 2023", "temporal") == 1.0
    # Adversarial: credit only for the two official phrases.
    assert lf.score("No information available about that.", "", "adversarial") == 1.0
    assert lf.score("It is not mentioned in the conversation", "", 5) == 1.0
    assert lf.score("I don't know", "", "adversarial") == 0.0
    assert lf.score(None, "Paris", "single-hop") == 0.0
    with pytest.raises(ValueError, match="not a LoCoMo category"):
        lf.score("x", "y", "current")


def test_evidence_recall():
    assert lf.evidence_recall(["D1:3", "D2:5"], ["D2:5", "D9:1"]) == 0.5
    assert lf.evidence_recall([], ["D1:1"]) == 1.0
    assert lf.evidence_recall(["D1:3"], []) == 0.0
