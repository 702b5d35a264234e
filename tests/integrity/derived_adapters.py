"""The same extracted memories, cited honestly (per turn) or over-cited (the whole session)."""

from __future__ import annotations

import re
from datetime import datetime

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn


def extract(content: str) -> str:
    """A derived memory: the turn's longer words, lowercased (not its wording)."""
    return "memory: " + " ".join(w for w in re.findall(r"[a-z0-9]+", content.lower()) if len(w) > 3)


class FactsPerTurn(MemoryAdapter):
    """One derived fact per turn, citing that turn; returns the five facts sharing most words with the question."""

    version = "1"

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.facts: list[tuple[str, str, str]] = []  # (turn id, session id, text)

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.facts.append((turn.turn_id, turn.session_id, extract(turn.content)))

    def cites(self, turn_id: str, session_id: str) -> tuple[str, ...]:
        return (turn_id,)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        words = set(extract(question).split()[1:])
        ranked = sorted(self.facts, key=lambda f: -len(words & set(f[2].split())))[:5]
        return QueryResult(fragments=tuple(
            Fragment(text=text, source_turn_ids=self.cites(tid, sid), kind="memory", derived=True)
            for tid, sid, text in ranked))


class FactsPerSession(FactsPerTurn):
    """The same facts, each citing every turn of its session seen so far (as a per-session writer does)."""

    def cites(self, turn_id: str, session_id: str) -> tuple[str, ...]:
        return tuple(t for t, s, _ in self.facts if s == session_id)
