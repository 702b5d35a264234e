"""The deterministic judge: the outcome label (protocol section 4), exact match and token-F1.

Whether an answer gives a reference version is decided by
:func:`lsrep.judge.normalize.gives` (whole-token span after normalisation, dates
as days, durations, "X or Y", lists in any order, yes/no, content words in a short
window); abstention by :func:`lsrep.judge.normalize.is_abstention`. v6: a reference that is a list
(:mod:`lsrep.judge.lists`) is given only when every item is, in any order; extra items are allowed,
and a superseded value among them is judged by the revision rules below (a hedge unless marked past).
v7 (:mod:`lsrep.judge.negation`): a value the answer denies ("She never tried pottery", "no longer in
Boston") is not given, whether it is the current, a superseded or a later version.

Labels, in order:

- an answer giving a version that only becomes true later is `future`, even when it
  also gives the current one (knowing the later value is the leak suspicion) — unless a
  superseded version already gave that value ("Leeds" again after Krakow): a value said
  before proves no leak, so it counts as the superseded one;
- an answer giving the current version and a superseded one is a **hedge** and
  `wrong`, unless it marks the old value as past without wavering ("moved from
  Paris to Berlin", "used to be Paris, now Berlin"): then it is `correct`
  (:func:`lsrep.judge.normalize.is_hedge`). A superseded value that the current
  reference itself contains ("engineer" inside "senior engineer", "June 2023"
  around "7 June 2023") does not count as given;
- the current version alone: `correct`; a superseded one alone: `stale`;
- an abstention phrase: `abstained` (credited where abstention was expected);
- anything else: `wrong`.
"""

from __future__ import annotations

from collections import Counter

from lsrep.judge.normalize import ABSTAIN_PATTERNS, gives, is_abstention, is_hedge
from lsrep.judge.verdict import JudgeCase, Verdict, VersionView

__all__ = ["ABSTAIN_PATTERNS", "DETERMINISTIC_JUDGE", "DETERMINISTIC_VERSION", "is_abstention",
           "judge_deterministic", "mentions"]

DETERMINISTIC_JUDGE = "deterministic"
DETERMINISTIC_VERSION = "7"


def normalise(text: str) -> str:
    from lsrep.text import normalise_answer

    return normalise_answer(text)


def _candidates(version: VersionView) -> tuple[str, ...]:
    return (version.answer, *version.aliases)


def mentions(answer: str, version: VersionView, question: str = "") -> bool:
    """The answer gives this version (its answer or an alias); the question resolves "her X"."""
    return any(gives(answer, c, question) for c in _candidates(version))


def _implied(version: VersionView, by: tuple[VersionView, ...]) -> bool:
    """Giving one of `by` already gives `version` (its text is inside theirs)."""
    return any(gives(c, o) for v in by for c in _candidates(v) for o in _candidates(version))


def _gives_other(answer: str, others: tuple[VersionView, ...], current: tuple[VersionView, ...],
                 gives_current: bool, question: str) -> bool:
    return any(mentions(answer, v, question) and not (gives_current and _implied(v, current)) for v in others)


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
    """Label an answer against the versions in force, superseded and later (rules: module docstring)."""
    answer = case.answer
    current = case.in_force
    if case.kind == "evolution" and current and not case.expect_abstain:
        gives_current = _in_order(answer, current)
    else:
        gives_current = any(mentions(answer, v, case.question) for v in current)
    later = tuple(v for v in case.later if not _implied(v, case.superseded))
    gives_future = _gives_other(answer, later, current, gives_current, case.question)
    gives_stale = _gives_other(answer, case.superseded, current, gives_current, case.question)
    if case.kind == "evolution" and not gives_current and not case.expect_abstain:
        gives_stale = gives_stale or any(mentions(answer, v, case.question) for v in current[:-1])

    if gives_future:
        return Verdict(outcome="future", correct=False)
    if gives_current and not case.expect_abstain:
        if gives_stale and is_hedge(answer):
            return Verdict(outcome="wrong", correct=False)
        return Verdict(outcome="correct", correct=True)
    if gives_stale:
        return Verdict(outcome="stale", correct=False)
    if is_abstention(answer):
        return Verdict(outcome="abstained", correct=case.expect_abstain)
    return Verdict(outcome="wrong", correct=False)


def _in_order(answer: str, versions: tuple[VersionView, ...]) -> bool:
    """Every version given, each first given after the previous one (evolution probes)."""
    norm = f" {normalise(answer)} "
    pos = 0
    for v in versions:
        found = [norm.find(f" {normalise(c)} ", pos) for c in _candidates(v)]
        found = [f for f in found if f >= 0]
        if not found:
            return False
        pos = min(found) + 1
    return True
