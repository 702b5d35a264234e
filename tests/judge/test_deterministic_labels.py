"""The deterministic judge's outcome labels: stale, future, hedges, abstention (protocol section 4)."""

from __future__ import annotations

from lsrep.judge.deterministic import judge_deterministic
from lsrep.judge.verdict import JudgeCase, VersionView


def _case(answer, current=("Porto",), old=("Lisbon",), later=(), expect_abstain=False, kind="current"):
    views = lambda xs, p: tuple(VersionView(answer=x, valid_from=f"{p}{i}") for i, x in enumerate(xs))  # noqa: E731
    return JudgeCase(question="Where does Ana live?", answer=answer, kind=kind, expect_abstain=expect_abstain,
                     in_force=views(current, "c"), superseded=views(old, "s"), later=views(later, "l"))


def label(*args, **kwargs) -> str:
    return judge_deterministic(_case(*args, **kwargs)).outcome


def test_current_stale_and_future():
    assert label("She lives in Porto.") == "correct"
    assert label("She lives in Lisbon.") == "stale"
    assert label("Munich", later=("Munich",)) == "future"


def test_hedge_with_old_and_new_value_is_wrong():
    for answer in ("Lisbon or Porto", "Porto, or maybe Lisbon", "Lisbon, Porto", "Either Lisbon or Porto"):
        assert label(answer) == "wrong", answer


def test_old_value_marked_as_past_is_not_a_hedge():
    for answer in ("She moved from Lisbon to Porto.", "She used to live in Lisbon but now lives in Porto.",
                   "Porto (previously Lisbon)"):
        assert label(answer) == "correct", answer


def test_current_with_later_value_is_future():
    assert label("Porto or Munich", later=("Munich",)) == "future"


def test_superseded_value_inside_the_current_one_does_not_count():
    assert label("senior engineer", current=("senior engineer",), old=("engineer",)) == "correct"
    assert label("19 March 2026", current=("19 March 2026",), old=("March 2026",)) == "correct"


def test_abstention_credited_only_where_expected():
    verdict = judge_deterministic(_case("I don't have any information about that.", current=(), old=(),
                                        expect_abstain=True, kind="abstention"))
    assert (verdict.outcome, verdict.correct) == ("abstained", True)
    verdict = judge_deterministic(_case("Ana has never mentioned where she lives."))
    assert (verdict.outcome, verdict.correct) == ("abstained", False)
    assert label("Porto", current=(), old=(), expect_abstain=True, kind="abstention") == "wrong"
