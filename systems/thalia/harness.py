"""Thalia: the four runtime stages composed over a state directory.

State (all files, so a directory copy is a complete snapshot):
`episodes.sqlite` (append-only store), `transcript.jsonl` (the Inspector's line records),
`MEMORY.md` (derived memory), `snapshot.md` (the frozen snapshot of the open session) and
`session.json` (which session is open). Time is always passed in; nothing reads a clock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from .config import HarnessConfig
from .contracts import (
    Episode,
    GateOutput,
    HarnessOutput,
    InspectorMetadata,
    MemorySnapshot,
    RankedEvidence,
    RetrieverOutput,
)
from .embedding import Embedder, HashingEmbedder
from .events import EventHook, EventRelay
from .gate import MemoryGate
from .inspector import Inspector
from .lm import ExtractiveLM, LMClient
from .memory import MemoryFile, make_snapshot
from .reasoner import Reasoner
from .recall import recall_windows
from .retriever import Retriever
from .routing import classify_task
from .store import EpisodicStore
from .text import distinct_tokens
from .transcript import TranscriptFile

STORE_FILE = "episodes.sqlite"
TRANSCRIPT_FILE = "transcript.jsonl"
MEMORY_FILE = "MEMORY.md"
SNAPSHOT_FILE = "snapshot.md"
SESSION_FILE = "session.json"

_PRODUCER = {"none": "inspector.grep", "order": "inspector.fallback_order",
             "overlap": "inspector.fallback_overlap"}


def attribute(r: RankedEvidence, retrieved: RetrieverOutput,
              meta: InspectorMetadata) -> tuple[str, ...]:
    """The mechanisms that contributed one ranked window (its attribution)."""
    w, ran = r.window, retrieved.executed
    out: list[str] = []
    if w.origin == "recall":
        out.append("recall.fts")
    else:
        out.append(_PRODUCER[meta.fallback])
        if meta.partitioned:
            out.append("inspector.partition")
        if w.widened:
            out.append("inspector.adaptive_windows")
    if "retriever.prf" in ran and set(retrieved.expansion_terms) & distinct_tokens(w.text):
        out.append("retriever.prf")
    out.extend(r.lanes)
    for mech in ("retriever.rrf", "retriever.mmr"):
        if mech in ran:
            out.append(mech)
    if "retriever.recency" in ran and w.source_index >= 0:
        out.append("retriever.recency")
    out.append("retriever.budget")
    return tuple(out)


class Thalia:
    """One THALIA memory over a state directory."""

    def __init__(self, state_dir: str | Path, config: HarnessConfig | None = None, *,
                 embedder: Embedder | None = None, lm: LMClient | None = None,
                 on_event: EventHook | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.config = config or HarnessConfig()
        self.embedder = embedder or HashingEmbedder(self.config.hash_dim)
        self.lm = lm or ExtractiveLM()
        self.emit = EventRelay(on_event)
        self.store = EpisodicStore(self.state_dir / STORE_FILE, use_fts=self.config.fts,
                                   synchronous=self.config.sqlite_synchronous,
                                   journal_mode=self.config.sqlite_journal_mode)
        self.memory = MemoryFile(self.state_dir / MEMORY_FILE)
        self.transcript_file = TranscriptFile(self.state_dir / TRANSCRIPT_FILE)
        self.transcript = self.transcript_file.load()
        if not self.transcript_file.path.exists() and len(self.store):
            for ep in self.store.episodes():  # rebuild the line records from raw episodes
                self.transcript_file.append(self.transcript.add_episode(ep, self.config.render_dates))
        self._session = self._load_session()
        self.inspector = Inspector(self.config, self.emit)
        self.retriever = Retriever(self.config, self.embedder, self.emit)
        self.reasoner = Reasoner(self.config, self.lm, self.emit)
        self.gate = MemoryGate(self.config, self.store, self.memory, self.emit)

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Thalia:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Idempotent."""
        self.store.close()

    def set_event_hook(self, hook: EventHook | None) -> None:
        self.emit.hook = hook

    @property
    def session(self) -> dict:
        """The open (or last) session: `{"session_id": ..., "open": ...}`."""
        return dict(self._session)

    def _load_session(self) -> dict:
        path = self.state_dir / SESSION_FILE
        return json.loads(path.read_text()) if path.exists() else {"session_id": None, "open": False}

    def _set_session(self, session_id: str | None, is_open: bool) -> None:
        state = {"session_id": session_id, "open": is_open}
        if self._session != state:
            (self.state_dir / SESSION_FILE).write_text(json.dumps(state, sort_keys=True) + "\n")
            self._session = state

    def _begin(self, session_id: str) -> None:
        """A new session starts: the frozen snapshot is re-read from MEMORY.md [CHOICE]."""
        s = self._session
        if s["session_id"] != session_id or not s["open"]:
            (self.state_dir / SNAPSHOT_FILE).write_text(self.memory.read(), encoding="utf-8")
            self._set_session(session_id, True)

    def memory_snapshot(self) -> MemorySnapshot:
        """ℳ for the next invocation: the open session's frozen copy, else MEMORY.md as is."""
        frozen = self.state_dir / SNAPSHOT_FILE
        if self.config.snapshot_refresh == "session" and self._session["open"] and frozen.exists():
            return make_snapshot(frozen.read_text(encoding="utf-8"))
        return self.memory.snapshot()

    # -- replay-append mode: a historical turn, no Reasoner --------------------------------------
    def append_turn(self, text: str, *, role: str, session_id: str, timestamp: datetime,
                    source_id: str | None = None, speaker: str | None = None) -> GateOutput:
        """Store a given turn through the Memory Gate; the Reasoner does not run [CHOICE]."""
        self._begin(session_id)
        turn_id = self.store.next_turn_id()
        is_user = role == "user"
        episode = Episode(turn_id=turn_id, source_id=source_id or f"thalia:{turn_id}",
                          session_id=session_id, timestamp=timestamp, role=role, speaker=speaker or "",
                          query=text if is_user else "", answer="" if is_user else text,
                          task_category=classify_task(text))
        out = self.gate.admit(episode)
        self.transcript_file.append(self.transcript.add_episode(out.episode, self.config.render_dates))
        return out

    def end_session(self, session_id: str, *, timestamp: datetime) -> GateOutput | None:
        """Session end reaches the gate as its criterion s = true, then the session closes."""
        out = self.gate.close_session(session_id, timestamp)
        self._set_session(session_id, False)
        return out

    # -- invocation ----------------------------------------------------------------------------
    def answer(self, query: str, *, timestamp: datetime, item: str = "query",
               budget: int | None = None) -> HarnessOutput:
        """Stages 0-2 only: read-only on every persisted file (the gate is previewed)."""
        out = self._pipeline(query, item, budget)
        draft = Episode(turn_id=self.store.next_turn_id(), source_id="probe", session_id="",
                        timestamp=timestamp, role="user", speaker="", query=query,
                        answer=out.reasoner.answer, task_category=out.category)
        self.gate.preview(draft)
        return out

    def ask(self, query: str, *, session_id: str, timestamp: datetime, source_id: str | None = None,
            session_end: bool = False) -> HarnessOutput:
        """Native `Session.ask`: the pipeline, then the gate appends the episode (and may
        consolidate); the query and answer join the transcript afterwards."""
        self._begin(session_id)
        out = self._pipeline(query, source_id or "ask", None)
        turn_id = self.store.next_turn_id()
        episode = Episode(turn_id=turn_id, source_id=source_id or f"thalia:{turn_id}",
                          session_id=session_id, timestamp=timestamp, role="user", speaker="",
                          query=query, answer=out.reasoner.answer,
                          citations=tuple(c.source_index for c in out.reasoner.citations),
                          task_category=out.category)
        gate = self.gate.admit(episode, session_end=session_end,
                               r_n=out.reasoner.requires_consolidation,
                               x_n=out.reasoner.explicit_request)
        self.transcript_file.append(self.transcript.add_episode(gate.episode, self.config.render_dates))
        if session_end:
            self._set_session(session_id, False)
        return replace(out, gate=gate)

    def _pipeline(self, query: str, item: str, budget: int | None) -> HarnessOutput:
        emit = self.emit
        category = classify_task(query)
        snapshot = self.memory_snapshot()
        if snapshot.bullets:
            emit("memory.snapshot", "eligible")
            emit("memory.snapshot", "executed", count=len(snapshot.bullets),
                 params={"digest": snapshot.digest, "refresh": self.config.snapshot_refresh})
            ids = tuple(b.bullet_id for b in snapshot.bullets)
            emit("memory.snapshot", "output", count=len(ids), ids=ids)
            emit("memory.snapshot", "selected", count=len(ids), ids=ids)
            # Consolidated bullets reach this invocation through the frozen snapshot.
            emit("gate.consolidate", "selected", count=len(ids), ids=ids,
                 source_turn_ids=self._bullet_sources(snapshot))
        else:
            emit("memory.snapshot", "ineligible", reason="MEMORY.md is empty")
        inspected = self.inspector.inspect(query, self.transcript)
        recalled = recall_windows(query, self.store, {w.turn_id for w in inspected.windows},
                                  self.config, emit)
        retrieved = self.retriever.retrieve(query, inspected.windows + recalled, category, budget, item)
        reasoned = self.reasoner.reason(query, retrieved, category, snapshot)
        if snapshot.bullets:
            self.emit("gate.consolidate", "in_prompt", count=len(snapshot.bullets),
                      ids=tuple(b.bullet_id for b in snapshot.bullets),
                      source_turn_ids=self._bullet_sources(snapshot))
        attribution = {r.window.window_id: attribute(r, retrieved, inspected.metadata)
                       for r in retrieved.full_ranking}
        self._selection_events(retrieved, attribution, reasoned.prompt_window_ids)
        funnel = {"raw_lines": len(self.transcript), "inspector_windows": len(inspected.windows),
                  "recalled": len(recalled), "ranked": len(retrieved.ranked),
                  "inline": len(retrieved.inline), "prompt": len(reasoned.prompt_window_ids),
                  "cited": len(reasoned.citations)}
        if reasoned.citations:
            emit("reasoner.citations", "selected", count=len(reasoned.citations),
                 ids=tuple(c.window_id for c in reasoned.citations),
                 source_turn_ids=tuple(dict.fromkeys(c.source_id for c in reasoned.citations)),
                 params={"funnel": funnel})
        return HarnessOutput(query=query, category=category, inspector=inspected, recalled=recalled,
                             retriever=retrieved, reasoner=reasoned, snapshot=snapshot, funnel=funnel,
                             attribution=attribution)

    def _bullet_sources(self, snapshot: MemorySnapshot) -> tuple[str, ...]:
        found = self.store.source_ids([b.source_turn for b in snapshot.bullets
                                       if b.source_turn is not None])
        return tuple(dict.fromkeys(found[b.source_turn] for b in snapshot.bullets
                                   if b.source_turn in found))

    def _selection_events(self, retrieved: RetrieverOutput, attribution: dict[str, tuple[str, ...]],
                          prompt_ids: Sequence[str]) -> None:
        """`selected` for recall (hits surviving the cap) and `in_prompt` for every mechanism
        with a window in the Reasoner's prompt."""
        by_id = {r.window.window_id: r.window for r in retrieved.full_ranking}
        hits = [r.window for r in retrieved.ranked if r.window.origin == "recall"]
        if hits:
            self.emit("recall.fts", "selected", count=len(hits), ids=tuple(w.window_id for w in hits),
                      source_turn_ids=tuple(dict.fromkeys(w.source_id for w in hits)))
        groups: dict[str, list[str]] = {}
        for wid in prompt_ids:
            for mech in attribution.get(wid, ()):
                groups.setdefault(mech, []).append(wid)
        for mech, ids in groups.items():
            self.emit(mech, "in_prompt", count=len(ids), ids=tuple(ids),
                      source_turn_ids=tuple(dict.fromkeys(by_id[i].source_id for i in ids)))
