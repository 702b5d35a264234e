"""Test adapters for `lsrep diff`: one whose fragment order is unseeded (a planted reordering)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn


class RecentTurnsAdapter(MemoryAdapter):
    """The last four turns, newest first: deterministic."""

    version = "1"

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.turns: list[ReplayTurn] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn)

    def recent(self) -> list[ReplayTurn]:
        return self.turns[-4:][::-1]

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple(Fragment(text=t.content, source_turn_ids=(t.turn_id,))
                                           for t in self.arrange(self.recent())))

    def arrange(self, turns: list[ReplayTurn]) -> list[ReplayTurn]:
        return turns

    def state_digest(self) -> str:
        return hashlib.sha256("|".join(t.turn_id for t in self.turns).encode()).hexdigest()


class ShufflingAdapter(RecentTurnsAdapter):
    """The same turns and the same state, in an order drawn from uuid4 (as tied scores ordered by
    an unseeded id, or async tasks finishing in any order): runs differ only in context order."""

    def arrange(self, turns: list[ReplayTurn]) -> list[ReplayTurn]:
        return sorted(turns, key=lambda _: uuid.uuid4().hex)
