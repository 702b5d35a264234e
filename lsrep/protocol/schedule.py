"""The declared lifecycle schedule (protocol section 2), authored in TOML."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CheckpointTrigger = Literal["session_end", "every_n_turns", "turn_ids", "times", "end"]
MaintenanceTrigger = Literal[
    "session_end", "day_boundary", "every_n_turns", "before_checkpoint", "end"
]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckpointSpec(Spec):
    """When the state is observed."""

    at: tuple[CheckpointTrigger, ...] = Field(default=("session_end",), min_length=1)
    """Triggers; a prefix closed by several triggers is one checkpoint."""
    every_n_turns: int | None = Field(default=None, ge=1)
    """Turn interval for `every_n_turns`."""
    turn_ids: tuple[str, ...] = ()
    """Turn ids after which to observe, for `turn_ids`."""
    times: tuple[datetime, ...] = ()
    """Simulated times at which to observe, for `times` (the prefix is every turn said by then)."""

    @model_validator(mode="after")
    def _needs_params(self) -> CheckpointSpec:
        if "every_n_turns" in self.at and self.every_n_turns is None:
            raise ValueError("checkpoints.at has 'every_n_turns' but checkpoints.every_n_turns is not set")
        if "turn_ids" in self.at and not self.turn_ids:
            raise ValueError("checkpoints.at has 'turn_ids' but checkpoints.turn_ids is empty")
        if "times" in self.at and not self.times:
            raise ValueError("checkpoints.at has 'times' but checkpoints.times is empty")
        for t in self.times:
            if t.tzinfo is None:
                raise ValueError(f"checkpoint time {t.isoformat()} has no time zone")
        return self


class MaintenanceSpec(Spec):
    """A named operation the harness triggers on a system."""

    operation: str = Field(min_length=1)
    """Operation name, e.g. `consolidate`, `nightly`, `decay`."""
    at: MaintenanceTrigger
    """When it runs."""
    every_n_turns: int | None = Field(default=None, ge=1)
    """Turn interval for `every_n_turns`."""
    required: bool = False
    """A system that does not support a required operation fails the unit."""

    @model_validator(mode="after")
    def _needs_interval(self) -> MaintenanceSpec:
        if self.at == "every_n_turns" and self.every_n_turns is None:
            raise ValueError(f"maintenance {self.operation!r} runs every_n_turns but sets no every_n_turns")
        return self


class ScheduleSpec(Spec):
    """A declared lifecycle, applied identically to every system in a condition."""

    name: str = "default"
    """Name shown in reports."""
    version: int = 1
    """Bump when the schedule's meaning changes; part of the plan hash."""
    clock: Literal["timestamps", "compressed"] = "timestamps"
    """Simulated now: turn timestamps, or their gaps scaled by `compression`."""
    compression: float = Field(default=1.0, gt=0)
    """Factor applied to gaps from the first turn under the `compressed` clock (>1 ages faster)."""
    access: Literal["persistent", "isolated"] = "persistent"
    """Whether probe side effects persist (persistent) or are rolled back (isolated)."""
    checkpoints: CheckpointSpec = CheckpointSpec()
    """When to observe."""
    maintenance: tuple[MaintenanceSpec, ...] = ()
    """Maintenance events."""
