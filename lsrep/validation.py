"""`lsrep validate`: run the loaders' checks alone, on any native file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from lsrep.errors import InputError


def _first_record(path: Path) -> dict:
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(path, f"invalid JSON: {exc.msg}", lineno) from None
                    if not isinstance(record, dict):
                        raise InputError(path, "each line must be a JSON object", lineno)
                    return record
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    raise InputError(path, "file has no records")


def validate_path(path: Path, probes_for: str | None = None) -> str:
    """Validate one file; return a one-line description of what it holds."""
    from lsrep.protocol.campaign import load_campaign, load_schedule
    from lsrep.protocol.loading import load_probes, load_trajectory

    if path.suffix == ".toml":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(path, "file not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(path, f"invalid TOML: {exc}") from None
        if data.get("diagnostic") == "longmemeval" or ("conditions" in data and "trajectories" not in data):
            from lsrep.longmemeval import validate_longmemeval_campaign

            return validate_longmemeval_campaign(path)
        if "conditions" in data or "trajectories" in data:
            from lsrep.runner import load_inputs, plan_all, validate_campaign

            campaign = load_campaign(path)
            inputs = load_inputs(campaign)
            validate_campaign(campaign)
            plans = plan_all(campaign, inputs)
            n_obs = sum(len(cp.probes) for plan, _ in plans.values() for cp in plan.checkpoints)
            return (f"campaign {campaign.spec.name!r}: {len(campaign.spec.conditions)} condition(s), "
                    f"{len(inputs)} trajectory(ies), {n_obs * campaign.spec.repetitions} planned observation(s)")
        schedule = load_schedule(path)
        return f"schedule {schedule.name!r} v{schedule.version} ({schedule.access}, {schedule.clock} clock)"
    record = _first_record(path)
    if "turn_id" in record:
        t = load_trajectory(path)
        sessions = len({turn.session_id for turn in t.turns})
        return f"trajectory: {len(t.turns)} turns in {sessions} session(s)"
    if "probe_id" in record:
        if probes_for is None:
            raise InputError(path, "a probe file is checked against its trajectory: pass --trajectory FILE")
        probes = load_probes(path, load_trajectory(Path(probes_for)))
        kinds = sorted({p.kind for p in probes.probes})
        return f"probes: {len(probes.probes)} ({', '.join(kinds)})"
    raise InputError(path, "neither a trajectory (turn_id) nor a probe set (probe_id)", 1)
