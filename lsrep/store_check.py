"""`lsrep store check`: integrity, schema version and unfinished runs of a store, read-only.

The repair path for each finding is printed with it and documented in docs/store-schema.md.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lsrep.errors import InputError


def check_store(path: Path) -> int:
    """Print one line per finding; exit status 0 when the store is sound, 1 when it needs repair."""
    from lsrep.store import MIGRATIONS
    from lsrep.store_lock import open_error

    if not path.exists():
        raise InputError(path, "no run store here (pass --store PATH)")
    problem = open_error(path)
    if problem:
        raise InputError(path, problem)
    try:
        # Read-write open so a WAL left by a killed writer is recovered; nothing is written.
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        integrity = [r[0] for r in conn.execute("pragma integrity_check")]
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise InputError(path, f"not a readable SQLite store ({exc})") from None
    bad = 0
    if integrity == ["ok"]:
        print("ok    integrity: ok")
    else:
        bad += 1
        print(f"FAIL  integrity: {'; '.join(integrity[:5])}")
        print("      repair: restore from a copy, or salvage with `sqlite3 STORE .recover > dump.sql` "
              "into a new file")
    applied = ([r[0] for r in conn.execute("select name from _migrations")]
               if "_migrations" in tables else [])
    known = [name for name, _ in MIGRATIONS]
    missing = [n for n in known if n not in applied]
    unknown = [n for n in applied if n not in known]
    if not applied and tables - {"_migrations"}:
        bad += 1
        print(f"FAIL  schema: tables {', '.join(sorted(tables)[:4])}... exist but no migration is recorded "
              "(a store created by an older lsrep that was killed while creating it)")
        print("      repair: it holds no finished run; delete the file (and its -wal/-shm) and run again")
    elif unknown:
        bad += 1
        print(f"FAIL  schema: migrations {', '.join(unknown)} are newer than this lsrep; upgrade lsrep")
    elif missing:
        print(f"ok    schema: {len(applied)} of {len(known)} migrations; the next open applies "
              f"{', '.join(missing)} (each in one transaction)")
    else:
        print(f"ok    schema: current ({known[-1]})")
    if "runs" in tables and "_migrations" in tables:
        runs = conn.execute("select run_id, status from runs where status != 'finished' order by created_at").fetchall()
        for run_id, status in runs:
            done = conn.execute("select count(*) from units where run_id = ? and status in ('finished', 'failed')",
                                [run_id]).fetchone()[0] if "units" in tables else 0
            print(f"note  run {run_id} is {status!r} with {done} unit(s) stored; the same `lsrep run` resumes it")
        n = conn.execute("select count(*) from runs").fetchone()[0]
        print(f"ok    runs: {n} ({len(runs)} unfinished)")
    conn.close()
    return 1 if bad else 0
