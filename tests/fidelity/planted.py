"""A multi-mechanism adapter with two planted defects beside honest mechanisms.

- `planted.retrieve`: honest retrieval leg, reaches the prompt (declared full pipeline).
- `planted.rerank`: honest pass-through; runs, produces nothing of its own (declared executed only),
  and claims the prompt in its own `in_prompt` events.
- `planted.cap`: honest cap with nothing over it: reports `idle`.
- `planted.fallback`: honest fallback whose trigger never occurs (ineligible).
- `planted.expand`: honest opt-in mechanism switched off by configuration.
- `planted.quiet`: a third-party-style mechanism that declares nothing and never says it output.
- `planted.never_runs` (PLANTED): eligible on every query, never runs, gives no reason.
- `planted.hollow` (PLANTED): a leg declared to output; runs on every query, never produces.
"""

from __future__ import annotations

from datetime import datetime

from lsrep.contract import Fragment, MechanismSpec, MemoryAdapter, QueryResult, ReplayTurn

FULL = ("eligible", "executed", "output", "selected", "in_prompt")


class PlantedAdapter(MemoryAdapter):
    mechanisms = (
        MechanismSpec(name="planted.retrieve", description="word-overlap retrieval", stages=FULL),
        MechanismSpec(name="planted.rerank", description="reorders hits", stages=("eligible", "executed")),
        MechanismSpec(name="planted.cap", description="caps hits at 50"),
        MechanismSpec(name="planted.fallback", description="when nothing matches"),
        MechanismSpec(name="planted.expand", description="query expansion (opt-in, off)"),
        MechanismSpec(name="planted.quiet", description="declares nothing"),
        MechanismSpec(name="planted.never_runs", description="planted: never runs", stages=FULL),
        MechanismSpec(name="planted.hollow", description="planted: never produces", stages=FULL),
    )

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.turns: list[ReplayTurn] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        words = set(question.lower().split())
        self.emit("planted.retrieve", "eligible")
        hits = [t for t in self.turns if words & set(t.content.lower().split())][:5]
        self.emit("planted.retrieve", "executed", count=len(hits))
        if hits:
            self.emit("planted.retrieve", "output", count=len(hits))
            self.emit("planted.retrieve", "selected", count=len(hits))
        self.emit("planted.rerank", "eligible")
        self.emit("planted.rerank", "executed", count=len(hits))
        if hits:  # the system's own (over-generous) account of its prompt
            self.emit("planted.rerank", "in_prompt", count=len(hits))
        self.emit("planted.cap", "executed", reason="idle: nothing over the cap")
        self.emit("planted.fallback", "ineligible", reason="a hit was found" if hits else "store empty")
        self.emit("planted.expand", "skipped", reason="disabled: expansion is off")
        self.emit("planted.quiet", "eligible")
        self.emit("planted.quiet", "executed")
        self.emit("planted.never_runs", "eligible")
        self.emit("planted.hollow", "eligible")
        self.emit("planted.hollow", "executed", count=0)
        return QueryResult(fragments=tuple(
            Fragment(text=t.content, source_turn_ids=(t.turn_id,),
                     mechanisms=("planted.retrieve", "planted.rerank")) for t in hits))
