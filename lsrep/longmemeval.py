"""LongMemEval matched diagnostics: same answerer, same judge, different memory.

Each question is its own trajectory (its haystack sessions in date order), observed
once at the question's date. The file is streamed: one question is converted,
replayed into every condition, stored and dropped before the next is read, so memory
stays bounded on the S and M files. Gold labels (`has_answer`, answer session ids)
stay in the harness: they score retrieval and never reach an adapter.

LongMemEval's own metrics (:mod:`lsrep.longmemeval_metrics`) are computed as each
unit lands and kept in `lme_questions`; `lsrep.longmemeval_export` writes them in the
official file formats. Turn text is not stored (the input file, whose SHA-256 the
manifest records, holds it): a haystack is hundreds of turns per question and the
store would otherwise outgrow the input.

Each condition replays a question either as its haystack sessions
(``conversation = "sessions"``, the default: a fresh conversation per question with
session boundaries kept) or as one conversation (``"single"``: the same turns as
one session).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lsrep.answer import memo as answer_memo
from lsrep.collector import replaying
from lsrep.engine import UnitResult, UnitTask, unit_seed
from lsrep.errors import InputError, pydantic_reason
from lsrep.executors.local import Executor, InProcessExecutor
from lsrep.plan import plan_replay
from lsrep.prefix_hash import prefix_hashes
from lsrep.protocol.campaign import (
    AnswererSpec,
    ConditionSpec,
    EmbedderSpec,
    EndpointRef,
    JudgeSpec,
    LoadedCampaign,
    ScheduleSpec,
    load_schedule,
)
from lsrep.protocol.models import ProbeSet
from lsrep.protocol.schedule import CheckpointSpec
from lsrep.runner import build_manifest, turn_rows, validate_campaign
from lsrep.store import RunStore
from lsrep.unit import state_digests_needed

Conversation = Literal["sessions", "single"]


class LongMemEvalCondition(ConditionSpec):
    """A condition of a LongMemEval campaign: a system, and how each question is replayed."""

    conversation: Conversation | None = None
    """`sessions` (haystack sessions kept) or `single` (one conversation); default: the campaign's."""


class OfficialJudgeSpec(BaseModel):
    """The official LongMemEval judge, used when its endpoint is configured in the environment.

    Offline (the variable unset) the deterministic judge alone labels the run, and the
    tables say it is not the official one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "gpt-4o"
    """Judge name (also the `eval-results-<name>` suffix of the export)."""
    base_url_env: str = "LSREP_LME_JUDGE_BASE_URL"
    """Environment variable holding the OpenAI-compatible base URL (e.g. `https://.../v1`)."""
    model: str = "gpt-4o-2024-08-06"
    """The model LongMemEval's results use (what the official print_qa_metrics.py asserts)."""
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(default=4, ge=1)

    def judge(self) -> JudgeSpec | None:
        url = os.environ.get(self.base_url_env)
        if not url:
            return None
        return JudgeSpec(name=self.name, kind="longmemeval", endpoint=EndpointRef(
            base_url=url, model=self.model, api_key_env=self.api_key_env, concurrency=self.concurrency))


class LongMemEvalSpec(BaseModel):
    """A LongMemEval diagnostic campaign (TOML); the data path may come from the command line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    diagnostic: Literal["longmemeval"] = "longmemeval"
    """Marks the file as a LongMemEval campaign (for `lsrep validate` and `lsrep run`)."""
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
    conversation: Conversation = "sessions"
    """How each question is replayed: its haystack sessions, or one single conversation."""
    conditions: tuple[LongMemEvalCondition | ConditionSpec, ...] = Field(min_length=1)
    answerer: AnswererSpec = AnswererSpec()
    judges: tuple[JudgeSpec, ...] = ()
    official_judge: OfficialJudgeSpec | None = None
    """Add the official `longmemeval` judge when its endpoint variable is set."""
    embedder: EmbedderSpec = EmbedderSpec()
    compare: tuple[tuple[str, str], ...] = ()
    limit: int | None = Field(default=None, ge=1)
    """Only the first N questions kept by the filters (for smoke runs)."""
    types: tuple[str, ...] = ()
    """Only these question types (default: all)."""
    questions: tuple[str, ...] = ()
    """Only these question ids (default: all)."""

    def conversation_of(self, condition: ConditionSpec) -> Conversation:
        return getattr(condition, "conversation", None) or self.conversation


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


def validate_longmemeval_campaign(path: Path) -> str:
    """`lsrep validate` for a LongMemEval campaign: the spec, its schedule, conditions, judges, data."""
    path = Path(path).resolve()
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        spec = LongMemEvalSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(path, f"bad LongMemEval campaign: {pydantic_reason(exc)}") from None
    data = (path.parent / spec.data).resolve() if spec.data is not None else None
    if data is not None and not data.exists():
        raise InputError(path, f"data file {data} not found")
    schedule = spec.schedule if isinstance(spec.schedule, ScheduleSpec) else load_schedule(
        (path.parent / spec.schedule).resolve())
    resolved = spec.model_copy(update={"data": data or path, "store": (path.parent / spec.store).resolve(),
                                       "schedule": schedule})
    validate_campaign(_as_campaign(resolved, path))
    modes = sorted({spec.conversation_of(c) for c in spec.conditions})
    judges = ", ".join(["deterministic", *(f"{j.name} ({j.kind})" for j in spec.judges)])
    if spec.official_judge is not None:
        official = spec.official_judge
        judges += (f", {official.name} (official longmemeval judge, {official.model}) when "
                   f"{official.base_url_env} is set")
    where = f"data {data}" if data else "data from --data"
    return (f"LongMemEval campaign {spec.name!r}: {len(spec.conditions)} condition(s), conversation "
            f"{'/'.join(modes)}, judges: {judges}; {where}; run it with "
            f"`lsrep longmemeval --campaign {path.name}" + ("`" if data else " --data PATH`"))


def spec_from_systems(systems: list[str], data: Path, **kw: Any) -> LongMemEvalSpec:
    conditions = tuple(LongMemEvalCondition(name=s, system=s) for s in systems)
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
    judges = spec.judges
    official = spec.official_judge.judge() if spec.official_judge else None
    if official is not None and all(j.name != official.name for j in judges):
        judges = (*judges, official)
    return spec.model_copy(update={"data": data, "store": res(spec.store), "schedule": schedule,
                                   "judges": judges})


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
        trajectories=(placeholder,),
        conditions=tuple(ConditionSpec(**c.model_dump(exclude={"conversation"})) for c in spec.conditions),
        answerer=spec.answerer, judges=spec.judges,
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
    campaign = _as_campaign(spec, source or spec.data)
    conditions = validate_campaign(campaign)
    manifest = build_manifest(campaign, conditions, {})
    manifest["diagnostic"] = "longmemeval"
    modes = {c.name: spec.conversation_of(c) for c in spec.conditions}
    manifest["longmemeval"] = {"conversation": modes, "limit": spec.limit, "types": list(spec.types),
                               "questions": list(spec.questions)}
    data_sha = manifest["inputs"]["longmemeval"]["sha256"]
    config_digest = hashlib.sha256(json.dumps(
        {"conditions": conditions, "answerer": manifest["answerer"], "embedder": manifest["embedder"],
         "limit": spec.limit, "budget": spec.retrieval_budget, "mode": spec.answer_mode,
         "conversation": modes, "types": list(spec.types), "questions": list(spec.questions),
         "judges": [j.model_dump(mode="json") for j in spec.judges]},
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
    gold_by_unit: dict[str, tuple[int, Any]] = {}
    pending_turns: dict[str, list[dict[str, Any]]] = {}

    def tasks() -> Iterator[UnitTask]:
        for position, item in enumerate(select_items(spec)):
            counts["questions"] += 1
            probes = ProbeSet(probes=(item.probe,))
            schedule = item_schedule(spec.schedule, item.checkpoint_time)
            built: dict[str, tuple[Any, Any, str]] = {}
            # (condition, mode, trajectory id, unit id) of this question's units not done yet, in task order.
            todo = []
            for cond in spec.conditions:
                mode = modes[cond.name]
                trajectory_id = item.trajectory_id + ("" if mode == "sessions" else "-single")
                unit_id = f"{cond.name}/{trajectory_id}/r0"
                if unit_id not in done:
                    todo.append((cond, mode, trajectory_id, unit_id))
            for i, (cond, mode, trajectory_id, unit_id) in enumerate(todo):
                if mode not in built:
                    trajectory = item.as_trajectory(mode)
                    if mode != "sessions":
                        trajectory = trajectory.model_copy(update={"trajectory_id": trajectory_id})
                    plan = plan_replay(trajectory, schedule, probes)
                    # Hashed once here, for the turn rows and every unit's task.
                    built[mode] = (trajectory, plan, plan.digest(), tuple(prefix_hashes(trajectory.turns)))
                    if not store.rows("select 1 from turns where run_id = ? and trajectory = ? limit 1",
                                      [run_id, trajectory_id]):
                        # Stored with the first unit of this trajectory to land, in its transaction.
                        pending_turns[trajectory_id] = _turn_rows(run_id, trajectory, plan, built[mode][3])
                trajectory, plan, digest, prefix = built[mode]
                gold_by_unit[unit_id] = (position, item)
                yield UnitTask(
                    run_id=run_id, unit_id=unit_id, condition=cond.name, system=cond.system,
                    options=dict(cond.options), disable=tuple(cond.disable), trajectory=trajectory, probes=probes,
                    plan=plan, plan_digest=digest, access=schedule.access,
                    answer_mode=cond.answer_mode or spec.answer_mode, answerer=spec.answerer,
                    embedder=spec.embedder, retrieval_budget=spec.retrieval_budget, repetition=0,
                    seed=unit_seed(spec.seed, cond.name, item.trajectory_id, 0), store_path=str(store.path),
                    prefix_sha256=prefix,
                    state_digests=state_digests_needed(schedule.access, repetitions=1),
                    trajectory_follows=i + 1 < len(todo) and todo[i + 1][2] == trajectory_id,
                )

    from lsrep.judge.campaign import build_judge, judge_observations

    judges = [(j, build_judge(j, store.path)) for j in spec.judges if j.kind != "deterministic"]
    executor = executor or InProcessExecutor()
    from lsrep.progress import RunProgress

    # Questions stream from the file, so the total is known only with a limit.
    total = None if spec.limit is None else spec.limit * len(spec.conditions)
    bar = RunProgress(total=total, done=len(done), mode=progress)
    run_all = None
    try:
        with replaying():  # the whole loop, as `lsrep run` (lsrep.collector)
            run_all = executor.run(tasks())
            for result in run_all:
                position, item = gold_by_unit.pop(result.unit["unit_id"])
                result.tables["lme_questions"] = question_rows(result, position, item)
                turns = pending_turns.pop(result.unit["trajectory"], None)
                if turns:
                    result.tables["turns"] = turns
                for jspec, judge in judges:
                    rows, calls = judge_observations(
                        jspec.name, judge, result.tables.get("observations", []),
                        workers=jspec.endpoint.concurrency if jspec.endpoint else 1,
                        case_for=lambda row, item=item: official_case(row, item))
                    result.tables.setdefault("judgements", []).extend(rows)
                    result.tables.setdefault("llm_calls", []).extend(calls)
                store.write_unit(result.unit, result.tables)
                # A question's contexts come from its own haystack, so the offline reader's memo seldom
                # serves the next question: emptied after each, it holds one question's entries at most
                # (kept whole, 500 S questions filled its bounds: the driver's PSS went 300 -> 391 MB).
                answer_memo.clear()
                counts["run"] += 1
                counts["failed"] += result.unit["status"] == "failed"
                bar.unit_done(result)
    except KeyboardInterrupt:
        # As `lsrep run`: the run is marked, and the same command resumes it (workers stopped first).
        from lsrep.runner import RunInterrupted

        if run_all is not None:
            run_all.close()
        store.finish_run(run_id, status="interrupted")
        raise RunInterrupted(run_id, store.path) from None
    finally:
        bar.close()
        from lsrep.host import end_of_run

        end_of_run()
        from lsrep.engine import SHARED_INDEXES

        SHARED_INDEXES.forget()  # a turn index kept for a next unit of this run
    store.finish_run(run_id)
    return DiagnosticOutcome(run_id, store.path, resumed, counts["questions"], counts["run"], len(done),
                             counts["failed"])


MEMORY_BUDGET_MB = 300
"""Default memory budget of a diagnostic: every process of the run, adapter hosts included (PSS)."""
_DRIVER_MB, _SHARD_MB = 150, 120
"""Peak PSS at S scale (benchmarks/longmemeval_diagnostic.py): this process with its fork server
and one adapter host; each further process running units (its interpreter, fork server and host)."""


def usable_cores() -> int:
    from lsrep.executors.overlap import usable_cores as cores

    return cores()


def default_workers(memory_mb: int = MEMORY_BUDGET_MB) -> int:
    """Processes running units by default: the usable cores (CPU affinity), capped by memory.

    Not the cores idle at start: the operating system shares busy cores between the processes, so
    a second process on a loaded machine costs its start-up (an interpreter importing LSREP, ~1.5
    CPU s) and nothing per question, while on a free core it halves the harness's share of the wall
    time. Within the 300 MB default two processes fit at S scale (`_DRIVER_MB`, `_SHARD_MB`)."""
    by_memory = 1 + (memory_mb - _DRIVER_MB) // _SHARD_MB
    return max(1, min(usable_cores(), by_memory))


OVERLAP_MB = 600
"""Memory budget from which one process overlaps units of any length in threads. Two units in
flight hold two trajectories, two turn indexes and two hosts: at M scale (~5,000 turns a question)
measured 536 MB tree RSS overlapped against 380 MB one at a time."""
OVERLAP_TURNS = 2000
"""Otherwise only questions of at most this many turns run side by side (S: ~500 turns, measured
within the 300 MB default); a longer one (M: ~5,000) runs alone, after the units before it."""
LONG_MB = 330
"""Memory per process running a question longer than `OVERLAP_TURNS` (M scale: one process, its
fork server and host, peak PSS 332 MB; two processes side by side 653 MB): sharded processes run
long questions side by side only when the budget holds this much for each of them."""


def default_executor(name: str, workers: int, memory_mb: int = MEMORY_BUDGET_MB, address: str | None = None):
    """`make_executor`, except for `auto`: with two or more workers, this process and `workers - 1`
    spawned ones, results in question order (`lsrep.executors.shard`), long questions side by side
    from `workers * LONG_MB`; with one, two units at a time in threads where two cores are usable
    (`lsrep.executors.overlap`), long ones from `OVERLAP_MB`. Below those budgets a question of more
    than `OVERLAP_TURNS` turns runs alone."""
    from lsrep.executors import make_executor

    if name == "auto" and workers >= 2:
        from lsrep.executors.shard import ShardedExecutor

        long_too = memory_mb >= workers * LONG_MB
        # A worker empties the offline reader's memo after each question, as the driver does here.
        return ShardedExecutor(workers, max_turns=None if long_too else OVERLAP_TURNS, after_unit=answer_memo.clear)
    if name == "auto" and memory_mb >= MEMORY_BUDGET_MB:
        from lsrep.executors.overlap import OverlappedExecutor

        if usable_cores() >= 2:
            return OverlappedExecutor(2, max_turns=None if memory_mb >= OVERLAP_MB else OVERLAP_TURNS)
    return make_executor(name, workers, address)


def select_items(spec: LongMemEvalSpec) -> Iterator[Any]:
    """The questions a spec runs, streamed: `questions`, then `types`, then the first `limit`."""
    from lsrep.registry import SOURCES

    iter_longmemeval = SOURCES.load("longmemeval")  # lsrep.probes.sources, an entry point
    wanted = set(spec.questions) or None
    types = set(spec.types)
    kept = 0
    for item in iter_longmemeval(spec.data, question_ids=wanted):
        if types and item.question_type not in types:
            continue
        if spec.limit is not None and kept >= spec.limit:
            return
        kept += 1
        yield item


def _turn_rows(run_id: str, trajectory: Any, plan: Any, digests: tuple[str, ...]) -> list[dict]:
    # The text stays in the input file (its digest is in the manifest): not stored per question.
    rows = turn_rows(run_id, trajectory, plan, digests)
    for row in rows:
        row["content"] = None
    return rows


def official_case(row: dict[str, Any], item: Any):
    """A judge case whose reference is the file's answer text (for `_abs`: the explanation)."""
    from lsrep.judge.campaign import case_from_row
    from lsrep.judge.verdict import VersionView

    case = case_from_row(row)
    official = VersionView(answer=item.gold.answer, valid_from=item.trajectory[0].turn_id)
    return case.model_copy(update={"in_force": (official,)})


def question_rows(result: UnitResult, position: int, item: Any) -> list[dict[str, Any]]:
    """Per observation: the system's ranking as official corpus ids and the official metrics."""
    from lsrep.longmemeval_metrics import rank_corpus, retrieval_metrics

    corpus_position = {turn: i for i, turn in enumerate(item.gold.corpus_turns)}
    cited: dict[str, list[list[str]]] = {}
    for frag in sorted(result.tables.get("fragments", []), key=lambda f: (f["obs_id"], f["rank"])):
        cited.setdefault(frag["obs_id"], []).append(json.loads(frag["source_turn_ids"] or "[]"))
    rows = []
    for obs in result.tables.get("observations", []):
        ranking = rank_corpus(cited.get(obs["obs_id"], ()), corpus_position)
        rows.append({
            "obs_id": obs["obs_id"], "run_id": obs["run_id"], "condition": obs["condition"],
            "position": position, "question_id": item.question_id, "question_type": item.question_type,
            "answer": item.gold.answer, "n_corpus": len(item.gold.corpus_ids),
            "user_target": int(item.gold.user_target),
            "ranked": json.dumps([item.gold.corpus_ids[i] for i in ranking]),
            "metrics": json.dumps(retrieval_metrics(ranking, item.gold.corpus_ids), sort_keys=True),
        })
    return rows
