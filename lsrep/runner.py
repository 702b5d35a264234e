"""Running a campaign: validate everything, plan, then replay each unit and store it.

Nothing is written to the store until every input has loaded and every
condition has validated, so a bad file never leaves a partial run. A unit's
rows land in one transaction; re-running an interrupted campaign finds the
unfinished run with the same inputs and plan and replays only the units that
have not landed.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from lsrep import __version__
from lsrep.answer import make_answerer
from lsrep.collector import replaying
from lsrep.contract import DETERMINISM_VALUES, WHEN_MODEL_IS, expects_determinism
from lsrep.embed import make_embedder
from lsrep.engine import UnitTask
from lsrep.errors import ConfigError
from lsrep.executors.local import Executor, InProcessExecutor
from lsrep.harness import validate_condition
from lsrep.headline import CALIBRATION_SYSTEMS
from lsrep.judge.campaign import build_judge, judge_unit_tables
from lsrep.plan import ReplayPlan, plan_replay
from lsrep.protocol.campaign import LoadedCampaign
from lsrep.protocol.loading import load_probes, load_trajectory
from lsrep.protocol.models import ProbeSet, Trajectory
from lsrep.store import RunStore
from lsrep.unit import state_digests_needed, unit_seed


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    store_path: Path
    resumed: bool
    units_run: int
    units_skipped: int
    failed_units: int
    already_finished: bool = False
    """Nothing was replayed: a finished run of the same inputs and plan exists (`--fresh` redoes it)."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_inputs(campaign: LoadedCampaign, limit: int | None = None) -> dict[str, tuple[Trajectory, ProbeSet]]:
    """Every trajectory and its probes; `limit` keeps the first N probes of each (`--limit`)."""
    data = _load_inputs(campaign)
    if limit is not None:
        data = {tid: (t, ProbeSet(probes=p.probes[:limit])) for tid, (t, p) in data.items()}
    return data


def _load_inputs(campaign: LoadedCampaign) -> dict[str, tuple[Trajectory, ProbeSet]]:
    from lsrep.registry import SOURCES

    data = {}
    for t in campaign.spec.trajectories:
        # Non-native sources come from the `lsrep.sources` entry points (lsrep.probes.sources).
        if t.locomo is not None:
            data[t.id] = SOURCES.load("locomo")(t.locomo, t.conversation or t.id, t.id)
            continue
        if t.generate is not None:
            data[t.id] = SOURCES.load("generate")(campaign.path, t.id, t.generate)
            continue
        trajectory = load_trajectory(t.trajectory, trajectory_id=t.id)
        data[t.id] = (trajectory, load_probes(t.probes, trajectory))
    return data


def validate_campaign(campaign: LoadedCampaign) -> dict[str, Any]:
    """Check every condition against its adapter; return per-condition adapter descriptions."""
    spec = campaign.spec
    described = {}
    for cond in spec.conditions:
        if cond.name in CALIBRATION_SYSTEMS or cond.system in CALIBRATION_SYSTEMS:
            raise ConfigError(f"condition {cond.name!r}: {', '.join(CALIBRATION_SYSTEMS)} are calibration systems "
                              "of the harness (lsrep calibrate), not systems a campaign can run or name")
        cls, opts = validate_condition(cond.system, cond.options, cond.disable, cond.name)
        schedule = campaign.condition_schedules[cond.name]
        if schedule.access == "isolated" and not cls.supports_snapshot:
            raise ConfigError(
                f"condition {cond.name!r}: schedule access 'isolated' needs snapshot/restore, "
                f"which {cond.system!r} does not support (refusing rather than falling back)"
            )
        mode = cond.answer_mode or spec.answer_mode
        if cls.deterministic not in DETERMINISM_VALUES:
            raise ConfigError(f"condition {cond.name!r}: {cls.__qualname__}.deterministic = {cls.deterministic!r}; "
                              f"expected True, False or {WHEN_MODEL_IS!r}")
        models = models_deterministic(spec, cond)
        if mode == "system" and not cls.answers:
            raise ConfigError(f"condition {cond.name!r}: system mode, but {cond.system!r} has no answering stage")
        described[cond.name] = {
            "system": cond.system, "adapter": f"{cls.__module__}:{cls.__qualname__}",
            "adapter_version": cls.version, "options": opts.model_dump(mode="json"),
            "disable": list(cond.disable), "answer_mode": mode,
            "context_format": cond.context_format or spec.context_format, "schedule": schedule.model_dump(mode="json"),
            "mechanisms": [m.name for m in cls.mechanisms],
            "mechanism_stages": {m.name: list(m.stages) for m in cls.mechanisms if m.stages},
            "maintenance_operations": sorted(cls.maintenance_operations),
            "honours_budget": cls.honours_budget, "deterministic": cls.deterministic, "embeds": cls.embeds,
            "models_deterministic": models,
            "distributions": distribution_versions(tuple(getattr(cls, "distributions", ()))),
            "deterministic_expected": expects_determinism(cls.deterministic, models_deterministic=models),
        }
    return described


def models_deterministic(spec: Any, cond: Any) -> bool:
    """Whether the models a condition's system is given reply deterministically: none, offline ones,
    or endpoints at temperature 0 (as the answerer's cache treats them). Decides `WHEN_MODEL_IS`."""
    models = [spec.answerer] + [getattr(x, "memory_llm", None) for x in (cond, spec)]
    for m in models:
        if m is None or getattr(m, "kind", None) in ("extractive", "offline"):
            continue
        endpoint = getattr(m, "endpoint", None) or m
        if float(getattr(endpoint, "temperature", 0.0) or 0.0) > 0:
            return False
    return True


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
    base = campaign.path.parent
    return {
        "lsrep_version": __version__,
        "campaign": _relative_paths(spec.model_dump(mode="json"), base),
        "campaign_path": campaign.path.name,
        "overrides": list(campaign.overrides),
        # Paths relative to the campaign file's folder: the manifest names no user's directories.
        "inputs": {role: {"path": _relative(p, base), "sha256": sha256_file(p)}
                   for role, p in sorted(campaign.input_files.items())},
        "conditions": {name: {**c, "options": _relative_files(c.get("options"), base)} for name, c in conditions.items()},
        "answerer": answerer.describe() | {"kind": spec.answerer.kind, "offline": spec.answerer.kind == "extractive"},
        "embedder": make_embedder(spec.embedder).name,
        "calibration_systems": list(CALIBRATION_SYSTEMS),
        "embedding_text": spec.embedder.text,
        "memory_models": _memory_models(spec),
        "judges": [{"name": "deterministic", "version": "1", "kind": "deterministic"}]
        + [j.model_dump(mode="json", exclude={"endpoint"}) | _endpoint_public(j.endpoint) for j in spec.judges],
        "plans": {f"{c}/{t}": d for (c, t), (_, d) in sorted(plans.items())},
        "packages": _package_versions() | {
            name: version for c in conditions.values() for name, version in c.get("distributions", {}).items()},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        # LSREP's own source revision (where the harness was installed from), not the campaign's.
        "git_revision": lsrep_revision(),
        "campaign_git_revision": _git_revision(campaign.path.parent),
    }


def _memory_models(spec) -> dict[str, Any]:
    from lsrep.memory_model.config import describe

    return describe(spec)


def _relative(path: Path | str, base: Path) -> str:
    path = Path(path)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def _relative_paths(campaign: dict[str, Any], base: Path) -> dict[str, Any]:
    """The campaign dump with its trajectory file paths relative to the campaign file."""
    trajectories = []
    for t in campaign.get("trajectories", []):
        t = dict(t)
        for key in ("trajectory", "probes", "locomo"):
            if t.get(key):
                t[key] = _relative(t[key], base)
        trajectories.append(t)
    conditions = [{**c, "options": _relative_files(c.get("options"), base)} for c in campaign.get("conditions", [])]
    return {**campaign, "trajectories": trajectories, "conditions": conditions}


def _relative_files(value: Any, base: Path) -> Any:
    """Option values naming files (resolved from `./`, `../` at load) relative to the campaign file again."""
    if isinstance(value, str) and os.path.isabs(value) and os.path.isfile(value):
        return _relative(value, base)
    if isinstance(value, dict):
        return {k: _relative_files(v, base) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_relative_files(v, base) for v in value]
    return value


def _endpoint_public(endpoint) -> dict[str, Any]:
    # The key's variable name is recorded; its value never is.
    if endpoint is None:
        return {}
    return {"endpoint": endpoint.model_dump(mode="json")}


def _package_versions() -> dict[str, str]:
    return distribution_versions(("lsrep", "pydantic", "sqlite-utils", "numpy", "scipy", "openai", "jinja2", "tqdm",
                                  "matplotlib"))


def distribution_versions(names: tuple[str, ...]) -> dict[str, str]:
    """Installed versions of the distributions an adapter declares (`MemoryAdapter.distributions`)."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def lsrep_revision() -> str | None:
    """The git revision of LSREP's own source (`-dirty` when it has uncommitted changes), or None
    when LSREP was not installed from a git checkout."""
    import lsrep

    where = Path(lsrep.__file__).resolve().parent
    revision = _git_revision(where)
    if revision is None:
        return None
    try:
        res = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return revision
    return f"{revision}-dirty" if res.returncode == 0 and res.stdout.strip() else revision


def _git_revision(where: Path) -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def _new_run_id(campaign_sha: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{campaign_sha[:6]}"


def run_campaign(path: Path | str, *, executor: Executor | None = None, progress: bool | str = False,
                 fresh: bool = False, store_path: Path | None = None, overrides: tuple[str, ...] = (),
                 conditions: list[str] | None = None, trajectories: list[str] | None = None,
                 limit: int | None = None, refresh_cache: bool = False,
                 adapter_host: str | None = None) -> RunOutcome:
    """Run (or resume) a campaign file; returns where the results are.

    Every check runs before the store is opened (`lsrep.preflight`). `overrides`, `conditions`,
    `trajectories` and `limit` change what runs (see `lsrep.protocol.overrides`); they are part
    of the run's identity, so a run with other overrides is never resumed into this one.
    `progress`: False, True (a bar in a terminal, log lines otherwise) or a `lsrep.progress`
    mode name. `adapter_host` overrides the campaign's (`process` or `in-process`).

    One process at a time runs a given campaign and plan on a store: a second one waits for
    the first, then resumes what it left or reports that the run is already finished. Ctrl-C
    marks the run `interrupted` (resumable) and raises `RunInterrupted`.
    """
    from lsrep.preflight import prepare_run
    from lsrep.progress import RunProgress
    from lsrep.store_lock import file_lock

    prep = prepare_run(path, store_path, overrides=overrides, conditions=conditions, trajectories=trajectories,
                       limit=limit, adapter_host=adapter_host)
    campaign, inputs, plans = prep.campaign, prep.inputs, prep.plans
    store = RunStore(prep.store_path)
    lock = store.lock_path(f"run-{hashlib.sha256((prep.input_digest + prep.plan_digest).encode()).hexdigest()[:16]}")

    def say_waiting() -> None:
        print(f"lsrep: another lsrep run of this campaign is using {store.path}; waiting for it", file=sys.stderr)

    with file_lock(lock, timeout_s=None, on_wait=say_waiting):
        if not fresh and (finished := _finished_run(store, prep.input_digest, prep.plan_digest)) is not None:
            units = store.rows("select count(*) as n, sum(status = 'failed') as failed from units where run_id = ?",
                               [finished])[0]
            return RunOutcome(finished, store.path, False, 0, units["n"], units["failed"] or 0,
                              already_finished=True)
        run_id = None if fresh else store.find_resumable(prep.input_digest, prep.plan_digest)
        resumed = run_id is not None
        if run_id is None:
            run_id = _new_run_id(prep.input_digest)
            store.create_run(run_id, campaign.spec.name, str(campaign.path), prep.input_digest, prep.plan_digest,
                             prep.manifest)
        else:
            store.mark_running(run_id)
        try:
            digests: dict[str, tuple[str, ...]] = {}
            for tid, (trajectory, _) in inputs.items():
                plan = plans[(campaign.spec.conditions[0].name, tid)][0]
                rows = turn_rows(run_id, trajectory, plan)
                digests[tid] = tuple(row["prefix_sha256"] for row in rows)
                store.write_turns(run_id, tid, rows)

            done = store.finished_units(run_id)
            refresh_before = datetime.now(UTC).isoformat() if refresh_cache else None
            tasks = [t for t in _tasks(run_id, campaign, inputs, plans, store.path, refresh_before, prep.host_mode,
                                       digests)
                     if t.unit_id not in done]
            judges = [(j, build_judge(j, store.path, refresh_before=refresh_before))
                      for j in campaign.spec.judges if j.kind != "deterministic"]
            executor = executor or InProcessExecutor()
            failed = 0
            # Only the driver draws progress: workers never write to the terminal.
            bar = RunProgress(total=len(tasks) + len(done), done=len(done), mode=progress)
            try:
                # The whole loop: between units too, where the driver writes rows and the last unit's
                # survivors would otherwise be examined at once under the default setting.
                with replaying():
                    for result in executor.run(tasks):
                        if judges:
                            judge_unit_tables(result.tables, judges)
                        store.write_unit(result.unit, result.tables)
                        failed += result.unit["status"] == "failed"
                        bar.unit_done(result)
            finally:
                bar.close()
                from lsrep.host import end_of_run

                end_of_run()
                from lsrep.engine import SHARED_INDEXES

                SHARED_INDEXES.forget()  # a turn index kept for a next unit of this run
        except KeyboardInterrupt:
            store.finish_run(run_id, status="interrupted")
            raise RunInterrupted(run_id, store.path) from None
        store.finish_run(run_id)
    return RunOutcome(run_id, store.path, resumed, len(tasks), len(done), failed)


def _finished_run(store: RunStore, input_digest: str, plan_digest: str) -> str | None:
    rows = store.rows("select run_id from runs where campaign_sha256 = ? and plan_digest = ? and "
                      "status = 'finished' order by created_at desc limit 1", [input_digest, plan_digest])
    return rows[0]["run_id"] if rows else None


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: the run is marked `interrupted` and resumes on the next `lsrep run`."""

    def __init__(self, run_id: str, store_path: Path) -> None:
        self.run_id, self.store_path = run_id, store_path
        super().__init__(f"interrupted; run {run_id} in {store_path} is marked 'interrupted' and resumes "
                         "when the same command runs again")


def _tasks(run_id: str, campaign: LoadedCampaign, inputs, plans, store_path: Path,
           refresh_before: str | None = None, host_mode: str = "process",
           digests: dict[str, tuple[str, ...]] | None = None) -> list[UnitTask]:
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
                    context_format=cond.context_format or spec.context_format, embedder=spec.embedder,
                    retrieval_budget=spec.retrieval_budget, repetition=rep,
                    seed=unit_seed(spec.seed, cond.name, tid, rep), store_path=str(store_path),
                    refresh_cache_before=refresh_before, adapter_host=host_mode,
                    enforce_budget=spec.enforce_budget, memory_llm=cond.memory_llm or spec.memory_llm,
                    memory_embedder=cond.memory_embedder or spec.memory_embedder,
                    state_digests=state_digests_needed(schedule.access, spec.repetitions),
                    simulated_clock=spec.simulated_clock, prefix_sha256=(digests or {}).get(tid, ()),
                    trajectory_follows=rep + 1 < spec.repetitions,
                ))
    return tasks


def turn_rows(run_id: str, trajectory: Trajectory, plan: ReplayPlan,
              digests: Sequence[str] | None = None) -> list[dict]:
    """Store rows for a trajectory's turns, with simulated times and running prefix hashes
    (`digests`, where the caller has them already)."""
    from lsrep.prefix_hash import prefix_hashes

    if digests is None:
        digests = prefix_hashes(trajectory.turns)
    return [{
        "run_id": run_id, "trajectory": trajectory.trajectory_id, "idx": i, "turn_id": turn.turn_id,
        "session_id": turn.session_id, "timestamp": turn.timestamp.isoformat(),
        "sim_time": plan.sim_times[i].isoformat(), "role": turn.role, "speaker": turn.speaker,
        "content": turn.content, "prefix_sha256": digest,
    } for i, (turn, digest) in enumerate(zip(trajectory.turns, digests, strict=True))]
