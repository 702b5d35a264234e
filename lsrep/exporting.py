"""Flat observation rows with their deterministic labels, for `lsrep export`."""

from __future__ import annotations

from typing import Any

from lsrep.store import RunStore

TIMING_COLUMNS = ("query_ms", "answer_ms")


def export_rows(store: RunStore, run_id: str, include_timings: bool = False) -> list[dict[str, Any]]:
    rows = store.rows(
        "select o.*, j.outcome, j.correct, j.exact, j.f1 from observations o "
        "left join judgements j on j.obs_id = o.obs_id and j.judge = 'deterministic' "
        "where o.run_id = ? order by o.condition, o.trajectory, o.repetition, o.checkpoint, o.probe_id",
        [run_id],
    )
    if not include_timings:
        for row in rows:
            for col in TIMING_COLUMNS:
                row.pop(col, None)
    return rows
