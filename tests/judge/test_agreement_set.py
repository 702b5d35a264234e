"""The deterministic judge agrees with the hand-labelled set, and the set is what it claims to be."""

from __future__ import annotations

from collections import Counter

import pytest

from lsrep.errors import InputError
from lsrep.judge.agreement_set import load_items, measure
from lsrep.judge.verdict import Verdict


def test_set_is_large_and_covers_every_label_and_family():
    items = load_items()
    assert len(items) >= 300
    assert len({i.item_id for i in items}) == len(items)
    labels = Counter(i.label for i in items)
    assert {"correct", "stale", "future", "abstained", "wrong"} <= labels.keys()
    assert labels["wrong"] >= 80  # hard negatives, not a set of easy positives
    families = Counter(i.family for i in items)
    assert {"date", "number", "duration", "alternatives", "list", "abstention", "revision", "person", "text",
            "yesno", "span"} <= families.keys()


def test_deterministic_judge_agrees_with_people():
    result = measure()
    assert result.n >= 300
    assert result.rate >= 0.97, [(d.item_id, d.answer, d.human, d.judge) for d in result.disagreements]
    assert result.agreed == result.n - len(result.disagreements)


def test_measure_takes_any_judge_and_a_judge_that_always_abstains_fails():
    result = measure(lambda case: Verdict(outcome="abstained", correct=case.expect_abstain))
    assert result.rate < 0.2
    assert len(result.disagreements) == result.n - result.agreed


def test_bad_set_names_file_and_line(tmp_path):
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(InputError, match=r"set.jsonl:1: missing keys"):
        load_items(bad)
