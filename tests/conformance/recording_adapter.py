"""An adapter that writes down every argument the harness hands it, to show what reaches adapters."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lsrep.contract import AdapterSetup, Fragment, MemoryAdapter, QueryResult, ReplayTurn


class RecordingOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    log: str
    """JSON Lines file every call is appended to."""


class RecordingAdapter(MemoryAdapter):
    """Full recall of what it was given, and a log line per call (setup included)."""

    Options = RecordingOptions
    supports_snapshot = True

    def __init__(self, setup: AdapterSetup) -> None:
        super().__init__(setup)
        self.record("setup", options=setup.options.model_dump(), disabled=sorted(setup.disabled),
                    retrieval_budget=setup.retrieval_budget, seed=setup.seed,
                    embedder=getattr(setup.embedder, "name", None), llm=repr(setup.llm))
        self.turns: list[ReplayTurn] = []

    def record(self, call: str, **args: Any) -> None:
        line = json.dumps({"adapter": type(self).__name__, "call": call, "args": args}, default=str)
        with Path(self.setup.options.log).open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.record("reset", conversation_id=conversation_id, now=now)
        self.turns = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.record("ingest", turn=turn.model_dump(mode="json"), now=now)
        if all(t.turn_id != turn.turn_id for t in self.turns):
            self.turns.append(turn)

    def end_session(self, session_id: str, *, now: datetime) -> None:
        self.record("end_session", session_id=session_id, now=now)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.record("query", question=question, now=now)
        return QueryResult(fragments=tuple(
            Fragment(text=t.content, source_turn_ids=(t.turn_id,)) for t in self.turns
        ))

    def snapshot(self) -> list[ReplayTurn]:
        self.record("snapshot")
        return list(self.turns)

    def restore(self, snapshot: list[ReplayTurn]) -> None:
        self.record("restore", snapshot=[t.turn_id for t in snapshot])
        self.turns = list(snapshot)

    def state_digest(self) -> str:
        return ",".join(t.turn_id for t in self.turns)


class BudgetRecordingAdapter(RecordingAdapter):
    """The same, claiming to honour the budget (the harness must not treat it differently)."""

    honours_budget = True
