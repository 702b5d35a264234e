"""Model-backed judges: `judge(case) -> Verdict`, with the calls that produced it.

A judge never guesses: output it cannot read is asked for again (with a short
repair message, so the retry is a distinct, cacheable request), and after
`max_parse_retries` it raises :class:`JudgeError` carrying every record.
`assess()` returns the verdict together with its records and raw outputs so the
harness can store judge provenance; `judge()` returns the verdict alone.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lsrep.judge.verdict import JudgeCase, Outcome, Verdict, VersionView
from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.config import EndpointSpec
from lsrep.llm.records import CallRecord
from lsrep.prompts import (
    JUDGE_EVOLVING,
    JUDGE_EVOLVING_REPAIR,
    LME_ABSTENTION,
    LME_DEFAULT,
    LME_KNOWLEDGE_UPDATE,
    LME_PREFERENCE,
    LME_REPAIR,
    LME_TEMPORAL,
    PromptTemplate,
    combined_digest,
)
from lsrep.text import normalise_answer


class JudgeError(RuntimeError):
    """A judge could not produce a verdict; nothing was guessed."""

    def __init__(self, reason: str, message: str, records: Sequence[CallRecord] = (),
                 raw: Sequence[str] = ()) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.records = tuple(records)
        self.raw = tuple(raw)


class PassLabel(BaseModel):
    """One pass of one judge inside a panel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    """Judge name."""
    pass_index: int
    """Repetition index of the pass."""
    outcome: Outcome
    """The pass's label (`error` when the pass failed)."""
    rubric: int | None = None
    """The pass's rubric score, if any."""
    error: str | None = None
    """Why the pass failed."""


class Judgement(BaseModel):
    """A verdict with its provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    judge: str
    """Judge name."""
    version: str
    """Judge version."""
    prompt_digest: str
    """Digest of the judge's prompt template(s)."""
    records: tuple[CallRecord, ...] = ()
    """Every model call, parse retries included."""
    raw: tuple[str, ...] = ()
    """Raw model outputs, in order."""
    passes: tuple[PassLabel, ...] = ()
    """Per-pass labels (panels only)."""
    agreement: float | None = None
    """Share of valid passes that agree with the majority (panels only)."""


class _Unparseable(Exception):
    pass


def credit(case: JudgeCase, outcome: Outcome) -> bool:
    """Credit rule of `Verdict.correct`: correct, or abstained where abstention was expected."""
    return outcome == "correct" or (outcome == "abstained" and case.expect_abstain)


class ModelJudge:
    """Shared call-parse-retry loop; subclasses pick the template and read the reply."""

    name: str = ""
    version: str = "1"
    repair: PromptTemplate

    def __init__(self, client: LLMClient, *, max_parse_retries: int = 2) -> None:
        self.client = client
        self.max_parse_retries = max_parse_retries

    @property
    def prompt_digest(self) -> str:
        return combined_digest(*(t.digest for t in self.templates()), self.repair.digest)

    def identity(self) -> dict[str, Any]:
        """What a run records to rebuild this judge (the key is never part of the spec)."""
        return {"name": self.name, "version": self.version, "prompt_digest": self.prompt_digest,
                "templates": {t.name: t.version for t in (*self.templates(), self.repair)},
                "max_parse_retries": self.max_parse_retries,
                "endpoint": self.client.spec.model_dump(mode="json")}

    def templates(self) -> tuple[PromptTemplate, ...]:
        raise NotImplementedError

    def messages(self, case: JudgeCase) -> list[dict[str, str]]:
        raise NotImplementedError

    def read(self, case: JudgeCase, text: str) -> Verdict:
        """Turn the model's text into a verdict, or raise _Unparseable(problem)."""
        raise NotImplementedError

    def judge(self, case: JudgeCase) -> Verdict:
        return self.assess(case).verdict

    def assess(self, case: JudgeCase, *, repetition: int = 0) -> Judgement:
        messages = self.messages(case)
        records: list[CallRecord] = []
        raw: list[str] = []
        problem = ""
        for _ in range(1 + self.max_parse_retries):
            text, record = self.client.complete(
                messages, purpose="judge", repetition=repetition, prompt_digest=self.prompt_digest
            )
            records.append(record)
            if text is None:
                raise JudgeError("judge_call_failed", record.error or "call failed", records, raw)
            raw.append(text)
            try:
                verdict = self.read(case, text)
            except _Unparseable as exc:
                # An unusable reply is never cached: a transient bad reply must not become permanent.
                self.client.forget(record)
                problem = str(exc)
                messages = [*messages, {"role": "assistant", "content": text},
                            *self.repair.render(problem=problem)]
                continue
            return Judgement(verdict=verdict, judge=self.name, version=self.version,
                             prompt_digest=self.prompt_digest, records=tuple(records),
                             raw=tuple(raw))
        raise JudgeError("unparseable_judge_output", problem, records, raw)


# -- (a) evolving references ---------------------------------------------------------------
class _EvolvingReply(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    label: Literal["correct", "stale", "future", "abstained", "wrong"]
    rubric: int
    rationale: str


def _json_object(text: str) -> Any:
    """The single JSON object in a reply, allowing code fences or words around it."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.IGNORECASE)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise _Unparseable("no JSON object found")
    try:
        return json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise _Unparseable(f"invalid JSON: {exc.msg}") from None


def _versions(views: Sequence[VersionView]) -> str:
    if not views:
        return "(none)"
    lines = []
    for i, v in enumerate(views, start=1):
        aliases = f" (also accepted: {', '.join(v.aliases)})" if v.aliases else ""
        lines.append(f"{i}. {v.answer}{aliases}")
    return "\n".join(lines)


class EvolvingReferenceJudge(ModelJudge):
    """Labels correct / stale / future / abstained / wrong against versions, with a 1-5 rubric."""

    name = "evolving-reference"
    version = JUDGE_EVOLVING.version
    repair = JUDGE_EVOLVING_REPAIR

    def templates(self) -> tuple[PromptTemplate, ...]:
        return (JUDGE_EVOLVING,)

    def messages(self, case: JudgeCase) -> list[dict[str, str]]:
        return JUDGE_EVOLVING.render(
            question=case.question, kind=case.kind, now=case.now or "(not given)",
            expect_abstain="yes" if case.expect_abstain else "no",
            in_force=_versions(case.in_force), superseded=_versions(case.superseded),
            later=_versions(case.later), answer=case.answer,
        )

    def read(self, case: JudgeCase, text: str) -> Verdict:
        data = _json_object(text)
        if isinstance(data, dict) and isinstance(data.get("label"), str):
            data = {**data, "label": data["label"].strip().lower()}
        try:
            reply = _EvolvingReply.model_validate(data)
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) or "object" for e in exc.errors())
            raise _Unparseable(f"bad or missing fields: {fields}") from None
        if not 1 <= reply.rubric <= 5:
            raise _Unparseable("rubric must be an integer from 1 to 5")
        return Verdict(outcome=reply.label, correct=credit(case, reply.label),
                       rubric=reply.rubric, rationale=reply.rationale.strip() or None)


# -- (b) LongMemEval semantics ---------------------------------------------------------------
_UNKNOWN = re.compile(
    r"^(i (do not|don t|dont) know|unknown|not (mentioned|available|known)|"
    r"(i|we) (cannot|can not|can t) (answer|tell|say|determine))\b"
)


def says_unknown(answer: str) -> bool:
    """Whether an answer opens by declining (the answerer is told to say "I don't know")."""
    return bool(_UNKNOWN.match(normalise_answer(answer)))


class LongMemEvalJudge(ModelJudge):
    """LongMemEval's yes/no answer check with its per-question-type rules (own wording).

    Not the official judge: the `longmemeval` judge kind builds
    :class:`lsrep.judge.longmemeval.OfficialLongMemEvalJudge` (the official prompts).

    The case's `category` is the LongMemEval question type; abstention questions
    (`_abs`) are those whose case expects abstention or whose kind is `abstention`.
    """

    name = "longmemeval"
    version = "1"
    repair = LME_REPAIR

    _BY_TYPE = {
        "temporal-reasoning": LME_TEMPORAL,
        "knowledge-update": LME_KNOWLEDGE_UPDATE,
        "single-session-preference": LME_PREFERENCE,
    }

    def templates(self) -> tuple[PromptTemplate, ...]:
        return (LME_DEFAULT, LME_TEMPORAL, LME_KNOWLEDGE_UPDATE, LME_PREFERENCE, LME_ABSTENTION)

    @staticmethod
    def is_abstention(case: JudgeCase) -> bool:
        return case.expect_abstain or case.kind == "abstention"

    def template_for(self, case: JudgeCase) -> PromptTemplate:
        if self.is_abstention(case):
            return LME_ABSTENTION
        return self._BY_TYPE.get((case.category or "").removesuffix("_abs"), LME_DEFAULT)

    def messages(self, case: JudgeCase) -> list[dict[str, str]]:
        if self.is_abstention(case):
            reference = _versions(case.in_force) if case.in_force else (
                "The conversation history does not contain this information."
            )
        elif not case.in_force:
            raise JudgeError("no_reference", "an answerable case needs a version in force")
        else:
            reference = "; ".join(
                v.answer + (f" (also accepted: {', '.join(v.aliases)})" if v.aliases else "")
                for v in case.in_force
            )
        return self.template_for(case).render(
            question=case.question, reference=reference, answer=case.answer
        )

    def read(self, case: JudgeCase, text: str) -> Verdict:
        # Unambiguous only: exactly one of the two words appears ("The answer is yes." reads,
        # "yes or no" does not). LongMemEval's own check is the looser `"yes" in reply`.
        found = {"yes", "no"} & set(normalise_answer(text).split())
        if len(found) != 1:
            raise _Unparseable("expected exactly one of yes or no")
        yes = found == {"yes"}
        if self.is_abstention(case):
            outcome: Outcome = "abstained" if yes else "wrong"
        elif yes:
            outcome = "correct"
        else:
            outcome = "abstained" if says_unknown(case.answer) else "wrong"
        return Verdict(outcome=outcome, correct=credit(case, outcome),
                       rationale=f"{self.template_for(case).name}: {'yes' if yes else 'no'}")


# -- (c) panels --------------------------------------------------------------------------
_CONSERVATIVE: tuple[Outcome, ...] = ("wrong", "stale", "future", "abstained", "correct")
"""Tie-break order: the label giving least credit wins a tied vote."""


class MultiPassJudge:
    """Several judges, several passes each; the verdict is the majority label.

    Pass k of every judge uses repetition k (a distinct seed, and a distinct cache
    entry when the endpoint samples). Failed passes are kept as `error` labels and
    left out of the vote; fewer than `min_valid` valid passes raises JudgeError.
    Ties go to the label that gives least credit (`_CONSERVATIVE`).
    """

    version = "1"

    def __init__(self, judges: Sequence[ModelJudge], *, passes: int = 3,
                 min_valid: int | None = None) -> None:
        if not judges or passes < 1:
            raise ValueError("a panel needs at least one judge and one pass")
        self.judges = tuple(judges)
        self.passes = passes
        total = len(self.judges) * passes
        self.min_valid = min_valid if min_valid is not None else total // 2 + 1
        members = ",".join(f"{j.name}@{j.version}" for j in self.judges)
        self.name = f"panel[{members}]x{passes}"

    @property
    def prompt_digest(self) -> str:
        return combined_digest(*(j.prompt_digest for j in self.judges))

    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "prompt_digest": self.prompt_digest,
                "passes": self.passes, "min_valid": self.min_valid,
                "judges": [j.identity() for j in self.judges]}

    def judge(self, case: JudgeCase) -> Verdict:
        return self.assess(case).verdict

    def assess(self, case: JudgeCase) -> Judgement:
        labels: list[PassLabel] = []
        records: list[CallRecord] = []
        raw: list[str] = []
        for judge in self.judges:
            for k in range(self.passes):
                try:
                    result = judge.assess(case, repetition=k)
                except JudgeError as exc:
                    records.extend(exc.records)
                    raw.extend(exc.raw)
                    labels.append(PassLabel(judge=judge.name, pass_index=k, outcome="error",
                                            error=f"{exc.reason}: {exc}"))
                    continue
                records.extend(result.records)
                raw.extend(result.raw)
                labels.append(PassLabel(judge=judge.name, pass_index=k,
                                        outcome=result.verdict.outcome,
                                        rubric=result.verdict.rubric))
        valid = [p for p in labels if p.outcome != "error"]
        if len(valid) < self.min_valid:
            raise JudgeError("too_few_valid_passes",
                             f"{len(valid)} valid of {len(labels)}, need {self.min_valid}",
                             records, raw)
        outcome, votes = majority([p.outcome for p in valid])
        rubrics = [p.rubric for p in valid if p.rubric is not None]
        verdict = Verdict(
            outcome=outcome, correct=credit(case, outcome),
            rubric=statistics.median_low(rubrics) if rubrics else None,
            rationale=f"{votes}/{len(valid)} valid passes say {outcome}",
        )
        return Judgement(verdict=verdict, judge=self.name, version=self.version,
                         prompt_digest=self.prompt_digest, records=tuple(records),
                         raw=tuple(raw), passes=tuple(labels), agreement=votes / len(valid))


def majority(labels: Sequence[Outcome]) -> tuple[Outcome, int]:
    """The most frequent label and its count; ties go to the least-credit label."""
    counts = Counter(labels)
    top = max(counts.values())
    tied = [label for label in _CONSERVATIVE if counts.get(label) == top]
    return tied[0], top


def build_judge(
    kind: Literal["evolving", "longmemeval"],
    endpoint: BaseModel,
    *,
    passes: int = 1,
    cache: ResponseCache | None = None,
) -> ModelJudge | MultiPassJudge:
    """A judge from a campaign's judge table: one model judge, or a panel when passes > 1."""
    if kind == "longmemeval":
        from lsrep.judge.longmemeval import OfficialLongMemEvalJudge, official_endpoint

        judge: ModelJudge = OfficialLongMemEvalJudge(
            LLMClient(EndpointSpec.of(official_endpoint(endpoint)), cache=cache))
    else:
        judge = EvolvingReferenceJudge(LLMClient(EndpointSpec.of(endpoint), cache=cache))
    return judge if passes == 1 else MultiPassJudge([judge], passes=passes)
