"""Reads of stored turns that skip work the file would repeat (their rules stay beside them).

`EpisodicStore` delegates here: `get_many` serves a turn read before from memory, with its
current strength from the strength arrays, and `conversation` starts the summaries worker's
read after the key of its `skip`-th turn instead of walking an `OFFSET`. `get_many_scan` and
`conversation_scan` are the whole reads from the file that tests compare them with.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .strengths import StrengthArrays
from .text import estimate_tokens


@dataclass(frozen=True)
class StoredTurn:
    """A stored turn with its memory state."""

    turn_id: str
    conversation_id: str
    session_id: str
    index: int
    timestamp: str
    role: str
    speaker: str | None
    content: str
    topic: str
    strength: float

    @property
    def label(self) -> str:
        return self.speaker or self.role

    def render(self) -> str:
        """The turn as a context line: `[date speaker] content`."""
        return f"[{self.timestamp[:10]} {self.label}] {self.content}"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.render())


_SELECT = ("SELECT t.turn_id, t.conv_id, t.sess_id, t.idx, t.ts, t.role, t.speaker, t.content,"
           " t.topic, s.strength FROM turns t JOIN turn_strength s ON s.rowid = t.rowid")
"""What a `StoredTurn` is built from: the turn's row (its vector is in `turn_vectors`) and its
strength (in `turn_strength`)."""
_SELECT_ROWID = _SELECT.replace("SELECT t.turn_id", "SELECT t.rowid, t.turn_id", 1)


def _stored(row: sqlite3.Row) -> StoredTurn:
    return StoredTurn(
        turn_id=row["turn_id"], conversation_id=row["conv_id"], session_id=row["sess_id"],
        index=row["idx"], timestamp=row["ts"], role=row["role"], speaker=row["speaker"],
        content=row["content"], topic=row["topic"], strength=row["strength"],
    )


class TurnReads:
    """Turns read before (by id) and the conversations' cursors, for one open store file."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._seen: dict[str, tuple[int, StoredTurn]] = {}
        """turn id -> (rowid, the turn as last read): `get_many`'s turns read before."""
        self.turn_reads = 0
        """Queries `get_many` sent to the file (a work count for tests)."""
        self._cursors: dict[str, tuple[int, list[tuple[int, int]]]] = {}
        """conversation -> (p, keys): keys[j] is the (idx, rowid) of its (p + j)-th turn in
        order (1-based), from the last `conversation` call."""
        self.offset_reads = 0
        """`conversation` calls that walked an `OFFSET` (a work count for tests)."""

    def added(self, conversation_id: str, index: int, rowid: int) -> None:
        """A turn was stored: one that sorts before a kept key moves the positions."""
        cursor = self._cursors.get(conversation_id)
        if cursor and cursor[1] and (index, rowid) < cursor[1][-1]:
            del self._cursors[conversation_id]

    def get_many(self, turn_ids: list[str], arrays: StrengthArrays | None) -> dict[str, StoredTurn]:
        """The stored turns among `turn_ids`, in their order (`get_many_scan`, the rule).

        A turn's row never changes once stored (turns are append-only) and its strength is
        mirrored in the strength arrays (`arrays`) once they are loaded, so a turn read before
        is served from memory with its current strength; the others are read from the file.
        """
        wanted = list(dict.fromkeys(turn_ids))
        seen = self._seen
        found: dict[str, StoredTurn] = {}
        if arrays is not None:
            for tid in wanted:
                hit = seen.get(tid)
                if hit is not None:
                    rowid, turn = hit
                    strength = arrays.value.item(rowid)
                    if turn.strength != strength:
                        turn = StoredTurn(turn.turn_id, turn.conversation_id, turn.session_id,
                                          turn.index, turn.timestamp, turn.role, turn.speaker,
                                          turn.content, turn.topic, strength)
                        seen[tid] = (rowid, turn)
                    found[tid] = turn
        missing = [t for t in wanted if t not in found]
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            marks = ",".join("?" * len(chunk))
            self.turn_reads += 1
            for row in self.conn.execute(f"{_SELECT_ROWID} WHERE t.turn_id IN ({marks})", chunk):
                turn = found[row["turn_id"]] = _stored(row)
                seen[turn.turn_id] = (row["rowid"], turn)
        return {t: found[t] for t in wanted if t in found}

    def get_many_scan(self, turn_ids: list[str]) -> dict[str, StoredTurn]:
        """The rule `get_many` keeps: every turn read from the file (tests compare them)."""
        found: dict[str, StoredTurn] = {}
        wanted = list(dict.fromkeys(turn_ids))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"{_SELECT} WHERE t.turn_id IN ({marks})", chunk):
                found[row["turn_id"]] = _stored(row)
        return {t: found[t] for t in wanted if t in found}

    def conversation(self, conversation_id: str, skip: int = 0) -> list[StoredTurn]:
        """The conversation's turns in order, after the first `skip` (`conversation_scan`).

        The summaries worker asks for the turns after the summarised ones every night, with a
        `skip` that only grows; an `OFFSET` walks every skipped turn. The keys (idx, rowid) of
        the turns a call returned are kept, so that the next call can start after the key of
        its `skip`-th turn instead; an added turn that sorts before a kept key drops them.
        """
        first, keys = self._cursors.get(conversation_id, (0, []))
        at = skip - first
        if skip > 0 and 0 <= at < len(keys):
            rows = self.conn.execute(
                f"{_SELECT_ROWID} WHERE t.conv_id = ? AND (t.idx, t.rowid) > (?, ?)"
                " ORDER BY t.idx, t.rowid", (conversation_id, *keys[at])).fetchall()
            kept = [keys[at]]
        else:
            self.offset_reads += 1
            rows = self.conn.execute(
                f"{_SELECT_ROWID} WHERE t.conv_id = ? ORDER BY t.idx, t.rowid LIMIT -1 OFFSET ?",
                (conversation_id, skip)).fetchall()
            kept = []
        # kept[j]: the key of the conversation's (skip + j)-th turn (1-based), or (skip + 1 + j)-th.
        self._cursors[conversation_id] = (skip - len(kept) + 1,
                                          kept + [(r["idx"], r["rowid"]) for r in rows])
        return [_stored(r) for r in rows]

    def conversation_scan(self, conversation_id: str, skip: int = 0) -> list[StoredTurn]:
        """The rule `conversation` keeps: the turns in order after an `OFFSET` of `skip`."""
        rows = self.conn.execute(
            f"{_SELECT} WHERE t.conv_id = ? ORDER BY t.idx, t.rowid LIMIT -1 OFFSET ?",
            (conversation_id, skip)).fetchall()
        return [_stored(r) for r in rows]
