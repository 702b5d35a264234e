"""Running a campaign: validate everything, plan, then replay each unit and store it.

Nothing is written to the store until every input has loaded and every
condition has validated, so a bad file never leaves a partial run. A unit's
rows land in one transaction; re-running an interrupted campaign finds the
unfinished run with the same inputs and plan and replays only the units that
have not landed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from lsrep import __version__
from lsrep.answer import make_answerer
from lsrep.embed import make_embedder
from lsrep.engine import UnitTask, unit_seed
from lsrep.errors import ConfigError
from lsrep.executors.local import Executor, InProcessExecutor
from lsrep.harness import validate_condition
from lsrep.judge.campaign import build_judge, judge_unit_tables
from lsrep.plan import ReplayPlan, plan_replay
from lsrep.protocol.campaign import LoadedCampaign, load_campaign
from lsrep.protocol.loading import load_probes, load_trajectory
from lsrep.protocol.models import ProbeSet, Trajectory
from lsrep.store import RunStore


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    store_path: Path
    resumed: bool
    units_run: int
    units_skipped: int
    failed_units: int


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_inputs(campaign: LoadedCampaign) -> dict[str, tuple[Trajectory, ProbeSet]]:
    data = {}
    for t in campaign.spec.trajectories:
        if t.locomo is not None:
            data[t.id] = _locomo_inputs(t.locomo, t.conversation or t.id, t.id)
            continue
        if t.generate is not None:
            data[t.id] = _generated_inputs(campaign.path, t.id, t.generate)
            continue
        trajectory = load_trajectory(t.trajectory, trajectory_id=t.id)
        data[t.id] = (trajectory, load_probes(t.probes, trajectory))
    return data


def _generated_inputs(path: Path, trajectory_id: str, settings: dict[str, Any]) -> tuple[Trajectory, ProbeSet]:
    from pydantic import ValidationError

    from lsrep.errors import InputError, pydantic_reason
    from lsrep.probes.generator import GeneratorSpec, generate_trajectory

    try:
        spec = GeneratorSpec.model_validate({**settings, "trajectory_id": trajectory_id})
    except ValidationError as exc:
        raise InputError(path, f"trajectory {trajectory_id!r}: bad generate settings: {pydantic_reason(exc)}") from None
    made = generate_trajectory(spec)
    return Trajectory(trajectory_id=trajectory_id, turns=made.turns), ProbeSet(probes=made.probes)


def _locomo_inputs(path: Path, sample_id: str, trajectory_id: str) -> tuple[Trajectory, ProbeSet]:
    from lsrep.probes.locomo import build_locomo

    (conversation,) = build_locomo(path, [sample_id])
    trajectory = Trajectory(trajectory_id=trajectory_id, turns=conversation.turns)
    return trajectory, ProbeSet(probes=conversation.probes)


def validate_campaign(campaign: LoadedCampaign) -> dict[str, Any]:
    """Check every condition against its adapter; return per-condition adapter descriptions."""
    spec = campaign.spec
    described = {}
    for cond in spec.conditions:
        cls, opts = validate_condition(cond.system, cond.options, cond.disable, cond.name)
        schedule = campaign.condition_schedules[cond.name]
        if schedule.access == "isolated" and not cls.supports_snapshot:
            raise ConfigError(
                f"condition {cond.name!r}: schedule access 'isolated' needs snapshot/restore, "
                f"which {cond.system!r} does not support (refusing rather than falling back)"
            )
        mode = cond.answer_mode or spec.answer_mode
        if mode == "system" and not cls.answers:
            raise ConfigError(f"condition {cond.name!r}: system mode, but {cond.system!r} has no answering stage")
        described[cond.name] = {
            "system": cond.system, "adapter": f"{cls.__module__}:{cls.__qualname__}",
            "adapter_version": cls.version, "options": opts.model_dump(mode="json"),
            "disable": list(cond.disable), "answer_mode": mode, "schedule": schedule.model_dump(mode="json"),
            "mechanisms": [m.name for m in cls.mechanisms],
            "maintenance_operations": sorted(cls.maintenance_operations),
        }
    return described


def plan_all(campaign: LoadedCampaign, inputs) -> dict[tuple[str, str], tuple[ReplayPlan, str]]:
    plans = {}
    for cond in campaign.spec.conditions:
        schedule = campaign.condition_schedules[cond.name]
        for tid, (trajectory, probes) in inputs.items():
            plan = plan_replay(trajectory, schedule, probes)
            plans[(cond.name, tid)] = (plan, plan.digest())
    return plans


def build_manifest(campaign: LoadedCampaign, conditions: dict[str, Any], plans) -> dict[str, Any]:
    spec = campaign.spec
    answerer = make_answerer(spec.answerer)
    return {
        "lsrep_version": __version__,
        "campaign": spec.model_dump(mode="json"),
        "campaign_path": str(campaign.path),
        "inputs": {role: {"path": str(p), "sha256": sha256_file(p)} for role, p in sorted(campaign.input_files.items())},
        "conditions": conditions,
        "answerer": answerer.describe() | {"kind": spec.answerer.kind, "offline": spec.answerer.kind == "extractive"},
        "embedder": make_embedder(spec.embedder).name,
        "embedding_text": spec.embedder.text,
        "judges": [{"name": "deterministic", "version": "1", "kind": "deterministic"}]
        + [j.model_dump(mode="json", exclude={"endpoint"}) | _endpoint_public(j.endpoint) for j in spec.judges],
        "plans": {f"{c}/{t}": d for (c, t), (_, d) in sorted(plans.items())},
        "packages": _package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "git_revision": _git_revision(campaign.path.parent),
    }


def _endpoint_public(endpoint) -> dict[str, Any]:
    # The key's variable name is recorded; its value never is.
    if endpoint is None:
        return {}
    return {"endpoint": endpoint.model_dump(mode="json")}


def _package_versions() -> dict[str, str]:
    names = ["lsrep", "pydantic", "sqlite-utils", "numpy", "scipy", "openai", "jinja2", "tqdm", "matplotlib"]
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _git_revision(where: Path) -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def _new_run_id(campaign_sha: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{campaign_sha[:6]}"


def run_campaign(path: Path | str, *, executor: Executor | None = None, progress: bool = False,
                 fresh: bool = False, store_path: Path | None = None) -> RunOutcome:
    """Run (or resume) a campaign file; returns where the results are."""
    campaign = load_campaign(path)
    inputs = load_inputs(campaign)
    conditions = validate_campaign(campaign)
    plans = plan_all(campaign, inputs)
    manifest = build_manifest(campaign, conditions, plans)
    input_digest = hashlib.sha256(
        json.dumps({k: v["sha256"] for k, v in manifest["inputs"].items()}, sort_keys=True).encode()
    ).hexdigest()
    plan_digest = hashlib.sha256(json.dumps(manifest["plans"], sort_keys=True).encode()).hexdigest()

    store = RunStore(store_path or campaign.store_path)
    run_id = None if fresh else store.find_resumable(input_digest, plan_digest)
    resumed = run_id is not None
    if run_id is None:
        run_id = _new_run_id(input_digest)
        store.create_run(run_id, campaign.spec.name, str(campaign.path), input_digest, plan_digest, manifest)
    for tid, (trajectory, _) in inputs.items():
        plan = plans[(campaign.spec.conditions[0].name, tid)][0]
        store.write_turns(run_id, tid, turn_rows(run_id, trajectory, plan))

    done = store.finished_units(run_id)
    tasks = [t for t in _tasks(run_id, campaign, inputs, plans, progress, store.path) if t.unit_id not in done]
    judges = [(j, build_judge(j, store.path)) for j in campaign.spec.judges if j.kind != "deterministic"]
    executor = executor or InProcessExecutor()
    failed = 0
    for result in executor.run(tasks):
        if judges:
            judge_unit_tables(result.tables, judges)
        store.write_unit(result.unit, result.tables)
        failed += result.unit["status"] == "failed"
    store.finish_run(run_id)
    return RunOutcome(run_id, store.path, resumed, len(tasks), len(done), failed)


def _tasks(run_id: str, campaign: LoadedCampaign, inputs, plans, progress: bool,
           store_path: Path) -> list[UnitTask]:
    spec = campaign.spec
    tasks = []
    for cond in spec.conditions:
        schedule = campaign.condition_schedules[cond.name]
        for tid, (trajectory, probes) in inputs.items():
            plan, digest = plans[(cond.name, tid)]
            for rep in range(spec.repetitions):
                tasks.append(UnitTask(
                    run_id=run_id, unit_id=f"{cond.name}/{tid}/r{rep}", condition=cond.name, system=cond.system,
                    options=dict(cond.options), disable=tuple(cond.disable), trajectory=trajectory, probes=probes,
                    plan=plan, plan_digest=digest, access=schedule.access,
                    answer_mode=cond.answer_mode or spec.answer_mode, answerer=spec.answerer,
                    embedder=spec.embedder, retrieval_budget=spec.retrieval_budget, repetition=rep,
                    seed=unit_seed(spec.seed, cond.name, tid, rep), progress=progress,
                    store_path=str(store_path),
                ))
    return tasks


def turn_rows(run_id: str, trajectory: Trajectory, plan: ReplayPlan) -> list[dict]:
    """Store rows for a trajectory's turns, with simulated times and running prefix hashes."""
    from lsrep.engine import prefix_hashes

    return [{
        "run_id": run_id, "trajectory": trajectory.trajectory_id, "idx": i, "turn_id": turn.turn_id,
        "session_id": turn.session_id, "timestamp": turn.timestamp.isoformat(),
        "sim_time": plan.sim_times[i].isoformat(), "role": turn.role, "speaker": turn.speaker,
        "content": turn.content, "prefix_sha256": digest,
    } for i, (turn, digest) in enumerate(zip(trajectory.turns, prefix_hashes(trajectory.turns), strict=True))]
