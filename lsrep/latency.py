"""Recall latency: when a fact first reaches a system's context, relative to when it was said.

For every (condition, trajectory, repetition, probe, reference version) the version is
observed at each checkpoint where it is in force. It is *recallable* at the first such
checkpoint whose returned context cites one of its evidence turns (its `valid_from` turn
when it lists none). Systems that consolidate in batches (nightly jobs) show latency
here; a fact never recalled while observed is counted as censored, never imputed.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class FactLatency:
    condition: str
    trajectory: str
    repetition: int
    probe_id: str
    valid_from: str
    said_at: datetime
    observed: int
    """Checkpoints at which the version was in force and asked."""
    first_recall_checkpoint: int | None
    """Ordinal of the first checkpoint that recalled it (None: censored)."""
    waited_checkpoints: int | None
    """In-force checkpoints that missed it before the first recall."""
    latency_hours: float | None
    """Simulated hours from being said to first recall."""


def fact_latencies(observations: Iterable[Mapping[str, Any]],
                   turns: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[FactLatency]:
    """One row per observed fact version; observations need `context` (cited turn ids)."""
    series: dict[tuple, list[tuple[int, datetime, bool]]] = defaultdict(list)
    for obs in observations:
        if obs.get("status") != "ok":
            continue
        expected = obs["expected"] if isinstance(obs["expected"], dict) else json.loads(obs["expected"])
        cited = set(obs.get("context") or ())
        now = datetime.fromisoformat(obs["sim_time"])
        for version in expected.get("in_force", ()):
            evidence = set(version.get("evidence") or ()) or {version["valid_from"]}
            key = (obs["condition"], obs["trajectory"], obs["repetition"], obs["probe_id"], version["valid_from"])
            series[key].append((obs["checkpoint"], now, bool(evidence & cited)))
    rows = []
    for (cond, traj, rep, probe, valid_from), points in sorted(series.items()):
        turn = turns.get((traj, valid_from))
        if turn is None:
            continue
        said = datetime.fromisoformat(turn["sim_time"])
        points.sort()
        first = next((i for i, (_, _, hit) in enumerate(points) if hit), None)
        rows.append(FactLatency(
            condition=cond, trajectory=traj, repetition=rep, probe_id=probe, valid_from=valid_from, said_at=said,
            observed=len(points),
            first_recall_checkpoint=points[first][0] if first is not None else None,
            waited_checkpoints=first,
            latency_hours=(points[first][1] - said).total_seconds() / 3600 if first is not None else None,
        ))
    return rows


def summarise_latency(rows: Iterable[FactLatency]) -> list[dict[str, Any]]:
    """Per condition: facts observed, share recalled, median latency, share recalled at once."""
    by: dict[str, list[FactLatency]] = defaultdict(list)
    for row in rows:
        by[row.condition].append(row)
    out = []
    for cond, items in sorted(by.items()):
        recalled = [r for r in items if r.first_recall_checkpoint is not None]
        hours = [r.latency_hours for r in recalled]
        waited = [r.waited_checkpoints for r in recalled]
        out.append({
            "condition": cond, "facts": len(items), "recalled": len(recalled),
            "recalled_share": len(recalled) / len(items) if items else None,
            "censored": len(items) - len(recalled),
            "median_hours": statistics.median(hours) if hours else None,
            "median_waited": statistics.median(waited) if waited else None,
            "at_first_checkpoint": sum(1 for w in waited if w == 0) / len(recalled) if recalled else None,
        })
    return out
