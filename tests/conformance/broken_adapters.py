"""A correct reference adapter, and one adapter per conformance check that breaks exactly that contract.

`ReferenceAdapter` is a dated transcript memory that passes every check. Each broken adapter
changes one behaviour of it; `BROKEN` maps it to the one check that must catch it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from datetime import date, datetime

from pydantic import BaseModel, ConfigDict

from lsrep.contract import Fragment, MechanismSpec, MemoryAdapter, QueryResult, ReplayTurn
from lsrep.text import estimate_tokens

RECALL, TRIM, CLOSE = "ref.recall", "ref.trim", "ref.session_close"


class ReferenceAdapter(MemoryAdapter):
    """Every turn as a dated line, returned in time order, newest kept within limit and budget."""

    version = "1"
    supports_snapshot = True
    honours_budget = True
    context_limit = 300
    mechanisms = (
        MechanismSpec(name=RECALL, description="remembered turns in time order", can_disable=False),
        MechanismSpec(name=TRIM, description="drop the oldest turns beyond the limit or budget", can_disable=False),
        MechanismSpec(name=CLOSE, description="record each closed session"),
    )

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.lines: list[tuple[str, str, str]] = []
        self.closed: list[str] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if any(tid == turn.turn_id for tid, _, _ in self.lines):
            return  # a redelivered turn: the state already holds it
        self.lines.append((turn.turn_id, turn.session_id, self.render(turn)))

    def render(self, turn: ReplayTurn) -> str:
        return f"[{turn.timestamp:%Y-%m-%d %H:%M}] {turn.role}: {turn.content}"

    def end_session(self, session_id: str, *, now: datetime) -> None:
        if not self.enabled(CLOSE):
            self.emit(CLOSE, "skipped", reason="switched off")
            return
        self.emit(CLOSE, "eligible")
        self.closed.append(session_id)
        self.emit(CLOSE, "executed", count=1)

    def ceiling(self) -> int | None:
        limits = [n for n in (self.context_limit, self.setup.retrieval_budget) if n is not None]
        return min(limits) if limits else None

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.emit(RECALL, "eligible" if self.lines else "ineligible")
        kept, used, ceiling = [], 0, self.ceiling()
        for tid, _, text in reversed(self.lines):
            if ceiling is not None and used + estimate_tokens(text) > ceiling:
                break
            kept.append((tid, text))
            used += estimate_tokens(text)
        kept.reverse()
        self.emit(RECALL, "executed", count=len(self.lines))
        if len(kept) < len(self.lines):
            self.emit(TRIM, "executed", count=len(self.lines) - len(kept))
        else:
            self.emit(TRIM, "skipped", reason="idle: everything fits")
        fragments = [Fragment(text=text, source_turn_ids=(tid,), mechanisms=(RECALL,), kind="transcript")
                     for tid, text in kept]
        if fragments:
            self.emit(RECALL, "output", count=len(fragments))
            self.emit(RECALL, "selected", count=len(fragments))
        return QueryResult(fragments=tuple(self.present(fragments)))

    def present(self, fragments: list[Fragment]) -> list[Fragment]:
        return fragments

    def snapshot(self) -> tuple[list, list]:
        return copy.deepcopy((self.lines, self.closed))

    def restore(self, snapshot: tuple[list, list]) -> None:
        self.lines, self.closed = copy.deepcopy(snapshot)

    def state_digest(self) -> str:
        return hashlib.sha256(json.dumps([self.lines, self.closed]).encode()).hexdigest()


class LaxOptions(BaseModel):
    model_config = ConfigDict(extra="allow")


class LaxOptionsAdapter(ReferenceAdapter):
    """Options that accept any key: a misspelt option is silently ignored."""

    Options = LaxOptions


class RenamedNowAdapter(ReferenceAdapter):
    """Its `maintain` takes the time under another name, so the harness's `now=` call would fail."""

    def maintain(self, operation: str, *, at: datetime) -> None:  # type: ignore[override]
        raise NotImplementedError


class SilentAnswererAdapter(ReferenceAdapter):
    """Declares an answering stage but returns no answer."""

    answers = True


class NoResetAdapter(ReferenceAdapter):
    """Reset keeps the previous history."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        if not hasattr(self, "lines"):
            super().reset(conversation_id=conversation_id, now=now)


class DropsTimestampsAdapter(ReferenceAdapter):
    """Stores the words without the date they were said."""

    def render(self, turn: ReplayTurn) -> str:
        return f"{turn.role}: {turn.content}"


class ReversedOrderAdapter(ReferenceAdapter):
    """Presents the unranked transcript newest first."""

    def present(self, fragments: list[Fragment]) -> list[Fragment]:
        return fragments[::-1]


class DuplicatesOnRetryAdapter(ReferenceAdapter):
    """Stores a redelivered turn a second time."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.lines.append((turn.turn_id, turn.session_id, self.render(turn)))


class SharedSnapshotAdapter(ReferenceAdapter):
    """The snapshot is the live state, so later ingests change it too."""

    def snapshot(self) -> tuple[list, list]:
        return (self.lines, self.closed)

    def restore(self, snapshot: tuple[list, list]) -> None:
        self.lines, self.closed = snapshot


class LeakyIsolationAdapter(ReferenceAdapter):
    """Queries append to a recall log the snapshot does not cover."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        super().reset(conversation_id=conversation_id, now=now)
        self.recalls: list[str] = []

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.recalls.append(question)
        return super().query(question, now=now)

    def state_digest(self) -> str:
        return hashlib.sha256(json.dumps([self.lines, self.closed, self.recalls]).encode()).hexdigest()


class GhostCitationAdapter(ReferenceAdapter):
    """Its newest fragment also cites a turn that was never ingested."""

    def present(self, fragments: list[Fragment]) -> list[Fragment]:
        if not fragments:
            return fragments
        last = fragments[-1]
        ghost = last.model_copy(update={"source_turn_ids": (*last.source_turn_ids, f"ghost-{last.source_turn_ids[0]}")})
        return [*fragments[:-1], ghost]


class UndeclaredEventsAdapter(ReferenceAdapter):
    """Emits events for a mechanism it never declared."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.emit("ref.hidden_rerank", "executed")
        return super().query(question, now=now)


class IgnoresDisableAdapter(ReferenceAdapter):
    """Closes sessions even when that mechanism is switched off."""

    def end_session(self, session_id: str, *, now: datetime) -> None:
        self.emit(CLOSE, "executed", count=1)
        self.closed.append(session_id)


class NondeterministicAdapter(ReferenceAdapter):
    """Declared deterministic, but scores fragments with noise seeded by the OS instead of setup.seed."""

    def __init__(self, setup) -> None:
        super().__init__(setup)
        self.noise = random.SystemRandom().random()

    def present(self, fragments: list[Fragment]) -> list[Fragment]:
        return [f.model_copy(update={"score": self.noise}) for f in fragments]


class OverContextLimitAdapter(ReferenceAdapter):
    """Declares a context limit it does not enforce (it honours only the budget)."""

    def ceiling(self) -> int | None:
        return self.setup.retrieval_budget


class IgnoresBudgetAdapter(ReferenceAdapter):
    """Claims to honour the campaign's retrieval budget but keeps only its own limit."""

    def ceiling(self) -> int | None:
        return self.context_limit


class SessionFlatteningAdapter(ReferenceAdapter):
    """Implements end_session (so declares session use) but keeps no trace of sessions at all."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if any(tid == turn.turn_id for tid, _, _ in self.lines):
            return
        self.lines.append((turn.turn_id, "", self.render(turn)))

    def end_session(self, session_id: str, *, now: datetime) -> None:
        if not self.enabled(CLOSE):
            self.emit(CLOSE, "skipped", reason="switched off")
            return
        self.emit(CLOSE, "eligible")
        self.emit(CLOSE, "executed", count=1)


class DuplicateIngestAdapter(ReferenceAdapter):
    """Stores every turn twice on its first delivery (a redelivery is a quiet no-op, so retries look fine)."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if any(tid == turn.turn_id for tid, _, _ in self.lines):
            return
        self.lines += [(turn.turn_id, turn.session_id, self.render(turn))] * 2


class PhantomMechanismAdapter(ReferenceAdapter):
    """Declares a reranker that does not exist: it never reports anything."""

    mechanisms = (*ReferenceAdapter.mechanisms,
                  MechanismSpec(name="ref.rerank", description="cross-encoder reranking of recalled turns"))


class ProducesNothingAdapter(ReferenceAdapter):
    """Declares a reranker that reports output on every query but changes nothing and names nothing."""

    mechanisms = (*ReferenceAdapter.mechanisms,
                  MechanismSpec(name="ref.rerank", description="cross-encoder reranking of recalled turns"))

    def query(self, question: str, *, now: datetime) -> QueryResult:
        result = super().query(question, now=now)
        if not self.enabled("ref.rerank"):
            self.emit("ref.rerank", "skipped", reason="switched off")
        elif result.fragments:
            self.emit("ref.rerank", "eligible", count=len(result.fragments))
            self.emit("ref.rerank", "executed", count=len(result.fragments))
            self.emit("ref.rerank", "output", count=len(result.fragments))
        return result


class SnapshotMissingStateAdapter(ReferenceAdapter):
    """Its snapshot copies the transcript but forgets the closed sessions."""

    def snapshot(self) -> list:
        return copy.deepcopy(self.lines)

    def restore(self, snapshot: list) -> None:
        self.lines = copy.deepcopy(snapshot)


class WallClockAdapter(ReferenceAdapter):
    """Notes when it stored each turn by the machine's clock, not the simulated one."""

    def render(self, turn: ReplayTurn) -> str:
        return f"{super().render(turn)} (noted {date.today().isoformat()})"


class WallClockDigestAdapter(ReferenceAdapter):
    """Keeps the machine's date of each closed session in its state (the digest), but never says it."""

    def end_session(self, session_id: str, *, now: datetime) -> None:
        super().end_session(session_id, now=now)
        if self.closed and self.closed[-1] == session_id:
            self.closed[-1] = f"{session_id}@{date.today().isoformat()}"


class SizeKeyedResetLeakAdapter(ReferenceAdapter):
    """Caches answers by (question, store size) across resets."""

    def __init__(self, setup) -> None:
        super().__init__(setup)
        self.cache: dict[tuple[str, int], QueryResult] = {}

    def query(self, question: str, *, now: datetime) -> QueryResult:
        key = (question, len(self.lines))
        if key not in self.cache:
            self.cache[key] = super().query(question, now=now)
        return self.cache[key]


class FirstLineOnlyAdapter(ReferenceAdapter):
    """Keeps only the first line of each turn (what a naive line reader does with multi-line text)."""

    def render(self, turn: ReplayTurn) -> str:
        first = turn.content.splitlines()[0] if turn.content.splitlines() else ""
        return f"[{turn.timestamp:%Y-%m-%d %H:%M}] {turn.role}: {first}"


class CrashesOnNulAdapter(ReferenceAdapter):
    """Raises on a NUL character, as C libraries and some stores do."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if "\x00" in turn.content:
            raise ValueError("embedded null character")
        super().ingest(turn, now=now)


BROKEN: dict[type[MemoryAdapter], str] = {
    LaxOptionsAdapter: "options_model",
    RenamedNowAdapter: "call_signatures",
    SilentAnswererAdapter: "replay_runs",
    NoResetAdapter: "reset_empties_state",
    DropsTimestampsAdapter: "timestamps_reach_system",
    ReversedOrderAdapter: "ingest_order",
    DuplicatesOnRetryAdapter: "retry_no_duplicate",
    SharedSnapshotAdapter: "snapshot_roundtrip",
    LeakyIsolationAdapter: "isolated_probe",
    GhostCitationAdapter: "citations_ingested",
    UndeclaredEventsAdapter: "mechanism_events",
    IgnoresDisableAdapter: "disabled_mechanisms",
    NondeterministicAdapter: "determinism",
    OverContextLimitAdapter: "context_limit",
    IgnoresBudgetAdapter: "retrieval_budget",
    SessionFlatteningAdapter: "session_boundaries",
    DuplicateIngestAdapter: "no_duplicate_fragments",
    PhantomMechanismAdapter: "mechanisms_report",
    ProducesNothingAdapter: "mechanisms_produce",
    SnapshotMissingStateAdapter: "snapshot_roundtrip",
    WallClockAdapter: "no_wall_clock",
    WallClockDigestAdapter: "no_wall_clock",
    SizeKeyedResetLeakAdapter: "reset_empties_state",
    FirstLineOnlyAdapter: "hostile_text",
    CrashesOnNulAdapter: "hostile_text",
}
"""Each broken adapter and the one check that must fail for it."""


# -- adapters that peek at the harness for gold (impossible under the adapter host) --------------------
class _Peeker(ReferenceAdapter):
    """A correct adapter that adds whatever gold its route finds as one more fragment."""

    def peek(self, question: str) -> list[str]:
        raise NotImplementedError

    def query(self, question: str, *, now: datetime) -> QueryResult:
        result = super().query(question, now=now)
        gold = self.peek(question)
        if not gold or not self.lines:
            return result
        # Cited to the latest ingested turn, so a citation audit alone sees nothing wrong.
        extra = Fragment(text=f"{question.rstrip('?')}: {'; '.join(gold)}", source_turn_ids=(self.lines[-1][0],),
                         mechanisms=(RECALL,), kind="peeked", score=1.0)
        return result.model_copy(update={"fragments": (extra, *result.fragments)})


class StackPeekingAdapter(_Peeker):
    """Walks the call stack for the probe being asked and returns its expected answers."""

    def peek(self, question: str) -> list[str]:
        from tests.conformance.peeking import from_stack

        return from_stack(question)


class HeapPeekingAdapter(_Peeker):
    """Searches gc.get_objects() for the Probe with the asked question."""

    def peek(self, question: str) -> list[str]:
        from tests.conformance.peeking import from_heap

        return from_heap(question)


class FilePeekingAdapter(_Peeker):
    """Finds the campaign file (argv, cwd, environment, /proc of its parent and of every process)
    and reads the probe file it names."""

    def peek(self, question: str) -> list[str]:
        from tests.conformance.peeking import from_files

        return from_files(question)


class DiskSearchingAdapter(_Peeker):
    """Walks the whole filesystem (no path given) for probe files and run stores holding the question."""

    def peek(self, question: str) -> list[str]:
        from tests.conformance.peeking import disk_candidates, from_disk

        if getattr(self, "candidates", None) is None:
            self.candidates = disk_candidates()  # walked once per instance, at its first question
        return from_disk(question, self.candidates)


class EnvPeekingAdapter(_Peeker):
    """Returns key-like environment variables (its own and its parent's) as context."""

    def peek(self, question: str) -> list[str]:
        from tests.conformance.peeking import secrets_in_environment

        return secrets_in_environment()


PEEKING: dict[type[MemoryAdapter], str] = {
    StackPeekingAdapter: "gold_unreachable",
    HeapPeekingAdapter: "gold_unreachable",
    FilePeekingAdapter: "gold_unreachable",
    DiskSearchingAdapter: "gold_unreachable",
    EnvPeekingAdapter: "gold_unreachable",
}
"""Peekers: harmless in the default adapter host; in-process, the check named fails for each."""
