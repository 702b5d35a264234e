"""What every judge receives and returns, deterministic or model-backed.

A judge sees the question, the answer and the reference versions split by
their status at the checkpoint. The answerer never sees any of this.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["correct", "stale", "future", "abstained", "wrong", "error"]
OUTCOMES: tuple[str, ...] = ("correct", "stale", "future", "abstained", "wrong", "error")


class VersionView(BaseModel):
    """A reference version as a judge sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: str
    """Reference answer text."""
    aliases: tuple[str, ...] = ()
    """Other accepted spellings."""
    valid_from: str
    """Turn id that made it true."""
    valid_until: str | None = None
    """Turn id that superseded it, if any."""


class JudgeCase(BaseModel):
    """One observation to judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
    """The probe question."""
    answer: str
    """The answer under judgement."""
    kind: Literal["current", "historical", "evolution", "abstention"]
    """The probe kind."""
    category: str | None = None
    """The probe category (LongMemEval question type, LoCoMo category...)."""
    expect_abstain: bool
    """Whether the correct response at this checkpoint is to abstain."""
    in_force: tuple[VersionView, ...] = ()
    """Version(s) in force at the checkpoint (for evolution: all established, in order)."""
    superseded: tuple[VersionView, ...] = ()
    """Versions that held earlier and no longer do."""
    later: tuple[VersionView, ...] = ()
    """Versions that only become true after the checkpoint."""
    now: str | None = None
    """Simulated time of the checkpoint (ISO 8601)."""


class Verdict(BaseModel):
    """A judge's label for one case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: Outcome
    """The outcome label (protocol section 4)."""
    correct: bool
    """Credit: `correct`, or `abstained` where abstention was expected."""
    rubric: int | None = None
    """1-5 rubric score, where the judge gives one."""
    rationale: str | None = None
    """Short reason, where the judge gives one."""
