"""The episodic store: one row per turn, with an FTS5 index, a vector and a strength."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from .db import Transaction, open_database, strength_stats
from .embedding import to_blob
from .lexical import LexicalIndex, Tokenizer, top_k_stable  # noqa: F401 (tests import it from here)
from .strengths import StrengthArrays
from .text import content_words, estimate_tokens, fts_query
from .turnreads import _SELECT, StoredTurn, TurnReads, _stored
from .vectors import TurnVectors

MIGRATIONS = [
    ("m001_turns", """
    CREATE TABLE turns (
        rowid INTEGER PRIMARY KEY,
        turn_id TEXT NOT NULL UNIQUE,
        conv_id TEXT NOT NULL,
        sess_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        ts TEXT NOT NULL,
        role TEXT NOT NULL,
        speaker TEXT,
        content TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        topic TEXT NOT NULL,
        strength REAL NOT NULL DEFAULT 1.0,
        strength_at TEXT NOT NULL,
        last_access TEXT,
        extracted INTEGER NOT NULL DEFAULT 0,
        vec BLOB NOT NULL
    );
    CREATE INDEX turns_conv ON turns(conv_id, idx);
    CREATE VIRTUAL TABLE turns_fts USING fts5(content, tokenize='porter unicode61');
    """),
    # Strengths and vectors in tables of their own: decay rewrites every live strength nightly
    # (an update of `turns` rewrote its 2 KB vector too), and a read of a turn's text no longer
    # takes a page of its own.
    ("m002_turn_strength_and_vectors", """
    CREATE TABLE turn_strength (
        rowid INTEGER PRIMARY KEY,
        strength REAL NOT NULL,
        strength_at TEXT NOT NULL,
        last_access TEXT
    );
    INSERT INTO turn_strength (rowid, strength, strength_at, last_access)
        SELECT rowid, strength, strength_at, last_access FROM turns ORDER BY rowid;
    ALTER TABLE turns DROP COLUMN strength;
    ALTER TABLE turns DROP COLUMN strength_at;
    ALTER TABLE turns DROP COLUMN last_access;
    CREATE TABLE turn_vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
    INSERT INTO turn_vectors (rowid, vec) SELECT rowid, vec FROM turns ORDER BY rowid;
    ALTER TABLE turns DROP COLUMN vec;
    """),
]


@dataclass(frozen=True)
class TurnRecord:
    """A turn as ICE stores it."""

    turn_id: str
    conversation_id: str
    session_id: str
    index: int
    timestamp: datetime
    role: str
    content: str
    speaker: str | None = None
    embed_text: str | None = None
    """The text whose vector is stored (the host's embedding-text policy); None: the content."""


LEXICAL_WARMUP = 16
"""Queries an open store answers by FTS5 alone before it builds its lexical index."""



class EpisodicStore:
    """Turns in `episodic.sqlite`; vectors cached in memory after the first search."""

    def __init__(self, path: Path) -> None:
        self.conn = open_database(path, MIGRATIONS)
        self._vec = TurnVectors()  # the vectors in memory, grown on add (see `vectors.py`)
        # Token totals and turn counts per conversation (None = all), filled on first use,
        # kept on add (turns are append-only).
        self._tokens: dict[str | None, int] = {}
        self._counts: dict[str | None, int] = {}
        self._conversations: dict[str, None] | None = None  # in order of their first turn
        self._pending: dict[str, None] | None = None  # ids not yet extracted, storage order
        self._strengths: StrengthArrays | None = None
        """`turn_strength` in memory (read once per open, kept on write): decay's input."""
        self._rowids: dict[str, int] | None = None
        """turn id -> rowid, read once per open and kept on add, so that writes to known turns
        address their row directly (`WHERE rowid = ?`: the same rows written with the same
        values, hence the same file, as `WHERE turn_id = ?`, without the index descent)."""
        self._lexical: LexicalIndex | None = None
        self._tokenizer: Tokenizer | None = None
        self._unindexed_queries = 0
        self.reads = TurnReads(self.conn)
        """Turns read before and the summaries worker's conversation cursors."""

    def close(self) -> None:
        if self._tokenizer is not None:
            self._tokenizer.close()
        self.conn.close()

    # -- writes ------------------------------------------------------------------------------
    def add(self, turn: TurnRecord, vec: np.ndarray, topic: str) -> bool:
        """Store a turn; False if its id is already stored (turns are append-only)."""
        if self.get(turn.turn_id) is not None:
            return False
        ts = turn.timestamp.isoformat()
        with Transaction(self.conn) as c:
            cur = c.execute(
                "INSERT INTO turns (turn_id, conv_id, sess_id, idx, ts, role, speaker, content,"
                " tokens, topic) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (turn.turn_id, turn.conversation_id, turn.session_id, turn.index, ts, turn.role,
                 turn.speaker, turn.content, estimate_tokens(turn.content), topic),
            )
            c.execute("INSERT INTO turn_vectors (rowid, vec) VALUES (?, ?)",
                      (cur.lastrowid, to_blob(vec)))
            c.execute("INSERT INTO turns_fts (rowid, content) VALUES (?, ?)",
                      (cur.lastrowid, turn.content))
            c.execute("INSERT INTO turn_strength (rowid, strength, strength_at) VALUES (?, 1.0, ?)",
                      (cur.lastrowid, ts))
        if self._rowids is not None:
            self._rowids[turn.turn_id] = cur.lastrowid
        self._vec.append(turn.turn_id, vec, topic)
        if self._lexical is not None:
            assert self._tokenizer is not None
            self._lexical.add(turn.turn_id, topic, self._tokenizer.tokens(turn.content))
        added = estimate_tokens(turn.content)
        for key in (None, turn.conversation_id):
            if key in self._tokens:
                self._tokens[key] += added
            if key in self._counts:
                self._counts[key] += 1
        if self._conversations is not None:
            self._conversations.setdefault(turn.conversation_id, None)
        self.reads.added(turn.conversation_id, turn.index, cur.lastrowid)
        if self._pending is not None:
            self._pending[turn.turn_id] = None
        if self._strengths is not None:
            self._strengths.add(cur.lastrowid, turn.turn_id, 1.0, ts)
        return True

    def mark_extracted(self, turn_id: str) -> None:
        self.conn.execute("UPDATE turns SET extracted = 1 WHERE turn_id = ?", (turn_id,))
        if self._pending is not None:
            self._pending.pop(turn_id, None)

    def reinforce(self, turn_ids: list[str], now: datetime) -> list[str]:
        """Access restores decay: strength 1.0, last access now. Returns the ids touched.

        One statement per stored id in the given order (repeats included), by rowid, in
        `turn_strength` (tests compare it with the statements by turn id), except a row that
        holds what it would write (`StrengthArrays.unchanged_by_reinforcing`).
        """
        stamp = now.isoformat()
        rowids = self.rowids()
        touched = [rowid for tid in turn_ids if (rowid := rowids.get(tid)) is not None]
        arrays = self._strengths
        if arrays is not None:
            # A row a reinforcement at this stamp wrote last already holds what its statement
            # would write (the probes of a checkpoint share `now` and much of their context):
            # skipped, leaving the same bytes. The first statement always runs, as the rule's.
            touched = touched[:1] + [r for r in touched[1:]
                                     if not arrays.unchanged_by_reinforcing(r, stamp)]
        with Transaction(self.conn) as c:
            c.executemany("UPDATE turn_strength SET strength = 1.0, strength_at = ?, last_access = ?"
                          " WHERE rowid = ?", [(stamp, stamp, rowid) for rowid in touched])
        if arrays is not None:
            for rowid in touched:
                arrays.reinforce(rowid, stamp)
        return list(turn_ids)

    def rowids(self) -> dict[str, int]:
        """turn id -> rowid of every stored turn (read once per open, kept on add)."""
        if self._rowids is None:
            self._rowids = dict(self.conn.execute("SELECT turn_id, rowid FROM turns"))
        return self._rowids

    # -- reads -------------------------------------------------------------------------------
    def get(self, turn_id: str) -> StoredTurn | None:
        row = self.conn.execute(f"{_SELECT} WHERE t.turn_id = ?", (turn_id,)).fetchone()
        return _stored(row) if row else None

    def get_many(self, turn_ids: list[str]) -> dict[str, StoredTurn]:
        """The stored turns among `turn_ids`, in their order (see `TurnReads.get_many`)."""
        return self.reads.get_many(turn_ids, self._strengths)

    def get_many_scan(self, turn_ids: list[str]) -> dict[str, StoredTurn]:
        return self.reads.get_many_scan(turn_ids)  # the rule (tests compare them)

    def count(self, conversation_id: str | None = None) -> int:
        """Stored turns (of one conversation, or all); counted once, then kept on add."""
        if conversation_id not in self._counts:
            self._counts[conversation_id] = self._count_rows(conversation_id)
        return self._counts[conversation_id]

    def _count_rows(self, conversation_id: str | None) -> int:
        if conversation_id is None:
            return self.conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
        return self.conn.execute(
            "SELECT COUNT(*) FROM turns WHERE conv_id = ?", (conversation_id,)).fetchone()[0]

    def tokens(self, conversation_id: str | None = None) -> int:
        """Estimated tokens of the stored turns (of one conversation, or all)."""
        if conversation_id not in self._tokens:
            self._tokens[conversation_id] = self._sum_tokens(conversation_id)
        return self._tokens[conversation_id]

    def _sum_tokens(self, conversation_id: str | None) -> int:
        if conversation_id is None:
            row = self.conn.execute("SELECT COALESCE(SUM(tokens), 0) FROM turns").fetchone()
        else:
            row = self.conn.execute("SELECT COALESCE(SUM(tokens), 0) FROM turns WHERE conv_id = ?",
                                    (conversation_id,)).fetchone()
        return int(row[0])

    def recent(self, conversation_id: str, n: int) -> list[StoredTurn]:
        """The conversation's last n turns, oldest first."""
        rows = self.conn.execute(
            f"{_SELECT} WHERE t.conv_id = ? ORDER BY t.idx DESC, t.rowid DESC LIMIT ?",
            (conversation_id, n)).fetchall()
        return [_stored(r) for r in reversed(rows)]

    def conversation(self, conversation_id: str, skip: int = 0) -> list[StoredTurn]:
        """The conversation's turns in order, after the first `skip` (see `TurnReads`)."""
        return self.reads.conversation(conversation_id, skip)

    def conversation_scan(self, conversation_id: str, skip: int = 0) -> list[StoredTurn]:
        return self.reads.conversation_scan(conversation_id, skip)  # the rule

    def conversations(self) -> list[str]:
        """Conversation ids in order of their first stored turn."""
        if self._conversations is None:
            self._conversations = dict.fromkeys(self._conversations_scan())
        return list(self._conversations)

    def _conversations_scan(self) -> list[str]:
        rows = self.conn.execute("SELECT conv_id FROM turns GROUP BY conv_id ORDER BY MIN(rowid)")
        return [r[0] for r in rows]

    def pending_extraction(self) -> list[StoredTurn]:
        """Turns not yet extracted, in storage order (the pending set is kept on write)."""
        if self._pending is None:
            self._pending = dict.fromkeys(r[0] for r in self.conn.execute(
                "SELECT turn_id FROM turns WHERE extracted = 0 ORDER BY rowid"))
        return list(self.get_many(list(self._pending)).values())

    def pending_extraction_scan(self) -> list[StoredTurn]:
        """The whole-table rule `pending_extraction` keeps incrementally (tests compare them)."""
        rows = self.conn.execute(f"{_SELECT} WHERE t.extracted = 0 ORDER BY t.rowid")
        return [_stored(r) for r in rows.fetchall()]

    def all_turns(self) -> list[StoredTurn]:
        return [_stored(r) for r in self.conn.execute(f"{_SELECT} ORDER BY t.rowid")]

    # -- search ------------------------------------------------------------------------------
    def vector_search(self, qvec: np.ndarray, k: int, topic: str | None = None) -> list[str]:
        """Turn ids by cosine with the query, best first (stable ties: storage order)."""
        self._vectors()
        return self._vec.search(qvec, k, topic)

    def lexical_search(self, query: str, k: int, topic: str | None = None) -> list[str]:
        """Turn ids by FTS5 rank (bm25) over the content words of the query, best first.

        Exactly `lexical_search_fts` (the SQL definition), computed by `LexicalIndex`, which
        scores only the turns that can reach the top k. The index is built from the file after
        the first `LEXICAL_WARMUP` queries of an open store, so a store reopened for every
        checkpoint (isolated access restores a snapshot) pays no rebuild per checkpoint.
        """
        if k <= 0 or (self._lexical is None and self._unindexed_queries < LEXICAL_WARMUP):
            self._unindexed_queries += 1
            return self.lexical_search_fts(query, k, topic)
        terms = content_words(query)
        return self.lexical_index().search(terms, k, topic) if terms else []

    def lexical_index(self) -> LexicalIndex:
        if self._lexical is None:
            if self._tokenizer is None:
                self._tokenizer = Tokenizer()
            self._lexical = LexicalIndex.from_database(self.conn, self._tokenizer)
        return self._lexical

    def lexical_search_fts(self, query: str, k: int, topic: str | None = None) -> list[str]:
        """The definition: FTS5 ranks every matching turn by bm25, ties by storage order."""
        match = fts_query(query)
        if match is None:
            return []
        sql = ("SELECT t.turn_id FROM turns_fts f JOIN turns t ON t.rowid = f.rowid"
               " WHERE turns_fts MATCH ?" + (" AND t.topic = ?" if topic else "")
               + " ORDER BY bm25(turns_fts), t.rowid LIMIT ?")
        args = (match, topic, k) if topic else (match, k)
        return [r[0] for r in self.conn.execute(sql, args)]

    def _vectors(self) -> tuple[list[str], np.ndarray]:
        if self._vec.ids is None:
            self._vec.load(self.conn.execute(
                "SELECT t.turn_id, v.vec, t.topic FROM turns t JOIN turn_vectors v"
                " ON v.rowid = t.rowid ORDER BY t.rowid").fetchall())
        return self._vec.ids or [], self._vec.matrix()

    # -- decay -------------------------------------------------------------------------------
    def strength_arrays(self) -> StrengthArrays:
        """`turn_strength` in memory: read once per open, then kept on write."""
        if self._strengths is None:
            ids = {rowid: tid for tid, rowid in self.rowids().items()}
            self._strengths = StrengthArrays(ids, self.conn.execute(
                "SELECT rowid, strength, strength_at FROM turn_strength ORDER BY rowid").fetchall())
        return self._strengths

    def strengths(self, above: float | None = None) -> list[tuple[str, float, str]]:
        """(id, strength, set at) in storage order, only those > `above` if given (from the
        arrays kept on write; `strengths_scan` is the rule)."""
        return self.strength_arrays().rows(above)

    def strengths_scan(self, above: float | None = None) -> list[tuple[str, float, str]]:
        """The whole-table rule `strengths` keeps in memory (tests compare them)."""
        where, args = ("WHERE s.strength > ? ", (above,)) if above is not None else ("", ())
        sql = ("SELECT t.turn_id, s.strength, s.strength_at FROM turn_strength s"
               f" JOIN turns t ON t.rowid = s.rowid {where}ORDER BY s.rowid")
        return [(r[0], r[1], r[2]) for r in self.conn.execute(sql, args)]

    def strength_stats(self) -> tuple[int, float]:
        """(turns, the correctly rounded sum of their strengths)."""
        arrays = self.strength_arrays()
        return arrays.count, arrays.total()

    def strength_stats_scan(self) -> tuple[int, float]:  # the whole-table rule
        return strength_stats(self.conn, "turn_strength")

    def set_strengths(self, updates: list[tuple[str, float]], now: datetime) -> None:
        """Write strengths set at `now`, in the given order, by rowid (unknown ids skipped)."""
        stamp = now.isoformat()
        rowids = self.rowids()
        known = [(s, rowid) for tid, s in updates if (rowid := rowids.get(tid)) is not None]
        self._write_strengths(known, stamp)

    def decay(self, now: datetime, floor: float, half_life_days: float) -> tuple[int, int, float]:
        """Age every strength above `floor` to `now` (`StrengthArrays.decay`) and write them.

        Returns (strengths read, how many changed, the sum of the new ones left to right in
        storage order): what `run_decay` reports, as the row-by-row rule computes it.
        """
        rowids, new, changed = self.strength_arrays().decay(now, floor, half_life_days)
        if rowids:
            self._write_strengths(list(zip(new, rowids, strict=True)), now.isoformat(), mirror=False)
        return len(rowids), changed, sum(new)

    def _write_strengths(self, known: list[tuple[float, int]], stamp: str,
                         mirror: bool = True) -> None:
        with Transaction(self.conn) as c:
            c.executemany("UPDATE turn_strength SET strength = ?, strength_at = ? WHERE rowid = ?",
                          [(s, stamp, rowid) for s, rowid in known])
        if mirror and self._strengths is not None:
            for s, rowid in known:
                self._strengths.set(rowid, s, stamp)
