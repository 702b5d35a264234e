"""A copy of a run store holding only some conditions and trajectories of one run.

`lsrep report --conditions/--trajectories` builds its report from such a copy, so
every section (headline, paired tests, audit, failures, manifest) sees the same
subset and nothing else; the original store is never changed. The copy's
manifest names the subset (`report_subset`), so the report says it is partial.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from lsrep.errors import ConfigError


def _tables_with(conn: sqlite3.Connection, *columns: str) -> list[str]:
    """Every table but `units`/`observations` that has all of `columns`, read from the schema, so a
    table added by a later migration (memory calls, ingest latency, adapter logs, ...) is never
    left holding rows of the units or observations the subset drops."""
    names = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table' "
                                        "and name not like 'sqlite_%' order by name")]
    return [t for t in names if t not in ("units", "observations")
            and set(columns) <= {r[1] for r in conn.execute(f"pragma table_info('{t}')")}]


def subset_store(source: Path, run_id: str, dest: Path, *, conditions: Sequence[str] | None = None,
                 trajectories: Sequence[str] | None = None, limit: int | None = None) -> Path:
    """Copy `source` to `dest` keeping, for `run_id`, only the named conditions and trajectories,
    and (`limit`) only the first N probes of each trajectory, in the order they were first asked."""
    with sqlite3.connect(source) as src, sqlite3.connect(dest) as out:
        src.backup(out)
    conn = sqlite3.connect(dest)
    try:
        with conn:
            _check(conn, run_id, "condition", conditions)
            _check(conn, run_id, "trajectory", trajectories)
            keep = "run_id = ?"
            params: list = [run_id]
            for column, names in (("condition", conditions), ("trajectory", trajectories)):
                if names is not None:
                    keep += f" and {column} in ({','.join('?' * len(names))})"
                    params += list(names)
            dropped_units = [r[0] for r in conn.execute(
                f"select unit_id from units where run_id = ? and not ({keep})", [run_id, *params])]
            for table in _tables_with(conn, "run_id", "unit_id"):
                conn.executemany(f"delete from {table} where run_id = ? and unit_id = ?",
                                 [(run_id, u) for u in dropped_units])
            conn.execute(f"delete from units where run_id = ? and not ({keep})", [run_id, *params])
            dropped_obs = [r[0] for r in conn.execute(
                f"select obs_id from observations where run_id = ? and not ({keep})", [run_id, *params])]
            if limit is not None:
                dropped_obs += _beyond_limit(conn, run_id, limit)
            for table in _tables_with(conn, "obs_id"):
                conn.executemany(f"delete from {table} where obs_id = ?", [(o,) for o in dropped_obs])
            conn.execute(f"delete from observations where run_id = ? and not ({keep})", [run_id, *params])
            conn.executemany("delete from observations where obs_id = ?", [(o,) for o in dropped_obs])
            if trajectories is not None:
                conn.execute(f"delete from turns where run_id = ? and trajectory not in "
                             f"({','.join('?' * len(trajectories))})", [run_id, *trajectories])
            (manifest,) = conn.execute("select manifest from runs where run_id = ?", [run_id]).fetchone()
            conn.execute("update runs set manifest = ? where run_id = ?",
                         [json.dumps(_manifest(json.loads(manifest), conditions, trajectories, limit),
                                     sort_keys=True), run_id])
    finally:
        conn.close()
    return dest


def _beyond_limit(conn: sqlite3.Connection, run_id: str, limit: int) -> list[str]:
    """Observations of probes past the first `limit` of their trajectory (first-asked order)."""
    order = conn.execute("select trajectory, probe_id, min(rowid) as first from observations where run_id = ? "
                         "group by trajectory, probe_id order by trajectory, first", [run_id]).fetchall()
    kept: dict[str, list[str]] = {}
    for trajectory, probe_id, _ in order:
        kept.setdefault(trajectory, []).append(probe_id)
    keep = {(t, p) for t, probes in kept.items() for p in probes[:limit]}
    return [obs for obs, t, p in conn.execute(
        "select obs_id, trajectory, probe_id from observations where run_id = ?", [run_id]) if (t, p) not in keep]


def _check(conn: sqlite3.Connection, run_id: str, column: str, names: Sequence[str] | None) -> None:
    if names is None:
        return
    known = [r[0] for r in conn.execute(
        f"select distinct {column} from observations where run_id = ? order by {column}", [run_id])]
    unknown = [n for n in names if n not in known]
    if unknown:
        flag = {"condition": "--conditions", "trajectory": "--trajectories"}[column]
        raise ConfigError(f"{flag}: run {run_id} has no {column} {', '.join(map(repr, unknown))} (it has: {', '.join(known)})")


def _manifest(manifest: dict, conditions: Sequence[str] | None, trajectories: Sequence[str] | None,
              limit: int | None = None) -> dict:
    campaign = dict(manifest.get("campaign") or {})
    if conditions is not None:
        kept = set(conditions)
        manifest["conditions"] = {k: v for k, v in (manifest.get("conditions") or {}).items() if k in kept}
        campaign["conditions"] = [c for c in campaign.get("conditions", []) if c.get("name") in kept]
        campaign["compare"] = [p for p in campaign.get("compare", []) if all(n in kept for n in p)]
    if trajectories is not None:
        kept_t = set(trajectories)
        campaign["trajectories"] = [t for t in campaign.get("trajectories", []) if t.get("id") in kept_t]
    plans = manifest.get("plans") or {}
    manifest["plans"] = {k: v for k, v in plans.items()
                         if (conditions is None or k.split("/", 1)[0] in conditions)
                         and (trajectories is None or k.split("/", 1)[-1] in trajectories)}
    manifest["campaign"] = campaign
    manifest["report_subset"] = {"conditions": list(conditions) if conditions is not None else None,
                                 "trajectories": list(trajectories) if trajectories is not None else None,
                                 "limit": limit}
    return manifest
