"""Adapters that misbehave on purpose, used to show the harness catches them."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path

from lsrep.adapters.full_context import FullContextAdapter
from pydantic import BaseModel, ConfigDict

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn


class LeakyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trajectory_path: str


class LeakyAdapter(MemoryAdapter):
    """Reads the whole trajectory file at reset: every query sees the future."""

    Options = LeakyOptions

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        lines = Path(self.setup.options.trajectory_path).read_text().splitlines()
        self.turns = [json.loads(line) for line in lines if line.strip()]

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple(
            Fragment(text=t["content"], source_turn_ids=(t["turn_id"],)) for t in self.turns
        ))


class SlowOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delay_s: float = 0.05


class SlowFullContextAdapter(FullContextAdapter):
    """Full context with a delay per ingest, so a test can kill a run midway."""

    Options = SlowOptions

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        from lsrep.systems.full_context import FullContextMemory

        self.memory = FullContextMemory(context_limit=None)

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        time.sleep(self.setup.options.delay_s)
        super().ingest(turn, now=now)


class FlakyAdapter(FullContextAdapter):
    """Fails every query whose question mentions a wedding, and the `decay` maintenance."""

    maintenance_operations = frozenset({"decay"})

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if "wedding" in question.lower():
            raise RuntimeError("index corrupted while answering")
        return super().query(question, now=now)

    def maintain(self, operation: str, *, now: datetime) -> None:
        raise OSError("disk full during decay")


class IngestCrashAdapter(FullContextAdapter):
    """Dies on the 10th ingest: the rest of the replay cannot be observed."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if turn.index == 9:
            raise ValueError("cannot parse turn")
        super().ingest(turn, now=now)


class HardCrashAdapter(FullContextAdapter):
    """Kills its worker process outright (tests the process-pool executor)."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if turn.index == 3:
            os._exit(13)
        super().ingest(turn, now=now)


class StickyRestoreAdapter(FullContextAdapter):
    """Counts queries in its state, and its restore forgets to roll the counter back."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        super().reset(conversation_id=conversation_id, now=now)
        self.queries = 0

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.queries += 1
        return super().query(question, now=now)

    def state_digest(self) -> str:
        return f"{super().state_digest()}:{self.queries}"
