"""Replay planning: a pure function of trajectory + schedule + probes.

The plan is a list of typed steps. It never changes between systems in a
condition, so its hash proves two systems were replayed the same way.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lsrep.protocol.models import ProbeSet, Trajectory
from lsrep.protocol.schedule import ScheduleSpec
from lsrep.references import Expected, resolve_expected

PLAN_FORMAT = 1
"""Bump when the meaning of plan steps changes (golden plan hashes pin it)."""


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IngestStep(Step):
    step: Literal["ingest"] = "ingest"
    index: int
    """Position of the turn in the trajectory."""
    now: datetime
    """Simulated time of the turn."""


class SessionEndStep(Step):
    step: Literal["session_end"] = "session_end"
    session_id: str
    now: datetime


class MaintenanceStep(Step):
    step: Literal["maintenance"] = "maintenance"
    operation: str
    required: bool
    trigger: str
    now: datetime


class ProbeAsk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    probe_id: str
    expected: Expected


class CheckpointStep(Step):
    step: Literal["checkpoint"] = "checkpoint"
    ordinal: int
    """0-based checkpoint number within the plan."""
    prefix_len: int
    """Turns that have arrived."""
    last_turn_id: str | None
    """Id of the last arrived turn (None for an empty prefix)."""
    now: datetime
    """Simulated time of the observation."""
    triggers: tuple[str, ...]
    probes: tuple[ProbeAsk, ...]
    skipped: tuple[ProbeAsk, ...] = ()
    """Probes not asked here (recorded so the report can count them)."""


PlanStep = IngestStep | SessionEndStep | MaintenanceStep | CheckpointStep


class ReplayPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    trajectory_id: str
    steps: tuple[PlanStep, ...]
    sim_times: tuple[datetime, ...]
    """Simulated timestamp of every turn (after clock compression)."""

    @property
    def checkpoints(self) -> list[CheckpointStep]:
        return [s for s in self.steps if isinstance(s, CheckpointStep)]

    def digest(self) -> str:
        """Stable SHA-256 of the plan (format version included)."""
        payload = {"format": PLAN_FORMAT, "plan": self.model_dump(mode="json")}
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()


def simulated_times(trajectory: Trajectory, schedule: ScheduleSpec) -> list[datetime]:
    """Turn timestamps on the schedule's clock."""
    stamps = [t.timestamp for t in trajectory.turns]
    if schedule.clock == "timestamps" or not stamps:
        return stamps
    origin = stamps[0]
    return [origin + (ts - origin) * schedule.compression for ts in stamps]


def plan_replay(trajectory: Trajectory, schedule: ScheduleSpec, probes: ProbeSet) -> ReplayPlan:
    """Build the ordered steps: ingest, session ends, maintenance, checkpoints with their probes."""
    turns = trajectory.turns
    times = simulated_times(trajectory, schedule)
    index = trajectory.index_of()
    n = len(turns)
    cp_spec = schedule.checkpoints
    cp_after_turn = {index[t] for t in cp_spec.turn_ids if t in index}
    pending_times = sorted(
        (t if schedule.clock == "timestamps" else _compress(t, turns, schedule)) for t in cp_spec.times
    )

    steps: list[PlanStep] = []
    ordinal = 0

    def checkpoint(prefix_len: int, now: datetime, triggers: list[str]) -> None:
        nonlocal ordinal
        for m in schedule.maintenance:
            if m.at == "before_checkpoint":
                steps.append(MaintenanceStep(operation=m.operation, required=m.required, trigger=m.at, now=now))
        asks, skips = [], []
        for probe in probes.probes:
            exp = resolve_expected(probe, index, prefix_len)
            (asks if exp.ask else skips).append(ProbeAsk(probe_id=probe.probe_id, expected=exp))
        steps.append(
            CheckpointStep(
                ordinal=ordinal,
                prefix_len=prefix_len,
                last_turn_id=turns[prefix_len - 1].turn_id if prefix_len else None,
                now=now,
                triggers=tuple(triggers),
                probes=tuple(asks),
                skipped=tuple(skips),
            )
        )
        ordinal += 1

    def flush_times(before: datetime | None, prefix_len: int) -> None:
        # Checkpoints at listed times close the prefix of turns said by then.
        while pending_times and (before is None or pending_times[0] < before):
            checkpoint(prefix_len, pending_times.pop(0), ["times"])

    for i, turn in enumerate(turns):
        now = times[i]
        if "times" in cp_spec.at:
            flush_times(now, i)
        if i > 0 and times[i - 1].date() != now.date():
            for m in schedule.maintenance:
                if m.at == "day_boundary":
                    steps.append(MaintenanceStep(operation=m.operation, required=m.required, trigger=m.at, now=now))
        steps.append(IngestStep(index=i, now=now))
        triggers: list[str] = []
        session_ends = i == n - 1 or turns[i + 1].session_id != turn.session_id
        if session_ends:
            steps.append(SessionEndStep(session_id=turn.session_id, now=now))
            for m in schedule.maintenance:
                if m.at == "session_end":
                    steps.append(MaintenanceStep(operation=m.operation, required=m.required, trigger=m.at, now=now))
        for m in schedule.maintenance:
            if m.at == "every_n_turns" and m.every_n_turns and (i + 1) % m.every_n_turns == 0:
                steps.append(MaintenanceStep(operation=m.operation, required=m.required, trigger=m.at, now=now))
        if i == n - 1:
            for m in schedule.maintenance:
                if m.at == "end":
                    steps.append(MaintenanceStep(operation=m.operation, required=m.required, trigger=m.at, now=now))
        if session_ends and "session_end" in cp_spec.at:
            triggers.append("session_end")
        if "every_n_turns" in cp_spec.at and cp_spec.every_n_turns and (i + 1) % cp_spec.every_n_turns == 0:
            triggers.append("every_n_turns")
        if "turn_ids" in cp_spec.at and i in cp_after_turn:
            triggers.append("turn_ids")
        if "end" in cp_spec.at and i == n - 1:
            triggers.append("end")
        if triggers:
            checkpoint(i + 1, now, triggers)
    if "times" in cp_spec.at:
        flush_times(None, n)
    return ReplayPlan(trajectory_id=trajectory.trajectory_id, steps=tuple(steps), sim_times=tuple(times))


def _compress(t: datetime, turns, schedule: ScheduleSpec) -> datetime:
    origin = turns[0].timestamp
    return origin + (t - origin) * schedule.compression
