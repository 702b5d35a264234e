"""Warnings and log records adapters emitted (captured in their hosts, lsrep.host.capture), per condition."""

from __future__ import annotations

from typing import Any

from lsrep.reports.tree import Column, Table


def adapter_log_rows(store: Any, run_id: str) -> list[dict[str, Any]]:
    """Distinct warnings / log records per condition, with total count and number of units."""
    try:
        return store.rows(
            "select condition, kind, level, source, message, sum(count) count, count(distinct unit_id) units, "
            "min(method) method from adapter_logs where run_id = ? group by condition, kind, level, source, message "
            "order by condition, sum(count) desc, source, message", [run_id])
    except Exception:  # noqa: BLE001 - a store written before migration m011 has no such table
        return []


def adapter_log_blocks(ctx: Any) -> list[Any]:
    """The report table (none when nothing was emitted)."""
    logs = adapter_log_rows(ctx.store, ctx.data.run["run_id"]) if ctx.store is not None else []
    if not logs:
        return []
    return [Table(
        (Column("condition", "Condition", "condition"), Column("kind", "Kind", "code"),
         Column("level", "Level", "code"), Column("source", "Source", "code"), Column("message", "Message", "text"),
         Column("count", "Times", "int"), Column("units", "Units", "int"), Column("method", "First in", "code")),
        tuple(logs), caption="Warnings and log records adapters emitted",
        notes=("Captured in each adapter's host process around every call and its construction: "
               "warnings.warn and log records of level WARNING or above (lsrep.host.capture). A library "
               "running degraded often says so only here.",))]
