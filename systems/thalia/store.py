"""The append-only episodic store: SQLite, FTS5 over query and answer, a LIKE fallback.

Episodes are never updated or deleted (triggers refuse it); a duplicate turn id or
source id raises :class:`DuplicateEpisodeError` [SEED]. Search reduces any query to bare
alphanumeric tokens before MATCH, so punctuation cannot raise an FTS5 syntax error [SEED].
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

from .contracts import Episode
from .text import stopwords, tokenize

SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    turn_id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    timestamp_v TEXT NOT NULL,
    role TEXT NOT NULL,
    speaker TEXT NOT NULL,
    query TEXT NOT NULL,
    answer TEXT NOT NULL,
    citations_json TEXT NOT NULL,
    task_category TEXT NOT NULL,
    consolidation_action TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS episodes_no_update BEFORE UPDATE ON episodes
BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END;
CREATE TRIGGER IF NOT EXISTS episodes_no_delete BEFORE DELETE ON episodes
BEGIN SELECT RAISE(ABORT, 'episodes are append-only'); END;
CREATE TABLE IF NOT EXISTS consolidations (
    seq INTEGER PRIMARY KEY,
    turn_id INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    action TEXT NOT NULL,
    delta TEXT NOT NULL,
    timestamp_v TEXT NOT NULL
);
"""
FTS_SCHEMA = "CREATE VIRTUAL TABLE IF NOT EXISTS episodes_fts USING fts5(query, answer)"
_COLUMNS = ("turn_id, source_id, session_id, timestamp_v, role, speaker, query, answer, "
            "citations_json, task_category, consolidation_action")


class DuplicateEpisodeError(ValueError):
    """An episode with this turn id or source id is already stored (append-only)."""


def sanitize_fts_query(text: str, drop_stopwords: bool = True) -> str:
    """Bare alphanumeric tokens, quoted and OR-joined; stopwords dropped when others remain."""
    toks = list(dict.fromkeys(tokenize(text)))
    if drop_stopwords:
        content = [t for t in toks if t not in stopwords()]
        toks = content or toks
    return " OR ".join(f'"{t}"' for t in toks)


def _row(row: tuple) -> Episode:
    return Episode(turn_id=row[0], source_id=row[1], session_id=row[2],
                   timestamp=datetime.fromisoformat(row[3]), role=row[4], speaker=row[5],
                   query=row[6], answer=row[7], citations=tuple(json.loads(row[8])),
                   task_category=row[9], consolidation_action=row[10])


class EpisodicStore:
    """Σ_G's raw half. One connection; every write commits before returning."""

    def __init__(self, path: Path, *, use_fts: bool = True, synchronous: str = "OFF",
                 journal_mode: str = "MEMORY") -> None:
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.execute(f"PRAGMA journal_mode={journal_mode}")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        self.conn.executescript(SCHEMA)
        self.fts = False
        if use_fts:
            try:
                self.conn.execute(FTS_SCHEMA)
                self.fts = True
            except sqlite3.OperationalError:  # SQLite built without FTS5: the LIKE branch
                self.fts = False
        self._count, self._max = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(turn_id), 0) FROM episodes").fetchone()
        self._user_categories = {r[0] for r in self.conn.execute(
            "SELECT DISTINCT task_category FROM episodes WHERE role = 'user'")}

    # -- writes --------------------------------------------------------------------------------
    def next_turn_id(self) -> int:
        """max + 1: reopening resumes ids without collision [SEED]."""
        return self._max + 1

    def append(self, episode: Episode) -> None:
        values = (episode.turn_id, episode.source_id, episode.session_id,
                  episode.timestamp.isoformat(), episode.role, episode.speaker, episode.query,
                  episode.answer, json.dumps(list(episode.citations)), episode.task_category,
                  episode.consolidation_action)
        try:
            self.conn.execute("BEGIN")
            self.conn.execute(f"INSERT INTO episodes ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                              values)
            if self.fts:
                self.conn.execute("INSERT INTO episodes_fts (rowid, query, answer) VALUES (?, ?, ?)",
                                  (episode.turn_id, episode.query, episode.answer))
            self.conn.execute("COMMIT")
        except sqlite3.IntegrityError as exc:
            self.conn.execute("ROLLBACK")
            raise DuplicateEpisodeError(
                f"episode turn_id={episode.turn_id} source_id={episode.source_id!r} exists") from exc
        self._count += 1
        self._max = max(self._max, episode.turn_id)
        if episode.role == "user":
            self._user_categories.add(episode.task_category)

    def log_consolidation(self, turn_id: int, trigger: str, action: str, delta: str,
                          timestamp: datetime) -> None:
        self.conn.execute(
            "INSERT INTO consolidations (turn_id, trigger, action, delta, timestamp_v) "
            "VALUES (?, ?, ?, ?, ?)", (turn_id, trigger, action, delta, timestamp.isoformat()))

    # -- reads (never write) -------------------------------------------------------------------
    def __len__(self) -> int:
        return self._count

    def user_categories(self) -> frozenset[str]:
        """Task categories already stored for user turns (the novelty criterion's reference)."""
        return frozenset(self._user_categories)

    def get(self, turn_id: int) -> Episode | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM episodes WHERE turn_id = ?",
                                (turn_id,)).fetchone()
        return _row(row) if row else None

    def source_ids(self, turn_ids: list[int]) -> dict[int, str]:
        """External ids of several episodes at once."""
        if not turn_ids:
            return {}
        marks = ",".join("?" * len(turn_ids))
        return dict(self.conn.execute(
            f"SELECT turn_id, source_id FROM episodes WHERE turn_id IN ({marks})", turn_ids))

    def by_source(self, source_id: str) -> Episode | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM episodes WHERE source_id = ?",
                                (source_id,)).fetchone()
        return _row(row) if row else None

    def last_user_episode(self, session_id: str) -> Episode | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM episodes WHERE session_id = ? AND role = 'user' "
            "ORDER BY turn_id DESC LIMIT 1", (session_id,)).fetchone()
        return _row(row) if row else None

    def consolidated(self, turn_id: int) -> bool:
        return self.conn.execute("SELECT 1 FROM consolidations WHERE turn_id = ? LIMIT 1",
                                 (turn_id,)).fetchone() is not None

    def episodes(self) -> list[Episode]:
        return [_row(r) for r in self.conn.execute(
            f"SELECT {_COLUMNS} FROM episodes ORDER BY turn_id")]

    def search(self, text: str, limit: int, exclude: frozenset[int] = frozenset(),
               drop_stopwords: bool = True) -> list[Episode]:
        """Best-first episodes matching any token of the text (FTS5 bm25, or LIKE hit counts)."""
        if limit <= 0:
            return []
        query = sanitize_fts_query(text, drop_stopwords)
        if not query:
            return []
        fetch = limit + len(exclude)
        if self.fts:
            rows = self.conn.execute(
                f"SELECT {', '.join('e.' + c.strip() for c in _COLUMNS.split(','))} "
                "FROM episodes_fts JOIN episodes e ON e.turn_id = episodes_fts.rowid "
                "WHERE episodes_fts MATCH ? ORDER BY bm25(episodes_fts), e.turn_id LIMIT ?",
                (query, fetch)).fetchall()
        else:
            toks = [t.strip('"') for t in query.split(" OR ")]
            hits = " + ".join(["((query || ' ' || answer) LIKE ?)"] * len(toks))
            rows = self.conn.execute(
                f"SELECT {_COLUMNS} FROM (SELECT *, ({hits}) AS hits FROM episodes) "
                "WHERE hits > 0 ORDER BY hits DESC, turn_id LIMIT ?",
                (*[f"%{t}%" for t in toks], fetch)).fetchall()
        return [e for e in map(_row, rows) if e.turn_id not in exclude][:limit]

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None  # type: ignore[assignment]
