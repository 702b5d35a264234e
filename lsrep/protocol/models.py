"""The protocol's facts: turns, reference versions and probes (spec sections 2 and 8).

These are the records users author in the native files. They are frozen and
reject unknown fields, so a typo in a file is an error rather than a silently
ignored key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ProbeKind = Literal["current", "historical", "evolution", "abstention"]


class Fact(BaseModel):
    """Base for immutable protocol records that reject unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(Fact):
    """One speaker's message in a trajectory."""

    turn_id: str = Field(min_length=1)
    """Unique id within the trajectory."""
    session_id: str = Field(min_length=1)
    """Session the turn belongs to; sessions are contiguous runs of turns."""
    timestamp: datetime
    """When the turn was said: ISO 8601 with a zone."""
    role: str = Field(min_length=1)
    """`user`, `assistant`, or another speaker role."""
    speaker: str | None = None
    """Optional speaker name."""
    content: str
    """What was said."""

    @field_validator("timestamp", mode="before")
    @classmethod
    def _iso_text(cls, value: object) -> object:
        # The protocol's timestamps are ISO 8601 strings; a number is not silently Unix time.
        if not isinstance(value, str | datetime):
            raise ValueError(f"timestamp must be an ISO 8601 string with a time zone, not {type(value).__name__}")
        return value

    @field_validator("timestamp")
    @classmethod
    def _has_zone(cls, value: datetime) -> datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("timestamp must carry a time zone (e.g. +00:00 or Z)")
        return value


class ReferenceVersion(Fact):
    """One version of a probe's reference answer and when it holds."""

    answer: str = Field(min_length=1)
    """The reference answer text."""
    aliases: tuple[str, ...] = ()
    """Other accepted spellings of the answer."""
    valid_from: str = Field(min_length=1)
    """Turn id whose arrival makes this version true."""
    valid_until: str | None = None
    """Turn id whose arrival supersedes this version (absent: still valid)."""
    evidence: tuple[str, ...] = ()
    """Turn ids that support this version."""


class Probe(Fact):
    """A question with evolving references."""

    probe_id: str = Field(min_length=1)
    """Unique id within the probe set."""
    question: str = Field(min_length=1)
    """The question put to the system."""
    kind: ProbeKind
    """How the expected answer is derived from the versions."""
    category: str | None = None
    """Free label (LongMemEval question type, LoCoMo category, ...)."""
    before_first: Literal["skip", "abstain"] = "skip"
    """Before the first version holds: skip the probe, or expect abstention."""
    references: tuple[ReferenceVersion, ...] = ()
    """Versions of the answer, in order of validity."""
    ask_at: Literal["every_checkpoint"] | tuple[str, ...] = Field(default="every_checkpoint", min_length=1)
    """Ask at every checkpoint, or only at checkpoints closing after these turn ids."""

    @model_validator(mode="after")
    def _references_fit_kind(self) -> Probe:
        if self.kind != "abstention" and not self.references:
            raise ValueError(f"a {self.kind!r} probe needs at least one reference version")
        return self

    def named_turn_ids(self) -> list[str]:
        """Every turn id this probe names (versions, evidence, ask_at)."""
        ids: list[str] = []
        for version in self.references:
            ids.append(version.valid_from)
            if version.valid_until is not None:
                ids.append(version.valid_until)
            ids.extend(version.evidence)
        if self.ask_at != "every_checkpoint":
            ids.extend(self.ask_at)
        return ids


class Trajectory(BaseModel):
    """An ordered conversation, validated as a whole."""

    model_config = ConfigDict(frozen=True)

    trajectory_id: str
    """Name of the trajectory (the campaign's key, or the file stem)."""
    turns: tuple[Turn, ...]
    """Turns in replay order."""

    def index_of(self) -> dict[str, int]:
        """Map turn id to its position in replay order."""
        return {turn.turn_id: i for i, turn in enumerate(self.turns)}


class ProbeSet(BaseModel):
    """The probes asked of one trajectory."""

    model_config = ConfigDict(frozen=True)

    probes: tuple[Probe, ...]
    """Probes in file order."""
