"""Narrow a cosmic-ray session to the line ranges a config names, so one session fits in time.

    python scripts/mutation_scope.py CONFIG.toml SESSION.sqlite

A config may carry `[lsrep-scope]`, mapping a module path to `[[first, last], ...]` (1-based,
inclusive). Pending mutants of that module outside every range are recorded as SKIPPED (the
worker never runs them; `mutation_report.py` counts them as out of scope, not in the kill rate).
Modules the table does not name stay whole.
"""

from __future__ import annotations

import sqlite3
import sys
import tomllib
from pathlib import Path


def main() -> None:
    config, session = Path(sys.argv[1]), sys.argv[2]
    scope = tomllib.loads(config.read_text()).get("lsrep-scope", {})
    if not scope:
        return
    db = sqlite3.connect(session)
    pending = db.execute(
        "select s.job_id, s.module_path, s.start_pos_row, s.end_pos_row from mutation_specs s "
        "where not exists (select 1 from work_results r where r.job_id = s.job_id)").fetchall()
    skipped = [job for job, path, first, last in pending if path in scope and not any(
        first <= b and a <= last for a, b in scope[path])]
    db.executemany("insert into work_results (worker_outcome, output, test_outcome, diff, job_id) "
                   "values ('SKIPPED', 'out of scope (lsrep-scope)', NULL, NULL, ?)", [(j,) for j in skipped])
    db.commit()
    print(f"{len(skipped)} of {len(pending)} pending mutants are outside [lsrep-scope]: skipped")


if __name__ == "__main__":
    main()
