"""Overlays: batch summaries written by the consolidation worker, and memory slots."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from .db import open_database
from .embedding import ProductCache, VectorCache, to_blob
from .lexical import top_k_stable

SUMMARY_MIGRATIONS = [
    ("m001_summaries", """
    CREATE TABLE summaries (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, conv_id TEXT NOT NULL,
        first_idx INTEGER NOT NULL, last_idx INTEGER NOT NULL, first_ts TEXT NOT NULL,
        last_ts TEXT NOT NULL, text TEXT NOT NULL, source_turns TEXT NOT NULL,
        created_at TEXT NOT NULL, vec BLOB NOT NULL
    );
    """),
]
SLOT_MIGRATIONS = [
    ("m001_slots", "CREATE TABLE slots (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
                   " updated TEXT NOT NULL);"),
]


@dataclass(frozen=True)
class Summary:
    id: str
    conversation_id: str
    first_ts: str
    last_ts: str
    text: str
    source_turns: tuple[str, ...]

    def render(self) -> str:
        return f"Summary ({self.first_ts[:10]} to {self.last_ts[:10]}): {self.text}"


class SummaryStore:
    """Batch summaries in `summaries.sqlite`."""

    def __init__(self, path: Path) -> None:
        self.conn = open_database(path, SUMMARY_MIGRATIONS)
        self._vectors = VectorCache()
        self._products = ProductCache()
        """`matrix @ q` for the query vectors asked before (the probes come back every checkpoint)."""
        self._product_generation = 0
        self._covered: dict[str, int] | None = None
        """conversation -> turns its summaries cover: read once per open, kept on add."""
        self._read: dict[str, Summary] = {}
        """id -> the summary as read before: rows are only ever inserted (`get`)."""
        self.summary_reads = 0
        """Rows `get` read from the file (a work count for tests)."""

    def close(self) -> None:
        self.conn.close()

    def covered_turns(self, conversation_id: str) -> int:
        """How many of the conversation's turns (in order) are already summarised (the
        counts are read from the table once per open and kept on add; `covered_turns_scan`
        is the rule)."""
        if self._covered is None:
            self._covered = {}
            for conv, source in self.conn.execute("SELECT conv_id, source_turns FROM summaries"):
                self._covered[conv] = self._covered.get(conv, 0) + len(json.loads(source))
        return self._covered.get(conversation_id, 0)

    def covered_turns_scan(self, conversation_id: str) -> int:
        """The rule: the summaries' source turns of the conversation, counted from the table."""
        rows = self.conn.execute("SELECT source_turns FROM summaries WHERE conv_id = ?",
                                 (conversation_id,)).fetchall()
        return sum(len(json.loads(r[0])) for r in rows)

    def add(self, conversation_id: str, first_idx: int, last_idx: int, first_ts: str,
            last_ts: str, text: str, source_turns: list[str], vec: np.ndarray,
            now: datetime) -> str:
        n = self.conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] + 1
        sid = f"summary-{n:05d}"
        self.conn.execute(
            "INSERT INTO summaries (id, conv_id, first_idx, last_idx, first_ts, last_ts, text,"
            " source_turns, created_at, vec) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (sid, conversation_id, first_idx, last_idx, first_ts, last_ts, text,
             json.dumps(source_turns), now.isoformat(), to_blob(vec)))
        self._vectors.append(sid, vec)
        if self._covered is not None:
            self._covered[conversation_id] = self._covered.get(conversation_id, 0) + len(source_turns)
        return sid

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0]

    def get(self, sid: str) -> Summary | None:
        """The stored summary `sid` (`get_scan`, the rule). A summary's row is written once and
        never changed or deleted while the file is open (ids count up), so one read before is
        served from memory; the summary leg asks for the same ones query after query."""
        summary = self._read.get(sid)
        if summary is None:
            self.summary_reads += 1
            summary = self.get_scan(sid)
            if summary is not None:
                self._read[sid] = summary
        return summary

    def get_scan(self, sid: str) -> Summary | None:
        """The rule `get` keeps: the row read from the file."""
        row = self.conn.execute("SELECT * FROM summaries WHERE id = ?", (sid,)).fetchone()
        if row is None:
            return None
        return Summary(row["id"], row["conv_id"], row["first_ts"], row["last_ts"], row["text"],
                       tuple(json.loads(row["source_turns"])))

    def _vector_ids(self) -> list[str]:
        if self._vectors.ids is None:
            self._vectors.load(self.conn.execute("SELECT id, vec FROM summaries ORDER BY rowid").fetchall())
        return self._vectors.ids or []

    def search(self, qvec: np.ndarray, k: int) -> list[str]:
        """Summary ids by similarity with the query, best first, ties in storage order."""
        ids = self._vector_ids()
        if not ids:
            return []
        if self._product_generation != self._vectors.generation:
            self._products.clear()  # reloaded or moved: products are recomputed on it
            self._product_generation = self._vectors.generation
        sims = self._products.product(self._vectors.matrix(), np.asarray(qvec, dtype=np.float32))
        return [ids[i] for i in top_k_stable(sims, k)]

    def search_scan(self, qvec: np.ndarray, k: int) -> list[str]:
        """The rule `search` keeps: one product over every summary, a stable sort of it all."""
        ids = self._vector_ids()
        if not ids:
            return []
        sims = self._vectors.matrix() @ np.asarray(qvec, dtype=np.float32)
        return [ids[i] for i in np.argsort(-sims, kind="stable")[:k]]


class SlotStore:
    """User-controlled key/value notes in `slots.sqlite`; always placed in the prompt."""

    def __init__(self, path: Path) -> None:
        self.conn = open_database(path, SLOT_MIGRATIONS)

    def close(self) -> None:
        self.conn.close()

    def set(self, key: str, value: str, now: datetime) -> None:
        self.conn.execute("INSERT INTO slots VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE"
                          " SET value = excluded.value, updated = excluded.updated",
                          (key, value, now.isoformat()))

    def delete(self, key: str) -> None:
        self.conn.execute("DELETE FROM slots WHERE key = ?", (key,))

    def items(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute("SELECT key, value FROM slots ORDER BY key")]
