"""The deterministic judge's row of an observation, memoised per unit by what the verdict reads.

A probe's question comes back at every checkpoint, and its answer often does too (LoCoMo conv-26
under vector-RAG: 1,932 observations, 305 distinct (answer, expectation) pairs). The verdict is
a function of the judge's version and the row's question, answer, kind, category and expectation
(`verdict_key`); the engine keeps one memo per unit. Only the deterministic judge is memoised
here: model judges run on stored rows afterwards (`lsrep.judge.campaign`) and are never cached here.
"""

from __future__ import annotations

from typing import Any

from lsrep.judge.deterministic import judge_deterministic

VERDICT_MEMO_LIMIT = 50_000
"""Verdicts a unit's memo holds before it is emptied (`deterministic_judgement`)."""


def deterministic_judgement(row: dict[str, Any], memo: dict[tuple, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The deterministic judge's row for an observation row (which carries its expectation).

    `memo` (one unit's, dropped with it): the verdict by `verdict_key`, everything it is a function
    of (the same answer to the same probe comes back checkpoint after checkpoint). Only the
    deterministic judge is memoised; model judges are not (`lsrep.judge.campaign`)."""
    from lsrep.judge.deterministic import DETERMINISTIC_JUDGE, DETERMINISTIC_VERSION

    base = {
        "obs_id": row["obs_id"], "judge": DETERMINISTIC_JUDGE, "run_id": row["run_id"],
        "judge_version": DETERMINISTIC_VERSION, "prompt_digest": None, "passes": None, "agreement": None,
        "rationale": None, "rubric": None, "status": "ok", "error": None,
    }
    if row["status"] == "error" or row["answer"] is None:
        return {**base, "outcome": "error", "correct": 0, "exact": 0, "f1": None}
    if memo is None:
        return {**base, **_verdict(row)}
    key = verdict_key(row)
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= VERDICT_MEMO_LIMIT:
            memo.clear()
        hit = memo[key] = _verdict(row)
    return {**base, **hit}


def verdict_key(row: dict[str, Any]) -> tuple:
    """What the deterministic verdict of an observation row reads: the judge's version, and every field
    of the row `case_from_row` takes but the simulated now (`sim_time`), which the judge does not read
    (tests/core/test_verdict_memo.py checks both)."""
    from lsrep.judge.deterministic import DETERMINISTIC_VERSION

    return (DETERMINISTIC_VERSION, row["question"], row["answer"], row["kind"], row["category"], row["expected"])


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    from lsrep.judge.campaign import case_from_row
    from lsrep.judge.deterministic import best_f1, exact_match

    case = case_from_row(row)
    verdict = judge_deterministic(case)
    return {"outcome": verdict.outcome, "correct": int(verdict.correct),
            "exact": int(exact_match(case.answer, case.in_force)), "f1": best_f1(case.answer, case.in_force)}
