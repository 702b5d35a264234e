"""Adapter for the null memory (remembers nothing)."""

from __future__ import annotations

from datetime import datetime

from lsrep.systems.null_memory import NullMemory

from lsrep.contract import MemoryAdapter, QueryResult, ReplayTurn


class NullAdapter(MemoryAdapter):
    """The floor: every query returns no context."""

    version = "1"
    supports_snapshot = True

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.memory = NullMemory()

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.memory.add(turn.content)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple())

    def snapshot(self) -> None:
        return None

    def restore(self, snapshot: None) -> None:
        return None

    def state_digest(self) -> str:
        return "empty"
