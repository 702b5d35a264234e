"""Procedural patterns: user instructions about the assistant's behaviour, deactivatable."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from .db import Transaction, open_database, strength_rows, strength_stats
from .embedding import Embedder, embed_one, from_blob, to_blob
from .text import normalise_name, stems

MIGRATIONS = [
    ("m001_procedures", """
    CREATE TABLE procedures (
        seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, trigger TEXT NOT NULL,
        instruction TEXT NOT NULL, norm TEXT NOT NULL, support_count INTEGER NOT NULL,
        source_turns TEXT NOT NULL, active INTEGER NOT NULL DEFAULT 1, deactivated_reason TEXT,
        created_at TEXT NOT NULL, strength REAL NOT NULL DEFAULT 1.0, strength_at TEXT NOT NULL,
        last_access TEXT, vec BLOB NOT NULL
    );
    """),
]


@dataclass(frozen=True)
class Pattern:
    id: str
    trigger: str
    instruction: str
    support_count: int
    source_turns: tuple[str, ...]
    active: bool
    strength: float
    created_at: str

    def render(self) -> str:
        return f"User instruction (since {self.created_at[:10]}): {self.instruction}"


def _pattern(row: sqlite3.Row) -> Pattern:
    return Pattern(id=row["id"], trigger=row["trigger"], instruction=row["instruction"],
                   support_count=row["support_count"],
                   source_turns=tuple(json.loads(row["source_turns"])), active=bool(row["active"]),
                   strength=row["strength"], created_at=row["created_at"])


def overlaps(about: str, text: str) -> bool:
    """A revocation names an instruction when they share two stems, or half of its own."""
    a, b = stems(about), stems(text)
    shared = a & b
    return bool(shared) and (len(shared) >= 2 or len(shared) * 2 >= len(a))


class ProcedureStore:
    """Patterns in `procedural.sqlite`."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.conn = open_database(path, MIGRATIONS)
        self.embedder = embedder

    def close(self) -> None:
        self.conn.close()

    def add(self, trigger: str, instruction: str, *, turn_id: str, now: datetime) -> tuple[str, bool]:
        """Add a pattern or, if the same instruction exists, raise its support. (id, is new)."""
        norm = normalise_name(instruction)
        row = self.conn.execute("SELECT * FROM procedures WHERE norm = ? AND active = 1",
                                (norm,)).fetchone()
        if row:
            turns = json.loads(row["source_turns"])
            if turn_id not in turns:
                turns.append(turn_id)
            self.conn.execute("UPDATE procedures SET support_count = support_count + 1,"
                              " source_turns = ? WHERE id = ?", (json.dumps(turns), row["id"]))
            return row["id"], False
        seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM procedures").fetchone()[0]
        pid = f"proc-{seq:05d}"
        stamp = now.isoformat()
        self.conn.execute(
            "INSERT INTO procedures (seq, id, trigger, instruction, norm, support_count,"
            " source_turns, created_at, strength_at, vec) VALUES (?,?,?,?,?,1,?,?,?,?)",
            (seq, pid, trigger, instruction, norm, json.dumps([turn_id]), stamp, stamp,
             to_blob(embed_one(self.embedder, trigger or instruction))))
        return pid, True

    def revoke(self, about: str, *, turn_id: str) -> list[str]:
        """Deactivate the active patterns a revocation names; returns their ids."""
        hit = [p for p in self.active() if overlaps(about, p.instruction)]
        for p in hit:
            self.conn.execute("UPDATE procedures SET active = 0, deactivated_reason = ?"
                              " WHERE id = ?", (f"revoked by {turn_id}: {about}", p.id))
        return [p.id for p in hit]

    def active(self) -> list[Pattern]:
        rows = self.conn.execute("SELECT * FROM procedures WHERE active = 1 ORDER BY seq")
        return [_pattern(r) for r in rows.fetchall()]

    def get(self, pid: str) -> Pattern | None:
        row = self.conn.execute("SELECT * FROM procedures WHERE id = ?", (pid,)).fetchone()
        return _pattern(row) if row else None

    def count_active(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM procedures WHERE active = 1").fetchone()[0]

    def search(self, query: str, qvec: np.ndarray, k: int, threshold: float,
               wrong_field: bool = False) -> list[str]:
        """Active patterns whose trigger matches the query (cosine or shared stems), best first.

        `wrong_field` reproduces the audited defect: matching reads `deactivated_reason`, which
        is empty for every active pattern, so the leg runs and returns nothing.
        """
        column = "deactivated_reason" if wrong_field else "trigger"
        rows = self.conn.execute(
            f"SELECT id, {column} AS key, support_count, vec FROM procedures"
            " WHERE active = 1 ORDER BY seq").fetchall()
        qstems = stems(query)
        scored: list[tuple[float, int, int, str]] = []
        for n, row in enumerate(rows):
            key = row["key"]
            if not key:
                continue
            cos = float(from_blob(row["vec"]) @ np.asarray(qvec, dtype=np.float32))
            shared = len(qstems & stems(key))
            if cos >= threshold or shared:
                scored.append((-(shared + cos), -row["support_count"], n, row["id"]))
        return [s[3] for s in sorted(scored)[:k]]

    def reinforce(self, ids: list[str], now: datetime) -> None:
        stamp = now.isoformat()
        with Transaction(self.conn) as c:
            for pid in ids:
                c.execute("UPDATE procedures SET strength = 1.0, strength_at = ?, last_access = ?"
                          " WHERE id = ?", (stamp, stamp, pid))

    def strengths(self, above: float | None = None) -> list[tuple[str, float, str]]:
        return strength_rows(self.conn, "procedures", "id", "seq", above)

    def strength_stats(self) -> tuple[int, float]:
        return strength_stats(self.conn, "procedures")

    def set_strengths(self, updates: list[tuple[str, float]], now: datetime) -> None:
        stamp = now.isoformat()
        with Transaction(self.conn) as c:
            c.executemany("UPDATE procedures SET strength = ?, strength_at = ? WHERE id = ?",
                          [(s, stamp, pid) for pid, s in updates])
