"""Everything `lsrep run` checks before it writes anything; `lsrep validate` runs exactly this.

One path for both commands, so a campaign that validates cannot fail at start-up, and a
start-up failure leaves the store as it was (it is not even created). Every error names
the file and the key or line, and what to change.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lsrep.errors import CampaignConfigError, InputError, LsrepError, pydantic_reason
from lsrep.protocol.campaign import LoadedCampaign, load_campaign


@dataclass(frozen=True)
class PreparedRun:
    """A campaign whose inputs loaded, conditions validated and plans were built."""

    campaign: LoadedCampaign
    inputs: dict[str, Any]
    conditions: dict[str, Any]
    plans: dict[tuple[str, str], Any]
    manifest: dict[str, Any]
    input_digest: str
    plan_digest: str
    store_path: Path
    host_mode: str = "process"
    """Where adapters run (`lsrep.host`): `process` (default) or `in-process`."""

    def describe(self) -> str:
        spec = self.campaign.spec
        n_obs = sum(len(cp.probes) for plan, _ in self.plans.values() for cp in plan.checkpoints)
        return (f"campaign {spec.name!r}: {len(spec.conditions)} condition(s), {len(self.inputs)} trajectory(ies), "
                f"{n_obs * spec.repetitions} planned observation(s)")


def prepare_run(path: Path | str, store_path: Path | str | None = None, *, overrides: tuple[str, ...] = (),
                conditions: list[str] | None = None, trajectories: list[str] | None = None,
                limit: int | None = None, adapter_host: str | None = None) -> PreparedRun:
    """Load, validate and plan a campaign without touching the store.

    `overrides`, `conditions`, `trajectories` and `limit` change what runs (`lsrep.protocol.overrides`)
    and are part of the run's identity; `adapter_host` overrides the campaign's `adapter_host`.
    """
    from lsrep.host import check_mode, describe_host
    from lsrep.runner import build_manifest, load_inputs, plan_all

    campaign = load_campaign(path, overrides=overrides, conditions=conditions, trajectories=trajectories)
    host_mode = check_mode(adapter_host or campaign.spec.adapter_host)
    where = campaign.path
    store = Path(store_path).resolve() if store_path else campaign.store_path
    from lsrep.store_lock import open_error

    problem = open_error(store)
    if problem:
        raise InputError(store, f"{problem} (store of campaign {where})")
    from lsrep.host.sandbox import protect

    # Adapter hosts started from now on cannot see these (lsrep/host/sandbox.py).
    files = list(campaign.input_files.values())
    protect(campaign.path, campaign.path.parent, store, store.parent, *files, *(f.parent for f in files))
    inputs = load_inputs(campaign, limit)
    _check_storable(campaign, inputs)
    described = _validate_conditions(campaign)
    plans = plan_all(campaign, inputs)
    _check_measures_something(campaign, inputs, plans)
    try:
        manifest = build_manifest(campaign, described, plans)
        _check_judges(campaign)
    except ValidationError as exc:
        raise InputError(where, f"answerer/embedder/judge settings: {pydantic_reason(exc)}") from None
    except InputError:
        raise
    except LsrepError as exc:
        raise CampaignConfigError(where, str(exc)) from None
    _register_endpoint_keys(campaign)
    _check_memory_models(campaign)
    manifest["adapter_host"] = describe_host(host_mode)
    from lsrep.host.clock import describe_clock

    manifest["clock"] = describe_clock(host_mode, campaign.spec.simulated_clock)
    if limit is not None:
        manifest["limit"] = limit
    identity: dict[str, Any] = {k: v["sha256"] for k, v in manifest["inputs"].items()}
    if campaign.overrides:
        identity["overrides"] = list(campaign.overrides)
    input_digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    plan_digest = hashlib.sha256(json.dumps(manifest["plans"], sort_keys=True).encode()).hexdigest()
    return PreparedRun(campaign, inputs, described, plans, manifest, input_digest, plan_digest, store, host_mode)


def _validate_conditions(campaign: LoadedCampaign) -> dict[str, Any]:
    from lsrep.runner import validate_campaign

    try:
        return validate_campaign(campaign)
    except InputError:
        raise
    except LsrepError as exc:
        raise CampaignConfigError(campaign.path, f"[[conditions]]: {exc}") from None


def _check_judges(campaign: LoadedCampaign) -> None:
    from lsrep.judge.campaign import build_judge

    for judge in campaign.spec.judges:
        build_judge(judge, None)


def _register_endpoint_keys(campaign: LoadedCampaign) -> None:
    # Every configured key is known to the redactor before any call can echo it, and a key
    # that is not set fails here rather than as one failed call per observation.
    from lsrep.redact import register_secret

    spec = campaign.spec
    endpoints = [("answerer", spec.answerer.endpoint if spec.answerer.kind == "llm" else None),
                 ("embedder", spec.embedder.endpoint if spec.embedder.kind == "openai" else None)]
    endpoints += [(f"judges[{j.name}]", j.endpoint) for j in spec.judges if j.kind != "deterministic"]
    for role, endpoint in endpoints:
        if endpoint is None or not endpoint.api_key_env:
            continue
        value = os.environ.get(endpoint.api_key_env, "")
        if not value:
            raise InputError(campaign.path, f"{role}.endpoint.api_key_env: environment variable "
                             f"{endpoint.api_key_env} is not set; export it (keys are read from the environment, "
                             "never from the file) or name the variable that holds the key")
        register_secret(value)


def _check_memory_models(campaign: LoadedCampaign) -> None:
    # The memory-side tables (docs/memory-model.md): each key set and known to the redactor, each
    # key used where it means something.
    from lsrep.memory_model.config import table_problems
    from lsrep.redact import register_secret

    for where, problem, key in table_problems(campaign.spec, os.environ):
        if problem:
            raise InputError(campaign.path, f"{where}: {problem}")
        register_secret(key)


def _check_storable(campaign: LoadedCampaign, inputs) -> None:
    # Native files are checked line by line as they load; converted and generated sources
    # (LoCoMo, generators) get the same guarantee here: every text can be stored as UTF-8.
    for tid, (trajectory, probes) in inputs.items():
        source = campaign.input_files.get(f"locomo:{tid}") or campaign.input_files.get(f"trajectory:{tid}") \
            or campaign.path
        texts = [(f"turn {t.turn_id!r} {name}", getattr(t, name) or "") for t in trajectory.turns
                 for name in ("turn_id", "session_id", "role", "speaker", "content")]
        texts += [(f"probe {p.probe_id!r} question", p.question) for p in probes.probes]
        texts += [(f"probe {p.probe_id!r} answer", v.answer) for p in probes.probes for v in p.references]
        for what, text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(source, f"trajectory {tid!r}: {what} holds a lone surrogate, which cannot be "
                                 "stored as UTF-8 text; fix the source text") from None


def _check_measures_something(campaign: LoadedCampaign, inputs, plans) -> None:
    spec = campaign.spec
    for cond in spec.conditions:
        schedule = campaign.condition_schedules[cond.name]
        source = campaign.input_files.get(f"schedule:{cond.name}") or campaign.input_files.get("schedule") or campaign.path
        for tid, (trajectory, _probes) in inputs.items():
            index = trajectory.index_of()
            missing = [t for t in schedule.checkpoints.turn_ids if t not in index]
            if "turn_ids" in schedule.checkpoints.at and missing:
                raise InputError(source, f"checkpoints.turn_ids: {', '.join(map(repr, missing[:5]))} match no turn of "
                                 f"trajectory {tid!r}; fix the turn ids")
            plan, _ = plans[(cond.name, tid)]
            if not plan.checkpoints:
                raise InputError(source, f"checkpoints.at: schedule {schedule.name!r} closes no checkpoint on "
                                 f"trajectory {tid!r} (condition {cond.name!r}), so nothing would be measured; "
                                 "add a trigger such as 'session_end' or 'end'")
            if not any(cp.probes for cp in plan.checkpoints):
                raise InputError(campaign.input_files.get(f"probes:{tid}", campaign.path),
                                 f"no probe of trajectory {tid!r} is asked at any checkpoint of schedule "
                                 f"{schedule.name!r}, so nothing would be measured; check ask_at and the references")
