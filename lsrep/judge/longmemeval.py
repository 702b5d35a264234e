"""LongMemEval's own answer check, as the official ``evaluate_qa.py`` runs it.

The `longmemeval` judge kind. Per question type it sends the official prompt text
byte for byte (one user message, no system message), with the official call
parameters (temperature 0, max_tokens 10), and reads the reply with the official
rule: the label is ``"yes" in reply.strip().lower()`` (so "Yes.", "yes, because"
and even "not yes" are yes). It never asks again: every reply gives a label.

The prompt texts below are the official ones (xiaowu0162/LongMemEval,
``src/evaluation/evaluate_qa.py``, ``get_anscheck_prompt``, MIT), kept as data so
the judge can be checked against the reference copy; the selection rule is
re-implemented here. A question is an abstention question when its id contains
``_abs`` (here: the case expects abstention, or its kind is ``abstention``); its
"correct answer" slot then holds the official explanation.
"""

from __future__ import annotations

import hashlib
from typing import Any

from lsrep.judge.model import JudgeError, ModelJudge, credit, says_unknown
from lsrep.judge.verdict import JudgeCase, Outcome, Verdict
from lsrep.llm.client import LLMClient

OFFICIAL_COMMIT = "9e0b455"
"""The official repository commit whose prompts these are."""
NO_EXPLANATION = "The conversation history does not contain this information."
"""The explanation shown for an abstention probe that has none (outside LongMemEval data)."""
TEMPERATURE = 0.0
MAX_TOKENS = 10

DEFAULT = (
    'I will give you a question, a correct answer, and a response from a model. '
    'Please answer yes if the response contains the correct answer. Otherwise, answer '
    'no. If the response is equivalent to the correct answer or contains all the '
    'intermediate steps to get the correct answer, you should also answer yes. If the '
    'response only contains a subset of the information required by the answer, '
    'answer no. \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model '
    'response correct? Answer yes or no only.'
)

TEMPORAL = (
    'I will give you a question, a correct answer, and a response from a model. '
    'Please answer yes if the response contains the correct answer. Otherwise, answer '
    'no. If the response is equivalent to the correct answer or contains all the '
    'intermediate steps to get the correct answer, you should also answer yes. If the '
    'response only contains a subset of the information required by the answer, '
    'answer no. In addition, do not penalize off-by-one errors for the number of '
    'days. If the question asks for the number of days/weeks/months, etc., and the '
    'model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), '
    "the model's response is still correct. \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel "
    'Response: {}\n\nIs the model response correct? Answer yes or no only.'
)

KNOWLEDGE_UPDATE = (
    'I will give you a question, a correct answer, and a response from a model. '
    'Please answer yes if the response contains the correct answer. Otherwise, answer '
    'no. If the response contains some previous information along with an updated '
    'answer, the response should be considered as correct as long as the updated '
    'answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel '
    'Response: {}\n\nIs the model response correct? Answer yes or no only.'
)

PREFERENCE = (
    'I will give you a question, a rubric for desired personalized response, and a '
    'response from a model. Please answer yes if the response satisfies the desired '
    'response. Otherwise, answer no. The model does not need to reflect all the '
    'points in the rubric. The response is correct as long as it recalls and utilizes '
    "the user's personal information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel "
    'Response: {}\n\nIs the model response correct? Answer yes or no only.'
)

ABSTENTION = (
    'I will give you an unanswerable question, an explanation, and a response from a '
    'model. Please answer yes if the model correctly identifies the question as '
    'unanswerable. The model could say that the information is incomplete, or some '
    'other information is given but the asked information is not.\n\nQuestion: {}\n\n'
    'Explanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the '
    'question as unanswerable? Answer yes or no only.'
)

TEMPLATES: dict[str, str] = {
    "single-session-user": DEFAULT,
    "single-session-assistant": DEFAULT,
    "multi-session": DEFAULT,
    "temporal-reasoning": TEMPORAL,
    "knowledge-update": KNOWLEDGE_UPDATE,
    "single-session-preference": PREFERENCE,
}
"""Question type -> official template (``{}`` slots: question, answer or rubric, response)."""


def official_prompt(question_type: str, question: str, answer: str, response: str,
                    abstention: bool = False) -> str:
    """The prompt `evaluate_qa.py` builds.

    A type LongMemEval does not have (an ordinary campaign's category, or none) gets the
    default template, which the official script would refuse (NotImplementedError); every
    question of a LongMemEval file has one of the six types.
    """
    if abstention:
        return ABSTENTION.format(question, answer, response)
    return TEMPLATES.get(question_type, DEFAULT).format(question, answer, response)


def official_label(reply: str) -> bool:
    """The official reading of a judge reply."""
    return "yes" in reply.strip().lower()


def official_endpoint(endpoint: Any) -> Any:
    """The endpoint with the official call parameters (temperature 0, max_tokens 10)."""
    return endpoint.model_copy(update={"temperature": TEMPERATURE, "max_tokens": MAX_TOKENS})


_DIGEST = hashlib.sha256("\x1e".join((DEFAULT, TEMPORAL, KNOWLEDGE_UPDATE, PREFERENCE,
                                       ABSTENTION)).encode()).hexdigest()


class OfficialLongMemEvalJudge(ModelJudge):
    """The official LongMemEval judge; the case's `category` is the question type.

    The "correct answer" shown is the version in force's `answer` (the file's answer
    text as given, "(or ...)" included); for abstention questions, the explanation.
    """

    name = "longmemeval"
    version = f"official-{OFFICIAL_COMMIT}"

    def __init__(self, client: LLMClient) -> None:
        spec = client.spec
        if spec.temperature != TEMPERATURE or spec.max_tokens != MAX_TOKENS:
            raise ValueError("the official LongMemEval judge calls with temperature 0 and max_tokens 10 "
                             "(build its client from official_endpoint(endpoint))")
        super().__init__(client, max_parse_retries=0)

    @property
    def prompt_digest(self) -> str:
        return _DIGEST

    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "prompt_digest": self.prompt_digest,
                "official_commit": OFFICIAL_COMMIT, "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS,
                "label_rule": "'yes' in reply.strip().lower()",
                "endpoint": self.client.spec.model_dump(mode="json")}

    @staticmethod
    def is_abstention(case: JudgeCase) -> bool:
        return case.expect_abstain or case.kind == "abstention"

    def messages(self, case: JudgeCase) -> list[dict[str, str]]:
        abstention = self.is_abstention(case)
        if case.in_force:
            # LongMemEval gives one answer; several versions in force (an evolution probe of an
            # ordinary campaign) are shown together.
            answer = "; ".join(v.answer for v in case.in_force)
        elif abstention:
            answer = NO_EXPLANATION  # an ordinary campaign's abstention probe carries no explanation
        else:
            raise JudgeError("no_reference", "the official LongMemEval judge needs the answer as the "
                             "version in force")
        prompt = official_prompt(case.category or "", case.question, answer, case.answer, abstention=abstention)
        return [{"role": "user", "content": prompt}]

    def read(self, case: JudgeCase, text: str) -> Verdict:
        yes = official_label(text)
        if self.is_abstention(case):
            outcome: Outcome = "abstained" if yes else "wrong"
        elif yes:
            outcome = "correct"
        else:
            outcome = "abstained" if says_unknown(case.answer) else "wrong"
        return Verdict(outcome=outcome, correct=credit(case, outcome), rationale=f"reply: {text.strip()[:40]}")
