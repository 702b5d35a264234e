"""The transcript as external, line-addressable state (the Inspector's REPL variable).

Records are appended as turns arrive and never rebuilt: an inverted index from token to
record indices keeps query-anchored grep proportional to the matches, not the history, and
holds each token's indices in a growing integer array, so the Inspector counts and filters
the matches of a common token in vectorised steps (`matches`) rather than one Python step each.
The records persist as one JSON line each in `transcript.jsonl`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np

from .contracts import Episode, Record
from .text import distinct_tokens


def speaker_label(role: str, speaker: str | None) -> str:
    """The line's speaker: the name when there is one, else `User` / `Assistant` [CHOICE]."""
    return speaker.strip() if speaker and speaker.strip() else role.strip().title() or "User"


def render_lines(text: str, label: str, timestamp: datetime, render_dates: bool) -> list[str]:
    """One line per non-empty input line: `[YYYY-MM-DD] Label: text` [CHOICE]."""
    prefix = f"[{timestamp.strftime('%Y-%m-%d')}] " if render_dates else ""
    return [f"{prefix}{label}: {line.strip()}" for line in text.splitlines() if line.strip()]


def episode_lines(episode: Episode, render_dates: bool) -> list[tuple[str, str]]:
    """(speaker, line) pairs of an episode: the query side, then the answer side."""
    out: list[tuple[str, str]] = []
    if episode.query:
        label = speaker_label("user", episode.speaker if episode.role == "user" else None)
        out += [(label, line) for line in render_lines(episode.query, label, episode.timestamp,
                                                       render_dates)]
    if episode.answer:
        role = episode.role if episode.role != "user" else "assistant"
        label = speaker_label(role, episode.speaker if episode.role != "user" else None)
        out += [(label, line) for line in render_lines(episode.answer, label, episode.timestamp,
                                                       render_dates)]
    return out


class _Indices:
    """Record indices of one token, ascending: appended to a list (as cheap as before), moved
    into an integer array that doubles when full the next time the token is searched."""

    __slots__ = ("buf", "n", "pending")

    def __init__(self) -> None:
        self.buf = np.zeros(4, dtype=np.int64)
        self.n = 0
        self.pending: list[int] = []

    def append(self, index: int) -> None:
        self.pending.append(index)

    def view(self) -> np.ndarray:
        if self.pending:
            end = self.n + len(self.pending)
            size = self.buf.shape[0]
            while size < end:
                size *= 2
            if size > self.buf.shape[0]:
                grown = np.zeros(size, dtype=np.int64)
                grown[:self.n] = self.buf[:self.n]
                self.buf = grown
            self.buf[self.n:end] = self.pending
            self.n = end
            self.pending.clear()
        return self.buf[:self.n]


class Transcript:
    """Append-only line records with a token index."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._tokens: list[frozenset[str]] = []
        self._postings: dict[str, _Indices] = {}
        self._sessions: set[str] = set()
        self._turns: set[int] = set()
        self._speakers: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self.records)

    def add(self, record: Record) -> None:
        if record.index != len(self.records):
            raise ValueError(f"record index {record.index} breaks the line order")
        toks = distinct_tokens(record.text)
        self.records.append(record)
        self._tokens.append(toks)
        for tok in toks:
            post = self._postings.get(tok)
            if post is None:
                post = self._postings[tok] = _Indices()
            post.append(record.index)
        self._sessions.add(record.session_id)
        self._turns.add(record.turn_id)
        self._speakers[record.speaker] += 1

    def add_episode(self, episode: Episode, render_dates: bool) -> list[Record]:
        """Append an episode's lines; returns the new records."""
        new = []
        for label, line in episode_lines(episode, render_dates):
            rec = Record(index=len(self.records), turn_id=episode.turn_id, source_id=episode.source_id,
                         session_id=episode.session_id, timestamp=episode.timestamp, speaker=label,
                         text=line)
            self.add(rec)
            new.append(rec)
        return new

    def tokens_of(self, index: int) -> frozenset[str]:
        return self._tokens[index]

    # -- REPL operations -----------------------------------------------------------------------
    def peek(self) -> dict[str, object]:
        """Structure summary: counts, sessions, speakers (kept up to date on append)."""
        return {"records": len(self.records), "sessions": len(self._sessions),
                "turns": len(self._turns), "speakers": dict(sorted(self._speakers.items()))}

    def grep(self, pattern: str) -> list[int]:
        """Indices of records a regular expression matches (a linear scan)."""
        rx = re.compile(pattern, re.IGNORECASE)
        return [r.index for r in self.records if rx.search(r.text)]

    def window(self, start: int, end: int) -> list[Record]:
        """Records with start <= index < end."""
        return self.records[max(0, start):max(0, end)]

    def overlap_counts(self, tokens: Iterable[str]) -> dict[int, int]:
        """|tokens ∩ U(L_i)| for every record sharing at least one token (grep via the index)."""
        counts: dict[int, int] = {}
        for tok in set(tokens):
            post = self._postings.get(tok)
            for i in post.view().tolist() if post is not None else ():
                counts[i] = counts.get(i, 0) + 1
        return counts

    def matches(self, tokens: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """`overlap_counts` as two arrays: the matching record indices, ascending, and each
        one's count of distinct tokens shared."""
        found = [post.view() for tok in set(tokens) if (post := self._postings.get(tok)) is not None]
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(found) == 1:
            return found[0].copy(), np.ones(found[0].shape[0], dtype=np.int64)
        per_record = np.bincount(np.concatenate(found))
        idx = np.flatnonzero(per_record)
        return idx, per_record[idx]


def token_pattern(token: str) -> str:
    """The grep pattern for one query token: bounded by non-alphanumerics, like T(x)."""
    return rf"(?<![a-z0-9]){re.escape(token)}(?![a-z0-9])"


class TranscriptFile:
    """`transcript.jsonl`: one record per line, appended, never rewritten."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, records: Sequence[Record]) -> None:
        if not records:
            return
        with self.path.open("a", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps({
                    "i": r.index, "turn": r.turn_id, "source": r.source_id, "session": r.session_id,
                    "ts": r.timestamp.isoformat(), "speaker": r.speaker, "text": r.text,
                }, ensure_ascii=False, sort_keys=True) + "\n")

    def load(self) -> Transcript:
        transcript = Transcript()
        if not self.path.exists():
            return transcript
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                d = json.loads(line)
                transcript.add(Record(index=d["i"], turn_id=d["turn"], source_id=d["source"],
                                      session_id=d["session"], timestamp=datetime.fromisoformat(d["ts"]),
                                      speaker=d["speaker"], text=d["text"]))
        return transcript
