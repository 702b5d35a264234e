"""Replay planning is pure, complete and hashable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from lsrep.plan import CheckpointStep, IngestStep, MaintenanceStep, SessionEndStep, plan_replay
from lsrep.protocol.campaign import load_schedule
from lsrep.protocol.loading import load_probes, load_trajectory
from lsrep.protocol.models import ProbeSet, Trajectory, Turn
from lsrep.protocol.schedule import CheckpointSpec, MaintenanceSpec, ScheduleSpec

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "campaigns" / "quickstart"

# Golden digests: a change here means plans changed meaning; bump PLAN_FORMAT or the schedule version.
GOLDEN_SESSION_END = "997529603e69d98b"


def _example():
    trajectory = load_trajectory(EXAMPLE / "trajectory.jsonl", "maya-journal")
    return trajectory, load_probes(EXAMPLE / "probes.jsonl", trajectory)


def test_every_turn_ingested_once_in_order():
    trajectory, probes = _example()
    plan = plan_replay(trajectory, load_schedule(REPO / "schedules" / "session-end.toml"), probes)
    ingests = [s.index for s in plan.steps if isinstance(s, IngestStep)]
    assert ingests == list(range(len(trajectory.turns)))
    ends = [s for s in plan.steps if isinstance(s, SessionEndStep)]
    assert [e.session_id for e in ends] == ["s01", "s02", "s03", "s04", "s05", "s06"]
    cps = plan.checkpoints
    assert [c.prefix_len for c in cps] == [7, 13, 19, 24, 29, 35]
    # Session-end maintenance precedes the checkpoint it closes.
    i_maint = next(i for i, s in enumerate(plan.steps) if isinstance(s, MaintenanceStep) and s.trigger == "session_end")
    i_cp = next(i for i, s in enumerate(plan.steps) if isinstance(s, CheckpointStep))
    assert i_maint < i_cp
    nightly = [s for s in plan.steps if isinstance(s, MaintenanceStep) and s.operation == "nightly"]
    assert len(nightly) == 5  # five day changes between six sessions on six days


def test_plan_digest_is_stable_and_sensitive():
    trajectory, probes = _example()
    schedule = load_schedule(REPO / "schedules" / "session-end.toml")
    a = plan_replay(trajectory, schedule, probes).digest()
    assert a == plan_replay(trajectory, schedule, probes).digest()
    fewer = ProbeSet(probes=probes.probes[:-1])
    assert plan_replay(trajectory, schedule, fewer).digest() != a


def test_golden_plan_digest(tmp_path):
    trajectory, probes = _example()
    schedule = load_schedule(REPO / "schedules" / "session-end.toml")
    digest = plan_replay(trajectory, schedule, probes).digest()
    assert digest[:16] == GOLDEN_SESSION_END


def _turns(n: int, hours: float = 1.0) -> Trajectory:
    t0 = datetime(2026, 1, 1, 8, tzinfo=UTC)
    return Trajectory(trajectory_id="x", turns=tuple(
        Turn(turn_id=f"t{i}", session_id=f"s{i // 5}", timestamp=t0 + timedelta(hours=hours * i), role="user",
             content="x") for i in range(n)
    ))


def test_checkpoint_triggers_and_times():
    traj = _turns(20)
    t0 = traj.turns[0].timestamp
    schedule = ScheduleSpec(checkpoints=CheckpointSpec(
        at=("every_n_turns", "turn_ids", "times"), every_n_turns=7, turn_ids=("t3",),
        times=(t0 + timedelta(hours=10, minutes=30), t0 - timedelta(hours=1)),
    ))
    plan = plan_replay(traj, schedule, ProbeSet(probes=()))
    got = [(c.prefix_len, c.triggers) for c in plan.checkpoints]
    assert got == [(0, ("times",)), (4, ("turn_ids",)), (7, ("every_n_turns",)), (11, ("times",)),
                   (14, ("every_n_turns",))]


def test_compressed_clock_scales_gaps():
    traj = _turns(5, hours=2)
    schedule = ScheduleSpec(clock="compressed", compression=12.0)
    plan = plan_replay(traj, schedule, ProbeSet(probes=()))
    gaps = [(b - a).total_seconds() / 3600 for a, b in zip(plan.sim_times, plan.sim_times[1:], strict=False)]
    assert gaps == [24.0] * 4
    every = ScheduleSpec(maintenance=(MaintenanceSpec(operation="decay", at="every_n_turns", every_n_turns=2),))
    steps = plan_replay(traj, every, ProbeSet(probes=())).steps
    assert sum(isinstance(s, MaintenanceStep) for s in steps) == 2
