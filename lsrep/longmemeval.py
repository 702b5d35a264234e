"""LongMemEval matched diagnostics: same answerer, same judge, different memory.

Each question is its own trajectory (its haystack sessions in date order), observed
once at the question's date. The file is streamed: one question is converted,
replayed into every condition, stored and dropped before the next is read, so memory
stays bounded on the S and M files. Gold labels (`has_answer`, answer session ids)
stay in the harness: they score retrieval recall and never reach an adapter.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lsrep.engine import UnitResult, UnitTask, unit_seed
from lsrep.errors import InputError, pydantic_reason
from lsrep.executors.local import Executor, InProcessExecutor
from lsrep.plan import plan_replay
from lsrep.protocol.campaign import (
    AnswererSpec,
    ConditionSpec,
    EmbedderSpec,
    JudgeSpec,
    LoadedCampaign,
    ScheduleSpec,
    load_schedule,
)
from lsrep.protocol.models import ProbeSet
from lsrep.protocol.schedule import CheckpointSpec
from lsrep.runner import build_manifest, turn_rows, validate_campaign
from lsrep.store import RunStore


class LongMemEvalSpec(BaseModel):
    """A LongMemEval diagnostic campaign (TOML); the data path may come from the command line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "longmemeval"
    description: str = "LongMemEval matched diagnostic"
    data: Path | None = None
    """The official JSON file (oracle, S or M; original or cleaned)."""
    seed: int = 0
    store: Path = Path("runs/longmemeval.sqlite")
    answer_mode: Literal["context", "system"] = "context"
    retrieval_budget: int | None = Field(default=None, ge=1)
    schedule: Path | ScheduleSpec = ScheduleSpec(name="longmemeval", checkpoints=CheckpointSpec(at=("end",)))
    """Maintenance and access policy; checkpoints are always the question date."""
    conditions: tuple[ConditionSpec, ...] = Field(min_length=1)
    answerer: AnswererSpec = AnswererSpec()
    judges: tuple[JudgeSpec, ...] = ()
    embedder: EmbedderSpec = EmbedderSpec()
    compare: tuple[tuple[str, str], ...] = ()
    limit: int | None = Field(default=None, ge=1)
    """Only the first N questions (for smoke runs)."""


def load_longmemeval_spec(path: Path | str, data: Path | None = None) -> tuple[LongMemEvalSpec, Path]:
    path = Path(path).resolve()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"invalid TOML: {exc}") from None
    try:
        spec = LongMemEvalSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(path, f"bad LongMemEval campaign: {pydantic_reason(exc)}") from None
    return _resolved(spec, path.parent, data), path


def spec_from_systems(systems: list[str], data: Path, **kw: Any) -> LongMemEvalSpec:
    conditions = tuple(ConditionSpec(name=s, system=s) for s in systems)
    return _resolved(LongMemEvalSpec(conditions=conditions, **kw), Path.cwd(), data)


def _resolved(spec: LongMemEvalSpec, base: Path, data: Path | None) -> LongMemEvalSpec:
    def res(p: Path) -> Path:
        return p if p.is_absolute() else (base / p).resolve()

    data = Path(data).resolve() if data is not None else (res(spec.data) if spec.data else None)
    if data is None:
        raise InputError(base, "no LongMemEval data file: pass --data PATH or set data = in the campaign")
    if not data.exists():
        raise InputError(data, "file not found")
    schedule = spec.schedule if isinstance(spec.schedule, ScheduleSpec) else load_schedule(res(spec.schedule))
    return spec.model_copy(update={"data": data, "store": res(spec.store), "schedule": schedule})


@dataclass(frozen=True)
class DiagnosticOutcome:
    run_id: str
    store_path: Path
    resumed: bool
    questions: int
    units_run: int
    units_skipped: int
    failed_units: int


def _as_campaign(spec: LongMemEvalSpec, source: Path) -> LoadedCampaign:
    from lsrep.protocol.campaign import CampaignSpec, TrajectorySpec

    placeholder = TrajectorySpec(id="longmemeval", trajectory=spec.data, probes=spec.data)
    campaign = CampaignSpec(
        name=spec.name, description=spec.description, seed=spec.seed, store=spec.store,
        answer_mode=spec.answer_mode, retrieval_budget=spec.retrieval_budget, schedule=spec.schedule,
        trajectories=(placeholder,), conditions=spec.conditions, answerer=spec.answerer, judges=spec.judges,
        embedder=spec.embedder, compare=spec.compare,
    )
    schedules = {c.name: spec.schedule for c in spec.conditions}
    return LoadedCampaign(path=source, spec=campaign, schedule=spec.schedule, condition_schedules=schedules,
                          store_path=spec.store, input_files={"longmemeval": spec.data})


def item_schedule(base: ScheduleSpec, checkpoint_time) -> ScheduleSpec:
    """The campaign's maintenance and access policy, observed once at the question date."""
    return base.model_copy(update={"checkpoints": CheckpointSpec(at=("times",), times=(checkpoint_time,))})


def run_longmemeval(spec: LongMemEvalSpec, *, source: Path | None = None, executor: Executor | None = None,
                    fresh: bool = False, progress: bool | str = False) -> DiagnosticOutcome:
    from lsrep.registry import SOURCES

    iter_longmemeval = SOURCES.load("longmemeval")  # lsrep.probes.sources, an entry point
    campaign = _as_campaign(spec, source or spec.data)
    conditions = validate_campaign(campaign)
    manifest = build_manifest(campaign, conditions, {})
    manifest["diagnostic"] = "longmemeval"
    data_sha = manifest["inputs"]["longmemeval"]["sha256"]
    config_digest = hashlib.sha256(json.dumps(
        {"conditions": conditions, "answerer": manifest["answerer"], "embedder": manifest["embedder"],
         "limit": spec.limit, "budget": spec.retrieval_budget, "mode": spec.answer_mode},
        sort_keys=True).encode()).hexdigest()
    store = RunStore(spec.store)
    run_id = None if fresh else store.find_resumable(data_sha, config_digest)
    resumed = run_id is not None
    if run_id is None:
        from lsrep.runner import _new_run_id

        run_id = _new_run_id(data_sha)
        store.create_run(run_id, spec.name, str(campaign.path), data_sha, config_digest, manifest)
    done = store.finished_units(run_id)
    counts = {"questions": 0, "run": 0, "failed": 0}
    gold_by_trajectory: dict[str, Any] = {}

    def tasks() -> Iterator[UnitTask]:
        for n, item in enumerate(iter_longmemeval(spec.data)):
            if spec.limit is not None and n >= spec.limit:
                return
            counts["questions"] += 1
            trajectory = item.as_trajectory()
            probes = ProbeSet(probes=(item.probe,))
            schedule = item_schedule(spec.schedule, item.checkpoint_time)
            plan = plan_replay(trajectory, schedule, probes)
            digest = plan.digest()
            todo = []
            for cond in spec.conditions:
                unit_id = f"{cond.name}/{item.trajectory_id}/r0"
                if unit_id in done:
                    continue
                todo.append(UnitTask(
                    run_id=run_id, unit_id=unit_id, condition=cond.name, system=cond.system,
                    options=dict(cond.options), disable=tuple(cond.disable), trajectory=trajectory, probes=probes,
                    plan=plan, plan_digest=digest, access=schedule.access,
                    answer_mode=cond.answer_mode or spec.answer_mode, answerer=spec.answerer,
                    embedder=spec.embedder, retrieval_budget=spec.retrieval_budget, repetition=0,
                    seed=unit_seed(spec.seed, cond.name, item.trajectory_id, 0), store_path=str(store.path),
                ))
            if todo:
                store.write_turns(run_id, item.trajectory_id, turn_rows(run_id, trajectory, plan))
                gold_by_trajectory[item.trajectory_id] = [item, trajectory, len(todo)]
            yield from todo

    from lsrep.judge.campaign import build_judge, judge_unit_tables

    judges = [(j, build_judge(j, store.path)) for j in spec.judges if j.kind != "deterministic"]
    executor = executor or InProcessExecutor()
    from lsrep.progress import RunProgress

    # Questions stream from the file, so the total is known only with a limit.
    total = None if spec.limit is None else spec.limit * len(spec.conditions)
    bar = RunProgress(total=total, done=len(done), mode=progress)
    try:
        for result in executor.run(tasks()):
            _attach_gold(result, gold_by_trajectory)
            if judges:
                judge_unit_tables(result.tables, judges)
            store.write_unit(result.unit, result.tables)
            counts["run"] += 1
            counts["failed"] += result.unit["status"] == "failed"
            bar.unit_done(result)
            _release(result, gold_by_trajectory)
    finally:
        bar.close()
    store.finish_run(run_id)
    return DiagnosticOutcome(run_id, store.path, resumed, counts["questions"], counts["run"], len(done),
                             counts["failed"])


def _release(result: UnitResult, gold: dict[str, Any]) -> None:
    # Once every condition of a question has landed, its gold labels can go.
    entry = gold.get(result.unit["trajectory"])
    if entry is not None:
        entry[2] -= 1
        if entry[2] <= 0:
            gold.pop(result.unit["trajectory"], None)


def _attach_gold(result: UnitResult, gold: dict[str, Any]) -> None:
    """Retrieval recall at turn and session level, computed by the harness from gold labels."""
    entry = gold.get(result.unit["trajectory"])
    if entry is None:
        return
    item, trajectory = entry[0], entry[1]
    session_of = {t.turn_id: t.session_id for t in trajectory.turns}
    evidence = set(item.gold.evidence_turn_ids)
    answer_sessions = set(item.gold.answer_sessions)
    returned: dict[str, set[str]] = {}
    for frag in result.tables.get("fragments", []):
        returned.setdefault(frag["obs_id"], set()).update(json.loads(frag["source_turn_ids"]))
    rows = []
    for obs in result.tables.get("observations", []):
        ids = returned.get(obs["obs_id"], set())
        sessions = {session_of[t] for t in ids if t in session_of}
        rows.append({
            "obs_id": obs["obs_id"], "run_id": obs["run_id"], "question_id": item.question_id,
            "question_type": item.question_type,
            "turn_recall": len(ids & evidence) / len(evidence) if evidence else None,
            "session_recall": len(sessions & answer_sessions) / len(answer_sessions) if answer_sessions else None,
            "n_evidence_turns": len(evidence), "n_answer_sessions": len(answer_sessions),
        })
    result.tables["retrieval_gold"] = rows
