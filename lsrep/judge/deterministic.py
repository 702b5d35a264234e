"""The deterministic judge: exact/alias match, token-F1 and the outcome label (protocol section 4).

Matching is lenient in one documented way: a reference counts as given when its
normalised text appears as a whole-token span inside the normalised answer,
because extractive and short model answers embed it in a sentence.
"""

from __future__ import annotations

import re
from collections import Counter

from lsrep.judge.verdict import JudgeCase, Verdict, VersionView

ABSTAIN_PATTERNS = re.compile(
    r"(^$|i don.?t know|not (known|mentioned|stated|specified|provided|available|in the)|"
    r"no (information|mention|record|memory)|cannot (answer|determine|tell)|can.?t (answer|determine|tell)|"
    r"unknown|unanswerable|not enough information)",
    re.IGNORECASE,
)

DETERMINISTIC_JUDGE = "deterministic"
DETERMINISTIC_VERSION = "1"


def normalise(text: str) -> str:
    from lsrep.text import normalise_answer

    return normalise_answer(text)


def is_abstention(answer: str) -> bool:
    return bool(ABSTAIN_PATTERNS.search(answer.strip()))


def mentions(answer: str, version: VersionView) -> bool:
    """The answer gives this version (exact or alias, as a whole-token span)."""
    norm = f" {normalise(answer)} "
    for cand in (version.answer, *version.aliases):
        ref = normalise(cand)
        if ref and f" {ref} " in norm:
            return True
    return False


def exact_match(answer: str, versions: tuple[VersionView, ...]) -> bool:
    norm = normalise(answer)
    return any(norm == normalise(c) for v in versions for c in (v.answer, *v.aliases))


def token_f1(answer: str, reference: str) -> float:
    pred, gold = normalise(answer).split(), normalise(reference).split()
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_f1(answer: str, versions: tuple[VersionView, ...]) -> float:
    if not versions:
        return 0.0
    return max(token_f1(answer, c) for v in versions for c in (v.answer, *v.aliases))


def judge_deterministic(case: JudgeCase) -> Verdict:
    """Label an answer against the versions in force, superseded and later."""
    answer = case.answer
    gives_current = any(mentions(answer, v) for v in case.in_force)
    gives_stale = any(mentions(answer, v) for v in case.superseded)
    gives_future = any(mentions(answer, v) for v in case.later)

    if case.kind == "evolution" and case.in_force and not case.expect_abstain:
        if _in_order(answer, case.in_force):
            return Verdict(outcome="correct", correct=True)
        gives_current = False
    if gives_current and not case.expect_abstain:
        return Verdict(outcome="correct", correct=True)
    if gives_future:
        return Verdict(outcome="future", correct=False)
    if gives_stale or (case.kind == "evolution" and any(mentions(answer, v) for v in case.in_force[:-1])):
        return Verdict(outcome="stale", correct=False)
    if is_abstention(answer):
        return Verdict(outcome="abstained", correct=case.expect_abstain)
    return Verdict(outcome="wrong", correct=False)


def _in_order(answer: str, versions: tuple[VersionView, ...]) -> bool:
    norm = f" {normalise(answer)} "
    pos = 0
    for v in versions:
        found = [norm.find(f" {normalise(c)} ", pos) for c in (v.answer, *v.aliases)]
        found = [f for f in found if f >= 0]
        if not found:
            return False
        pos = min(found) + 1
    return True
