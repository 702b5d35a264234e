"""The LSREP adapter for KeywordMemory: it translates harness calls and reports what ran."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from lsrep.contract import Fragment, MechanismSpec, MemoryAdapter, QueryResult, ReplayTurn
from lsrep_example_adapter.memory import KeywordMemory

MATCH = "keyword.match"
RECENT = "keyword.recent"


class Options(BaseModel):
    """What a campaign may set, e.g. `options = { top_k = 3 }`. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=5, ge=1)
    """Matching lines returned at most."""
    recent_turns: int = Field(default=2, ge=0)
    """The last turns returned whatever the question (0: none)."""


class KeywordMemoryAdapter(MemoryAdapter):
    """Dated lines; a query returns those sharing the most words with it, then the latest turns."""

    version = "0.1.0"
    Options = Options
    mechanisms = (
        MechanismSpec(name=MATCH, description="lines sharing words with the question", can_disable=False),
        MechanismSpec(name=RECENT, description="the last turns, whatever the question"),
    )
    supports_snapshot = True
    honours_budget = True

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.memory = KeywordMemory()

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        # The date goes into the text, so whoever reads the context knows when it was said.
        who = f"{turn.speaker} ({turn.role})" if turn.speaker else turn.role
        line = f"[{turn.timestamp:%Y-%m-%d %H:%M}] {who}: {turn.content}"
        # KeywordMemory.add ignores a turn id it already holds: a retried delivery is stored once.
        self.memory.add(turn.turn_id, turn.session_id, line)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        options = self.setup.options
        self.emit(MATCH, "eligible" if self.memory.entries else "ineligible")
        hits = self.memory.search(question, options.top_k)
        self.emit(MATCH, "executed", count=len(self.memory.entries))
        fragments = [Fragment(text=e.text, source_turn_ids=(e.key,), score=float(n), mechanisms=(MATCH,))
                     for e, n in hits]
        if hits:
            self.emit(MATCH, "output", count=len(hits), source_turn_ids=tuple(e.key for e, _ in hits))
        if not self.enabled(RECENT):
            self.emit(RECENT, "skipped", reason="switched off")
        elif options.recent_turns:
            self.emit(RECENT, "eligible")
            shown = {e.key for e, _ in hits}
            recent = [e for e in self.memory.recent(options.recent_turns) if e.key not in shown]
            self.emit(RECENT, "executed", count=len(recent))
            if recent:
                self.emit(RECENT, "output", count=len(recent))
            fragments += [Fragment(text=e.text, source_turn_ids=(e.key,), mechanisms=(RECENT,), kind="recent")
                          for e in recent]
        kept, dropped = self._fit(fragments)
        for mechanism in (MATCH, RECENT):
            chosen = tuple(f.source_turn_ids[0] for f in kept if mechanism in f.mechanisms)
            if chosen:
                self.emit(mechanism, "selected", count=len(chosen), source_turn_ids=chosen)
        return QueryResult(fragments=tuple(kept), truncated_tokens=dropped)

    def _fit(self, fragments: list[Fragment]) -> tuple[list[Fragment], int]:
        """Keep fragments, in order, while they fit the campaign's retrieval budget (if it sets one)."""
        budget = self.setup.retrieval_budget
        kept, used, dropped = [], 0, 0
        for fragment in fragments:
            cost = (len(fragment.text) + 3) // 4  # the harness's estimate: characters / 4
            if budget is not None and used + cost > budget:
                dropped += cost
                continue
            kept.append(fragment)
            used += cost
        return kept, dropped

    def snapshot(self) -> list[dict[str, str]]:
        return self.memory.dump()

    def restore(self, snapshot: list[dict[str, str]]) -> None:
        self.memory = KeywordMemory()
        self.memory.load(snapshot)

    def state_digest(self) -> str:
        return self.memory.digest()
