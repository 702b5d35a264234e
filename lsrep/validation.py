"""`lsrep validate`: run the loaders' checks alone, on any native file."""

from __future__ import annotations

from pathlib import Path

from lsrep.errors import InputError


def _first_record(path: Path) -> dict:
    from lsrep.protocol.loading import json_records

    for _lineno, record in json_records(path):
        return record
    raise InputError(path, "file has no records")


def validate_path(path: Path, probes_for: str | None = None, store: str | None = None) -> str:
    """Validate one file; return a one-line description of what it holds.

    A campaign goes through `lsrep.preflight.prepare_run`, the very checks `lsrep run` makes
    before it writes anything (with the same `--store` override).
    """
    from lsrep.protocol.campaign import read_toml

    if path.suffix == ".toml":
        from lsrep.protocol.campaign import load_schedule

        data = read_toml(path)
        if data.get("diagnostic") == "longmemeval" or ("trajectories" not in data and "data" in data):
            from lsrep.longmemeval import validate_longmemeval_campaign

            return validate_longmemeval_campaign(path)
        if "conditions" in data or "trajectories" in data:
            from lsrep.preflight import prepare_run

            return prepare_run(path, store).describe()
        schedule = load_schedule(path)
        return f"schedule {schedule.name!r} v{schedule.version} ({schedule.access}, {schedule.clock} clock)"
    from lsrep.protocol.loading import load_probes, load_trajectory

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
