"""Adapter for the full-context baseline."""

from __future__ import annotations

import copy
import hashlib
from datetime import datetime

from lsrep.adapters.formatting import turn_line
from lsrep.systems.full_context import FullContextMemory, Line, Recall
from pydantic import BaseModel, ConfigDict, Field

from lsrep.contract import Fragment, MechanismSpec, MemoryAdapter, QueryResult, ReplayTurn

ASSEMBLE = "fullctx.assemble"
TRUNCATE = "fullctx.truncate"


class FullContextOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_limit: int | None = Field(default=16000, ge=1)
    """Tokens of history returned at most; the oldest turns are dropped beyond it (recorded)."""


class FullContextAdapter(MemoryAdapter):
    """The whole prefix, one fragment per turn, in time order with dates."""

    version = "1"
    Options = FullContextOptions
    supports_snapshot = True
    mechanisms = (
        MechanismSpec(name=ASSEMBLE, description="return the whole history in time order", can_disable=False,
                      stages=("eligible", "executed", "output", "selected", "in_prompt")),
        MechanismSpec(name=TRUNCATE, description="drop the oldest turns beyond the context limit", can_disable=False),
    )

    _fragments: dict[str, tuple[Line, Fragment]] | None = None
    """Per turn id: the line a fragment was built from, and that fragment (`_fragment`)."""
    _last_recall: tuple | None = None
    """The memory, its (version, limit), and the recall made for them (`_recall`)."""

    @property
    def context_limit(self) -> int | None:  # type: ignore[override]
        return self.setup.options.context_limit

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.memory = FullContextMemory(context_limit=self.setup.options.context_limit)
        self._fragments = {}
        self._last_recall = None

    def _fragment(self, line: Line) -> Fragment:
        """The fragment of one remembered line, built once per line and reused at every query.

        A line is immutable, so its fragment is a function of it; the entry is keyed by turn id and
        holds the line it was built from, and a different line object (after `restore` or `clear`)
        builds afresh (`tests/systems/baselines/test_full_context.py` compares with fragments
        built afresh)."""
        cache = self._fragments
        if cache is None:  # a subclass's own `reset` did not set it up
            cache = self._fragments = {}
        hit = cache.get(line.turn_id)
        if hit is not None and hit[0] is line:
            return hit[1]
        frag = Fragment(text=line.text, source_turn_ids=(line.turn_id,), tokens=line.tokens,
                        mechanisms=(ASSEMBLE,), kind="transcript")
        cache[line.turn_id] = (line, frag)
        return frag

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.memory.add(turn.turn_id, turn.session_id, turn_line(turn))

    def _recall(self) -> tuple[Recall, tuple[Fragment, ...], tuple[str, ...]]:
        """The recall with its fragments and their turn ids; the previous one again while the
        memory object, its version and its limit are the same (every probe of a checkpoint)."""
        memory = self.memory
        key = (memory.version, memory.context_limit)
        last = self._last_recall
        if last is not None and last[0] is memory and last[1] == key:
            return last[2]
        recall = memory.recall()
        out = (recall, tuple(map(self._fragment, recall.lines)), tuple([line.turn_id for line in recall.lines]))
        self._last_recall = (memory, key, out)
        return out

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.emit(ASSEMBLE, "eligible")
        recall, fragments, ids = self._recall()
        self.emit(ASSEMBLE, "executed", count=len(recall.lines))
        if recall.lines:
            self.emit(ASSEMBLE, "output", count=len(recall.lines))
        needs_cut = recall.dropped_turns > 0
        self.emit(TRUNCATE, "eligible" if needs_cut else "ineligible", reason=None if needs_cut else "idle: within limit")
        if needs_cut:
            self.emit(TRUNCATE, "executed", count=recall.dropped_turns,
                      params={"dropped_tokens": recall.dropped_tokens})
            self.emit(TRUNCATE, "output", count=recall.dropped_turns)
        if fragments:
            self.emit(ASSEMBLE, "selected", count=len(fragments), source_turn_ids=ids)
        return QueryResult(fragments=fragments, truncated_tokens=recall.dropped_tokens)

    def snapshot(self) -> FullContextMemory:
        return copy.deepcopy(self.memory)

    def restore(self, snapshot: FullContextMemory) -> None:
        self.memory = copy.deepcopy(snapshot)

    def state_digest(self) -> str:
        h = hashlib.sha256()
        for line in self.memory.lines:
            h.update(f"{line.turn_id}\0{line.session_id}\0{line.text}\0".encode())
        return h.hexdigest()
