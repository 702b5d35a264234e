"""Judges against scripted replies from the real test server."""

from __future__ import annotations

import json
import re

import pytest

from lsrep.judge.model import (
    EvolvingReferenceJudge,
    JudgeError,
    LongMemEvalJudge,
    MultiPassJudge,
    majority,
    says_unknown,
)
from lsrep.judge.verdict import JudgeCase, VersionView
from lsrep.llm.client import LLMClient
from lsrep.llm.server import Fault
from lsrep.prompts import (
    JUDGE_EVOLVING_REPAIR,
    LME_ABSTENTION,
    LME_DEFAULT,
    LME_KNOWLEDGE_UPDATE,
    LME_PREFERENCE,
    LME_TEMPORAL,
)

SQLITE = VersionView(answer="SQLite", valid_from="t3", valid_until="t42")
POSTGRES = VersionView(answer="PostgreSQL", aliases=("Postgres",), valid_from="t42")


def db_case(answer: str, *, after_migration: bool) -> JudgeCase:
    if after_migration:
        return JudgeCase(question="Which database does the project use?", answer=answer,
                         kind="current", expect_abstain=False, in_force=(POSTGRES,),
                         superseded=(SQLITE,), now="2026-04-01T00:00:00+00:00")
    return JudgeCase(question="Which database does the project use?", answer=answer,
                     kind="current", expect_abstain=False, in_force=(SQLITE,), later=(POSTGRES,),
                     now="2026-03-05T00:00:00+00:00")


def _section(prompt: str, title: str) -> list[str]:
    block = prompt.split(title, 1)[1].split("\n\n", 1)[0]
    return [line.split(". ", 1)[1].split(" (also")[0] for line in block.strip().splitlines()
            if ". " in line]


def protocol_judge(request) -> str:
    """A deterministic judge model: labels by string matching the sections of the prompt."""
    prompt = request.last_user
    answer = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0].lower()
    if says_unknown(answer):
        label, rubric = "abstained", 1
    elif any(v.lower() in answer for v in _section(prompt, "in force at that time:\n")):
        label, rubric = "correct", 5
    elif any(v.lower() in answer for v in _section(prompt, "no longer true):\n")):
        label, rubric = "stale", 1
    elif any(v.lower() in answer for v in _section(prompt, "not yet true at that time):\n")):
        label, rubric = "future", 1
    else:
        label, rubric = "wrong", 1
    return json.dumps({"label": label, "rubric": rubric, "rationale": f"matched {label}"})


@pytest.fixture
def judge_client(server, spec_for):
    return LLMClient(spec_for(server))


# -- evolving-reference judge ------------------------------------------------------------
@pytest.mark.parametrize(
    ("answer", "after", "outcome", "correct"),
    [
        ("SQLite", False, "correct", True),
        ("PostgreSQL", False, "future", False),
        ("PostgreSQL", True, "correct", True),
        ("It uses SQLite.", True, "stale", False),
        ("MongoDB", True, "wrong", False),
        ("I don't know", True, "abstained", False),
    ],
)
def test_evolving_judge_worked_example(server, judge_client, answer, after, outcome, correct):
    server.reply = protocol_judge
    verdict = EvolvingReferenceJudge(judge_client).judge(db_case(answer, after_migration=after))
    assert (verdict.outcome, verdict.correct) == (outcome, correct)
    assert verdict.rubric in (1, 5) and verdict.rationale == f"matched {outcome}"


def test_abstention_credit_when_expected(server, judge_client):
    server.reply = protocol_judge
    case = JudgeCase(question="What is Ana's dog called?", answer="I don't know",
                     kind="abstention", expect_abstain=True)
    verdict = EvolvingReferenceJudge(judge_client).judge(case)
    assert verdict.outcome == "abstained" and verdict.correct


def test_evolving_prompt_shows_versions_by_status(server, judge_client):
    server.reply = protocol_judge
    EvolvingReferenceJudge(judge_client).judge(db_case("x", after_migration=True))
    prompt = server.requests[0].last_user
    assert "1. PostgreSQL (also accepted: Postgres)" in prompt
    assert "no longer true):\n1. SQLite" in prompt
    assert "not yet true at that time):\n(none)" in prompt
    assert "2026-04-01" in prompt
    assert server.requests[0].messages[0]["role"] == "system"


def test_fenced_and_wordy_json_is_read(server, judge_client):
    server.enqueue_replies('Verdict:\n```json\n{"label": "Correct", "rubric": 4, '
                           '"rationale": "ok", "extra": 1}\n```')
    judgement = EvolvingReferenceJudge(judge_client).assess(db_case("SQLite", after_migration=False))
    assert judgement.verdict.outcome == "correct" and judgement.verdict.rubric == 4
    assert len(judgement.records) == 1 and judgement.records[0].purpose == "judge"


@pytest.mark.parametrize(
    "bad",
    ["not json at all", '{"label": "maybe", "rubric": 3, "rationale": "x"}',
     '{"label": "correct", "rubric": 9, "rationale": "x"}',
     '{"label": "correct", "rubric": "4", "rationale": "x"}',
     '{"label": "correct", "rationale": "no rubric"}', '{"label": "correct", '],
)
def test_unreadable_output_is_retried_then_fails(server, judge_client, bad):
    server.reply = bad
    judge = EvolvingReferenceJudge(judge_client, max_parse_retries=2)
    with pytest.raises(JudgeError) as err:
        judge.assess(db_case("SQLite", after_migration=False))
    assert err.value.reason == "unparseable_judge_output"
    assert len(err.value.records) == 3 and err.value.raw == (bad,) * 3
    assert server.request_count == 3


def test_retry_sends_repair_message_and_recovers(server, judge_client):
    server.enqueue_replies("garbage", '{"label": "stale", "rubric": 2, "rationale": "old"}')
    judgement = EvolvingReferenceJudge(judge_client).assess(db_case("SQLite", after_migration=True))
    assert judgement.verdict.outcome == "stale" and judgement.raw[0] == "garbage"
    second = server.requests[1].messages
    assert second[-2] == {"role": "assistant", "content": "garbage"}
    assert second[-1]["content"].startswith(JUDGE_EVOLVING_REPAIR.user.split("(")[0])
    assert judgement.records[0].request_digest != judgement.records[1].request_digest


def test_endpoint_failure_raises_with_records(server, spec_for):
    server.enqueue_faults(Fault.http(500), Fault.http(500))
    judge = EvolvingReferenceJudge(LLMClient(spec_for(server, max_retries=1)))
    with pytest.raises(JudgeError) as err:
        judge.judge(db_case("SQLite", after_migration=False))
    assert err.value.reason == "judge_call_failed"
    assert err.value.records[0].faults == ("500", "500")


def test_judge_identity(judge_client):
    judge = EvolvingReferenceJudge(judge_client)
    assert judge.name == "evolving-reference" and judge.version == "1"
    assert len(judge.prompt_digest) == 64
    identity = judge.identity()
    assert identity["templates"] == {"lsrep.judge.evolving": "1",
                                     "lsrep.judge.evolving.repair": "1"}
    assert identity["endpoint"]["model"] == "test-model"
    panel = MultiPassJudge([judge, LongMemEvalJudge(judge_client)], passes=3)
    assert [j["name"] for j in panel.identity()["judges"]] == ["evolving-reference", "longmemeval"]
    assert panel.prompt_digest != judge.prompt_digest


# -- LongMemEval judge ---------------------------------------------------------------------
def _days(text: str) -> int | None:
    match = re.search(r"(\d+)\s+days", text)
    return int(match.group(1)) if match else None


def lme_model(request) -> str:
    """A scripted yes/no judge that applies only the rules its prompt states."""
    prompt = request.last_user
    response = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0].lower()
    if "cannot be answered from the conversation history" in prompt:
        return "Yes" if "don't know" in response or "not mentioned" in response else "No."
    reference = re.search(r"(?:Correct answer|personalised response): (.*)", prompt).group(1)
    if "Rubric" in prompt:
        return "yes" if "hiking" in response else "no"
    want, got = _days(reference.lower()), _days(response)
    if want is not None and got is not None:
        tolerance = 1 if "off-by-one" in prompt else 0
        return "yes" if abs(want - got) <= tolerance else "no"
    if "value it gives as the current one" in prompt:
        current = response.rsplit("now", 1)[-1]
        return "yes" if reference.lower() in current else "no"
    return "yes" if reference.lower() in response else "no"


def lme_case(answer: str, category: str, reference: str | None = "18 days",
             *, abstain: bool = False) -> JudgeCase:
    versions = (VersionView(answer=reference, valid_from="t1"),) if reference else ()
    return JudgeCase(question="q?", answer=answer, kind="abstention" if abstain else "current",
                     category=category, expect_abstain=abstain, in_force=versions)


@pytest.mark.parametrize(
    ("case", "outcome", "correct", "template"),
    [
        (lme_case("It took 19 days.", "temporal-reasoning"), "correct", True, LME_TEMPORAL),
        (lme_case("It took 20 days.", "temporal-reasoning"), "wrong", False, LME_TEMPORAL),
        (lme_case("It took 19 days.", "multi-session"), "wrong", False, LME_DEFAULT),
        (lme_case("It took 18 days.", "single-session-user"), "correct", True, LME_DEFAULT),
        (lme_case("You used SQLite before, but now PostgreSQL", "knowledge-update",
                  "PostgreSQL"), "correct", True, LME_KNOWLEDGE_UPDATE),
        (lme_case("You used PostgreSQL before, but now SQLite", "knowledge-update",
                  "PostgreSQL"), "wrong", False, LME_KNOWLEDGE_UPDATE),
        (lme_case("Try a hiking trip near your home", "single-session-preference",
                  "The user likes hiking outdoors"), "correct", True, LME_PREFERENCE),
        (lme_case("Try a museum", "single-session-preference",
                  "The user likes hiking outdoors"), "wrong", False, LME_PREFERENCE),
        (lme_case("I don't know", "temporal-reasoning", None, abstain=True),
         "abstained", True, LME_ABSTENTION),
        (lme_case("It was 12 days", "temporal-reasoning_abs", None, abstain=True),
         "wrong", False, LME_ABSTENTION),
        (lme_case("I don't know.", "multi-session"), "abstained", False, LME_DEFAULT),
    ],
)
def test_longmemeval_semantics(server, judge_client, case, outcome, correct, template):
    server.reply = lme_model
    judge = LongMemEvalJudge(judge_client)
    verdict = judge.judge(case)
    assert (verdict.outcome, verdict.correct) == (outcome, correct)
    assert verdict.rubric is None
    assert judge.template_for(case) is template
    assert server.requests[0].messages[0]["content"] == template.system


def test_longmemeval_abstention_reference_defaults(server, judge_client):
    server.reply = lme_model
    LongMemEvalJudge(judge_client).judge(lme_case("I don't know", "multi-session", None,
                                                  abstain=True))
    assert "does not contain this information" in server.requests[0].last_user


def test_longmemeval_yes_no_parsing_retries(server, judge_client):
    server.enqueue_replies("Perhaps, it depends.", "Yes.")
    judgement = LongMemEvalJudge(judge_client).assess(lme_case("18 days", "multi-session"))
    assert judgement.verdict.outcome == "correct" and len(judgement.records) == 2
    server.reply = "The answer is yes."
    assert LongMemEvalJudge(judge_client).judge(lme_case("18 days", "multi-session")).correct
    for ambiguous in ("yes or no", "No, yes."):
        server.reply = ambiguous  # never guessed
        with pytest.raises(JudgeError):
            LongMemEvalJudge(judge_client).judge(lme_case("17 days", "multi-session"))


def test_longmemeval_needs_a_reference(judge_client):
    with pytest.raises(JudgeError) as err:
        LongMemEvalJudge(judge_client).judge(lme_case("x", "multi-session", None))
    assert err.value.reason == "no_reference"


# -- panels ------------------------------------------------------------------------------
def by_seed(labels: dict[int, str]):
    def reply(request) -> str:
        label = labels[request.body["seed"]]
        if label == "garbage":
            return "garbage"
        return json.dumps({"label": label, "rubric": 5 if label == "correct" else 2,
                           "rationale": label})
    return reply


def test_panel_majority_with_per_pass_labels(server, spec_for):
    server.reply = by_seed({0: "correct", 1: "stale", 2: "correct"})
    client = LLMClient(spec_for(server, temperature=0.7, seed=0))
    panel = MultiPassJudge([EvolvingReferenceJudge(client)], passes=3)
    judgement = panel.assess(db_case("SQLite", after_migration=False))
    assert [p.outcome for p in judgement.passes] == ["correct", "stale", "correct"]
    assert [p.pass_index for p in judgement.passes] == [0, 1, 2]
    assert judgement.verdict.outcome == "correct" and judgement.verdict.correct
    assert judgement.verdict.rubric == 5  # median_low of (5, 2, 5)
    assert judgement.agreement == pytest.approx(2 / 3)
    assert len(judgement.records) == 3 and server.request_count == 3
    assert panel.name == "panel[evolving-reference@1]x3"


def test_panel_keeps_failed_passes_out_of_the_vote(server, spec_for):
    server.reply = by_seed({0: "wrong", 1: "garbage", 2: "wrong"})
    client = LLMClient(spec_for(server, temperature=0.7, seed=0))
    judge = EvolvingReferenceJudge(client, max_parse_retries=0)
    judgement = MultiPassJudge([judge], passes=3).assess(db_case("x", after_migration=False))
    assert [p.outcome for p in judgement.passes] == ["wrong", "error", "wrong"]
    assert "unparseable_judge_output" in (judgement.passes[1].error or "")
    assert judgement.verdict.outcome == "wrong" and judgement.agreement == 1.0
    server.reply = by_seed({0: "garbage", 1: "garbage", 2: "wrong"})
    with pytest.raises(JudgeError) as err:
        MultiPassJudge([judge], passes=3).assess(db_case("y", after_migration=False))
    assert err.value.reason == "too_few_valid_passes"


def test_panel_of_two_judges_tie_goes_to_least_credit(server, judge_client):
    def reply(request) -> str:
        if "JSON" in request.messages[0]["content"]:
            return '{"label": "correct", "rubric": 5, "rationale": "ok"}'
        return "no"

    server.reply = reply
    panel = MultiPassJudge([EvolvingReferenceJudge(judge_client), LongMemEvalJudge(judge_client)],
                           passes=1, min_valid=2)
    judgement = panel.assess(db_case("SQLite", after_migration=False))
    assert [(p.judge, p.outcome) for p in judgement.passes] == [
        ("evolving-reference", "correct"), ("longmemeval", "wrong")]
    assert judgement.verdict.outcome == "wrong" and not judgement.verdict.correct


def test_majority_tie_break_order():
    assert majority(["correct", "stale"]) == ("stale", 1)
    assert majority(["correct", "correct", "abstained"]) == ("correct", 2)
    assert majority(["future", "abstained", "future", "abstained"]) == ("future", 2)
