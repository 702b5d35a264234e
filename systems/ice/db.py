"""SQLite files with named, ordered migrations (tracked in `PRAGMA user_version`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

Migration = tuple[str, str]
"""(name, SQL script)."""

JOURNAL_MODE = "MEMORY"
"""The rollback journal of a transaction in memory, not a `-journal` file created, written and
deleted at every commit (a replay commits per turn and per query: ~26,000 times at 10k turns).
The database file is written the same way, so its bytes are the ones `DELETE` mode leaves
(tests/systems/ice/test_ice_journal_memory.py); what is given up is recovery of a transaction
cut off by a crash, which replay state never needs (it is rebuilt from the trajectory, and
`synchronous=OFF` already gave up durability)."""


def open_database(path: Path, migrations: Sequence[Migration]) -> sqlite3.Connection:
    """Open (creating) a store file and apply the migrations it has not seen yet.

    Rollback-journal mode keeps the whole state in the one file between calls, so a
    directory copy is a faithful snapshot and the bytes are a stable digest. The journal is
    kept in memory (`JOURNAL_MODE`): the file's bytes are those a journal file leaves.
    """
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA journal_mode={JOURNAL_MODE}")
    # Replay state is rebuilt from the trajectory, never recovered after a crash: skip fsync.
    conn.execute("PRAGMA synchronous=OFF")
    done = conn.execute("PRAGMA user_version").fetchone()[0]
    for number, (_name, script) in enumerate(migrations, start=1):
        if number <= done:
            continue
        conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version={number};\nCOMMIT;")
    return conn


class Transaction:
    """`with Transaction(conn):` -- BEGIN, then COMMIT or ROLLBACK."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def strength_rows(conn: sqlite3.Connection, table: str, id_col: str, order_col: str,
                  above: float | None = None) -> list[tuple[str, float, str]]:
    """(id, strength, set at) of a decaying table in storage order; only > `above` if given.

    Decay skips rows already at the floor: they would stay there, so the worker's cost
    follows what can still change, not the whole history.
    """
    where, args = ("WHERE strength > ? ", (above,)) if above is not None else ("", ())
    sql = f"SELECT {id_col}, strength, strength_at FROM {table} {where}ORDER BY {order_col}"
    return [(r[0], r[1], r[2]) for r in conn.execute(sql, args)]


def strength_stats(conn: sqlite3.Connection, table: str) -> tuple[int, float]:
    """(how many strengths a decaying table holds, their sum)."""
    n, total = conn.execute(f"SELECT COUNT(*), COALESCE(SUM(strength), 0) FROM {table}").fetchone()
    return int(n), float(total)

