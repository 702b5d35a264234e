"""Content-addressed response cache in SQLite.

A key is the SHA-256 of a canonical JSON payload (endpoint, model, messages or
text, and every generation setting that changes the output). A hit answers
without contacting the endpoint. Only successful responses are stored, and a
reply its reader could not use is taken out again (`forget`). A cache opened
with `not_before` (`--refresh-cache`) ignores entries older than that instant
and overwrites them, so a refreshed run contacts the endpoint for every request
once. The payload never contains the API key, so neither does the database.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    usage TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


def canonical_json(payload: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(payload: dict[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of a request payload."""
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CachedResponse(BaseModel):
    """A stored response."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    kind: str
    response: dict[str, Any]
    """Chat: text, finish_reason, response_model. Embedding: vector."""
    usage: dict[str, Any]
    """Usage as the endpoint reported it when the response was first fetched."""


class ResponseCache:
    """SQLite-backed cache, safe to share between threads (one connection per thread)."""

    def __init__(self, path: str | Path, *, not_before: str | None = None) -> None:
        self.path = Path(path)
        self.not_before = not_before
        """ISO timestamp: entries created before it are treated as absent (a refresh)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        from lsrep.store_lock import file_lock

        # Switching a new file to WAL needs an exclusive lock that SQLite does not wait for: two
        # worker processes opening the same fresh cache at once got "database is locked". The first
        # open (WAL switch and schema) is serialised across processes, as the run store's is.
        with file_lock(self.path.with_name(self.path.name + ".open.lock")), self._conn() as conn:
            conn.execute(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def get(self, key: str) -> CachedResponse | None:
        """The stored response for a key, or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, CachedResponse]:
        """Stored responses for those keys that have one."""
        found: dict[str, CachedResponse] = {}
        conn = self._conn()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, kind, response, usage FROM responses WHERE key IN ({marks})"
            params = list(chunk)
            if self.not_before is not None:
                sql += " AND created_at >= ?"
                params.append(self.not_before)
            rows = conn.execute(sql, params).fetchall()
            for key, kind, response, usage in rows:
                found[key] = CachedResponse(
                    key=key, kind=kind, response=json.loads(response), usage=json.loads(usage)
                )
        return found

    def put(
        self,
        key: str,
        *,
        kind: str,
        base_url: str,
        model: str,
        request: dict[str, Any],
        response: dict[str, Any],
        usage: dict[str, Any],
    ) -> None:
        """Store a successful response (first writer wins; a refresh replaces older entries)."""
        conn = self._conn()
        verb = "INSERT OR IGNORE" if self.not_before is None else "INSERT OR REPLACE"
        with conn:
            conn.execute(
                f"{verb} INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    kind,
                    base_url,
                    model,
                    canonical_json(request),
                    canonical_json(response),
                    canonical_json(usage),
                    datetime.now(UTC).isoformat(),
                ),
            )

    def forget(self, key: str) -> None:
        """Drop a stored response (a reply that turned out unusable is never kept)."""
        conn = self._conn()
        with conn:
            conn.execute("DELETE FROM responses WHERE key = ?", (key,))

    def count(self) -> int:
        """Number of stored responses."""
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
