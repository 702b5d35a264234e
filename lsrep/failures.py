"""What went wrong in a run, counted and located, so a command can fail loudly.

A run with failed units, failure rows (adapter exceptions, maintenance that
raised, answers that could not be made, isolation breaches, crashed workers) or
failed judgements is not a clean run: `lsrep run` and `lsrep score` print the
first few errors with where they happened and exit non-zero unless told
`--allow-failures`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

EXIT_FAILURES = 1
"""Exit status of a command that completed but recorded failures."""

SHOWN = 5
"""How many error messages a command prints before pointing at the store."""


@dataclass(frozen=True)
class FailureTally:
    """Counts of a run's failures and the first few, each with where it happened."""

    failed_units: int = 0
    failure_rows: int = 0
    failed_maintenance: int = 0
    failed_judgements: int = 0
    first: tuple[str, ...] = field(default_factory=tuple)

    @property
    def any(self) -> bool:
        return bool(self.failed_units or self.failure_rows or self.failed_judgements)

    def headline(self) -> str:
        """One line: what failed, in counts."""
        parts = [f"{self.failed_units} unit(s) failed", f"{self.failure_rows} failure record(s)"]
        if self.failed_maintenance:
            parts.append(f"{self.failed_maintenance} maintenance operation(s) raised")
        parts.append(f"{self.failed_judgements} judgement(s) failed")
        return ", ".join(parts)


def where(row: dict[str, Any]) -> str:
    """`condition/trajectory/rN, checkpoint C, probe P, phase` for a failure row."""
    parts = [row["unit_id"]]
    if row.get("checkpoint") is not None:
        parts.append(f"checkpoint {row['checkpoint']}")
    if row.get("probe_id"):
        parts.append(f"probe {row['probe_id']}")
    parts.append(row["phase"])
    return ", ".join(parts)


def run_failures(store, run_id: str, *, judge: str | None = None, limit: int = SHOWN) -> FailureTally:
    """The failures recorded for a run (judgement failures of one judge, or of all)."""
    units = store.rows("select count(*) as n from units where run_id = ? and status = 'failed'", [run_id])[0]["n"]
    rows = store.rows("select unit_id, seq, phase, checkpoint, probe_id, error_type, message from failures "
                      "where run_id = ? order by unit_id, seq", [run_id])
    maintenance = store.rows("select count(*) as n from maintenance where run_id = ? and status = 'failed'",
                             [run_id])[0]["n"]
    sql = ("select j.obs_id, j.judge, j.error, o.unit_id, o.checkpoint, o.probe_id from judgements j "
           "join observations o using (obs_id) where j.run_id = ? and j.status = 'failed'")
    params: list[Any] = [run_id]
    if judge is not None:
        sql += " and j.judge = ?"
        params.append(judge)
    judged = store.rows(sql + " order by j.obs_id", params)
    first = [f"{where(r)}: {r['error_type']}: {r['message']}" for r in rows[:limit]]
    for r in judged[: max(0, limit - len(first))]:
        first.append(f"{where({**r, 'phase': 'judge ' + r['judge']})}: {r['error']}")
    return FailureTally(units, len(rows), maintenance, len(judged), tuple(first))


def report_failures(tally: FailureTally, *, allow: bool, store_path, stream=None) -> int:
    """Print the tally's errors to stderr; the exit status the command should return."""
    stream = stream or sys.stderr
    if not tally.any:
        return 0
    print(f"lsrep: {tally.headline()}", file=stream)
    for line in tally.first:
        print(f"  {line}", file=stream)
    shown = len(tally.first)
    total = tally.failure_rows + tally.failed_judgements
    if total > shown:
        print(f"  ... {total - shown} more in the failures and judgements tables of {store_path}", file=stream)
    if allow:
        print("lsrep: --allow-failures given: exit status 0", file=stream)
        return 0
    print("lsrep: error: the run recorded failures (pass --allow-failures to exit 0 anyway)", file=stream)
    return EXIT_FAILURES
