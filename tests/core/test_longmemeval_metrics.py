"""LongMemEval's metrics as LSREP computes them, against the official eval_utils.py on random rankings."""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest

from lsrep.longmemeval_metrics import KS, qa_metrics, rank_corpus, retrieval_metrics, turn_corpus_id


@pytest.fixture
def official(shared):
    path = shared / "reference" / "longmemeval-eval" / "eval_utils.py"
    if not path.exists():
        pytest.skip("official eval_utils.py not found")
    if not hasattr(np, "asfarray"):  # removed in numpy 2; the official code still calls it
        np.asfarray = lambda a: np.asarray(a, dtype=float)
    spec = importlib.util.spec_from_file_location("official_eval_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _corpus(rng: random.Random) -> list[str]:
    ids = []
    for s in range(rng.randint(1, 14)):
        sid = f"answer_q{s}_{s}" if rng.random() < 0.3 else f"sharegpt_x{s}_{s}"
        for i in range(0, rng.randint(1, 12), 2):  # user turns at even indices
            ids.append(turn_corpus_id(sid, i, rng.random() < 0.4))
    return ids


def test_retrieval_metrics_equal_the_official_definitions(official):
    rng = random.Random(11)
    for _ in range(400):
        corpus = _corpus(rng)
        rankings = rng.sample(range(len(corpus)), rng.randint(0, len(corpus)))
        correct = list({c for c in corpus if "answer" in c})
        got = retrieval_metrics(rankings, corpus)
        for k in KS:
            for level, fn in (("turn", official.evaluate_retrieval), ("session", official.evaluate_retrieval_turn2session)):
                any_, all_, ndcg = fn(rankings, correct, corpus, k=k)
                assert got[level][f"recall_any@{k}"] == any_
                assert got[level][f"recall_all@{k}"] == all_
                assert got[level][f"ndcg_any@{k}"] == pytest.approx(float(ndcg), abs=1e-12)


def test_corpus_ids_and_context_ranking():
    assert turn_corpus_id("answer_4be1b6b4_2", 4, True) == "answer_4be1b6b4_2_5"
    assert turn_corpus_id("answer_4be1b6b4_2", 0, False) == "noans_4be1b6b4_2_1"
    assert turn_corpus_id("sharegpt_answer_7", 2, False) == "sharegpt_noans_7_3"
    assert turn_corpus_id("answer_answer_7", 2, False) == "noans_noans_7_3"  # every occurrence, as official
    assert turn_corpus_id("ultrachat_123", 2, False) == "ultrachat_123_3"
    position = {"s1:t0": 0, "s1:t2": 1, "s2:t0": 2}
    # Fragment order, first mention wins, assistant turns (not in the corpus) skipped.
    assert rank_corpus([["s2:t0"], ["s1:t1", "s1:t2", "s2:t0"], ["s1:t0"]], position) == [2, 1, 0]


def test_qa_metrics_follow_print_qa_metrics():
    labels = [("a", "single-session-user", True), ("b_abs", "single-session-user", False),
              ("c", "multi-session", True), ("d", "temporal-reasoning", False),
              ("e", "knowledge-update", True), ("f", "single-session-preference", True),
              ("g_abs", "single-session-assistant", True)]
    m = qa_metrics(labels)
    assert m["per_type"]["single-session-user"] == {"accuracy": 0.5, "n": 2}
    assert m["overall"] == 5 / 7
    assert m["task_averaged"] == pytest.approx(np.mean([0.5, 1, 1, 0, 1, 1]))
    assert m["abstention"] == {"accuracy": 0.5, "n": 2}
    # A type with no question: no task average (the official script prints nan).
    assert qa_metrics(labels[:3])["task_averaged"] is None
