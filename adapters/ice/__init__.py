"""Adapter for ICE v2 (`systems.ice`): translates harness calls, identities and events.

Identity: each `ReplayTurn` reaches ICE with its conversation and session (losing them was a
real adapter bug in the paper: a flattened-session adapter collapsed 111 fused candidates to
three). `conversation_unit` picks what ICE calls a conversation: the trajectory (the paper's
within-conversation replay) or each session (its LongMemEval adapter). `probe_conversation`
asks probes inside the current conversation or in a fresh, empty one.

Probes: `query` runs pre-flight only. ICE's post-flight would store the question as a new
turn; a probe is not a turn of the trajectory, so that happens only with
`store_probe_turns=true`. Pre-flight's access reinforcement is a persistent side effect by
design; the harness's isolated policy undoes it with `snapshot`/`restore`.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from lsrep.adapters.formatting import embedding_text
from lsrep.systems.ice import Fixes, IceConfig, IceSystem, SeedDefects, StageEvent, TurnRecord
from lsrep.systems.ice import __version__ as ICE_VERSION
from pydantic import BaseModel, ConfigDict, Field

from lsrep.contract import (
    AdapterSetup,
    DirectorySnapshot,
    Fragment,
    MechanismSpec,
    MemoryAdapter,
    QueryResult,
    ReplayTurn,
    digest_directory,
)

from .evidence import carried_turns

PREFIX = "ice."
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CURSOR_FILE = "adapter-cursor.json"


_FULL = ("eligible", "executed", "output", "selected", "in_prompt")
_STAGES: dict[str, tuple[str, ...]] = {
    **{f"leg.{leg}": _FULL for leg in
       ("episodic_vector", "episodic_lexical", "graph", "procedural", "document", "summary")},
    "slots": _FULL, "recent_window": _FULL, "mera": ("eligible", "executed", "output", "in_prompt"),
}
"""Stages each mechanism is expected to reach when it has work (the rest: eligible, executed)."""

# ICE's reasons for not running, in the audit's vocabulary (docs/fidelity.md).
_REASONS: dict[str, str] = {
    "no pending turns": "idle", "fewer than 20 unsummarised turns": "idle",
    "no slots": "disabled",  # the `slots` option is empty: nothing is configured to place
}


def _m(name: str, description: str, can_disable: bool = True) -> MechanismSpec:
    return MechanismSpec(name=PREFIX + name, description=description, can_disable=can_disable,
                         stages=_STAGES.get(name))


MECHANISMS: tuple[MechanismSpec, ...] = (
    _m("classify", "Rule-based topic / intent / context-reliance classifier.", False),
    _m("route", "Specialist-model route label (logged; the harness answers).", False),
    _m("slots", "Persistent user-controlled memory slots, always placed first."),
    _m("recent_window", "Sliding window of the current conversation's last turns."),
    _m("cluster_scope", "Topic-cluster restriction of the episodic legs (off by default).", False),
    _m("leg.episodic_vector", "Cosine over turn embeddings (depth 30)."),
    _m("leg.episodic_lexical", "SQLite FTS5 rank over turn text (depth 30)."),
    _m("leg.graph", "Codex entity resolution and current-edge traversal to depth 3."),
    _m("leg.procedural", "Active procedural patterns matching the query's triggers."),
    _m("leg.document", "Vector + FTS5 over user-supplied document chunks."),
    _m("leg.summary", "Vector over batch summaries."),
    _m("mera", "Category enumeration when the prompt names no entity."),
    _m("rrf", "Intent-weighted reciprocal-rank fusion (or concat, by option).", False),
    _m("bonus.confidence", "x1.5 for graph fragments with the confidence flag."),
    _m("bonus.strength", "x(0.5 + 0.5 strength) for decayed turns and patterns."),
    _m("bonus.current_conv", "x1.2 for items from the current conversation."),
    _m("diversify.cross_conv_cap", "At most 3 fragments per other conversation."),
    _m("diversify.type_cap", "At most 60% of packed fragments from one source type."),
    _m("budget.phase1", "Budget phase 1: best fragment of each source type."),
    _m("budget.phase2", "Budget phase 2: greedy fill by score under B_mem.", False),
    _m("assemble", "Prompt assembly: slots, fragments, recent turns, live message.", False),
    _m("reinforce", "Access restores decayed strength of turns and patterns in the prompt."),
    _m("postflight.store", "Stores a turn in the episodic store (embedding + FTS).", False),
    _m("extract.codex", "Triple extraction into the temporal knowledge graph."),
    _m("extract.procedural", "Procedural-pattern extraction and deactivation."),
    _m("worker.extract", "Scheduled (re-)extraction of pending turns."),
    _m("worker.decay", "Scheduled strength decay (half-life 14 simulated days)."),
    _m("worker.summaries", "Scheduled batch summaries (every 20 turns of a conversation)."),
)
_DECLARED = {m.name: m for m in MECHANISMS}

MAINTENANCE: dict[str, tuple[str, ...]] = {
    "decay": ("decay",),
    "extract": ("extract",),
    "reextract": ("reextract",),
    "summarize": ("summaries",),
    "consolidate": ("summaries",),
    "nightly": ("decay", "extract", "summaries"),
}


class Options(BaseModel):
    """ICE adapter options. Everything not listed here goes through `config`."""

    model_config = ConfigDict(extra="forbid")

    seed_defects: SeedDefects = Field(default_factory=SeedDefects)
    """Simulate the audit's defective legs (`procedural_leg`, `document_leg`) and
    non-idempotent extraction (`extraction_duplicates`)."""
    fix: Fixes = Field(default_factory=Fixes)
    """Repair reproduced seed code paths (`traversal_strength`, `empty_conversation_cap`)."""
    fusion: Literal["rrf", "concat"] = "rrf"
    """`rrf` (the paper's) or `concat` (unfused vector-then-lexical, the ablation step)."""
    empty_conversation_budget: int = 2000
    """Memory budget (tokens) for an empty current conversation [seed]."""
    budget_max: int = 16000
    """Ceiling of ICE's dynamic memory budget [chosen]."""
    static_budget: int | None = None
    """A fixed memory budget instead of the dynamic one (v1 pilot: 5000)."""
    context_budget: int | None = None
    """Ceiling on all returned context; the campaign's `retrieval_budget` wins if smaller."""
    conversation_unit: Literal["trajectory", "session"] = "trajectory"
    """What ICE treats as one conversation: the whole trajectory, or each session."""
    probe_conversation: Literal["current", "fresh"] = "current"
    """Ask probes in the current (last ingested) conversation or in a fresh, empty one."""
    store_probe_turns: bool = False
    """Run ICE's post-flight on probes too (stores the question as a user turn)."""
    preflight_on_ingest: bool = False
    """Run pre-flight (and its reinforcement) before storing each user turn, as live use does."""
    extraction_mode: Literal["postflight", "maintenance"] = "postflight"
    """Extract at ingest, or only at the `extract` maintenance step."""
    slots: dict[str, str] = Field(default_factory=dict)
    """Memory slots set at every reset."""
    documents: tuple[str, ...] = ()
    """Text files loaded into the document store at every reset (doc id = file stem)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Overrides of any other `IceConfig` field (validated; unknown keys are errors)."""
    summary_citations: Literal["content", "batch"] = "content"
    """Which turns a summary fragment cites: those whose content the summary text carries
    (`adapters/ice/evidence.py`), or every turn of its batch (ICE's stored list; inflates
    evidence recall)."""
    report_in_prompt: bool = False
    """Relay ICE's own `in_prompt` events. The harness derives `in_prompt` from the returned
    fragments and stores relayed ones apart, as `reported_in_prompt` (docs/fidelity.md)."""


def build_config(options: Options, setup: AdapterSetup) -> IceConfig:
    """The system configuration for this condition."""
    disabled = set()
    for name in setup.disabled:
        if not name.startswith(PREFIX):
            continue
        spec = _DECLARED.get(name)
        if spec is None or not spec.can_disable:
            raise ValueError(f"ICE cannot switch off {name!r}")
        disabled.add(name.removeprefix(PREFIX))
    ceilings = [b for b in (options.context_budget, setup.retrieval_budget) if b is not None]
    values = {
        **options.config,
        "seed_defects": options.seed_defects, "fix": options.fix, "fusion": options.fusion,
        "empty_conversation_budget": options.empty_conversation_budget,
        "budget_max": options.budget_max, "static_budget": options.static_budget,
        "context_budget": min(ceilings) if ceilings else None,
        "extraction_mode": options.extraction_mode,
        "disabled": frozenset(disabled) | frozenset(options.config.get("disabled", ())),
    }
    return IceConfig.model_validate(values)


@dataclass
class IceSnapshot:
    """A copy of the state directory (stores and the adapter's cursor)."""

    directory: DirectorySnapshot


# Fragments ICE writes itself rather than quotes: graph facts are extracted, summaries summarised.
# Declared as such, so content provenance judges them as derived text (docs/integrity.md).
DERIVED_KIND = {"graph": "fact", "summary": "summary"}


class IceAdapter(MemoryAdapter):
    """ICE v2 behind the harness contract. Returns context; the harness answers."""

    name = "ice"
    version = ICE_VERSION
    Options = Options
    mechanisms = MECHANISMS
    maintenance_operations = frozenset(MAINTENANCE)
    supports_snapshot = True
    deterministic = True
    answers = False
    honours_budget = True
    embeds = "campaign"

    def __init__(self, setup: AdapterSetup) -> None:
        super().__init__(setup)
        opts = setup.options
        self.options = opts if isinstance(opts, Options) else Options.model_validate(
            opts.model_dump())
        self.config = build_config(self.options, setup)
        self._tmp: tempfile.TemporaryDirectory | None = None
        if setup.state_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="lsrep-ice-")
        self.state_dir = Path(setup.state_dir or self._tmp.name) / "ice"
        self.system = IceSystem(self.state_dir, config=self.config, embedder=setup.embedder,
                                lm=setup.llm, on_event=self._relay)
        self._cursor: dict[str, Any] = {}
        self._carried: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        """(summary text, listed turns) -> the turns it carries, for the turn store `_carried_for`."""
        self._carried_for: object = None

    # -- events --------------------------------------------------------------------------
    def _relay(self, event: StageEvent) -> None:
        if event.stage == "in_prompt" and not self.options.report_in_prompt:
            return
        reason = event.reason
        if reason in _REASONS and event.stage in ("ineligible", "skipped"):
            reason = f"{_REASONS[reason]}: {reason}"
        self.emit(PREFIX + event.mechanism, event.stage, reason=reason, count=event.count,
                  ids=event.ids, source_turn_ids=event.source_turn_ids, params=event.params)

    # -- identity ------------------------------------------------------------------------
    def _ice_conversation(self, turn: ReplayTurn) -> str:
        if self.options.conversation_unit == "session":
            return f"{turn.conversation_id}/{turn.session_id}"
        return turn.conversation_id

    def _save_cursor(self) -> None:
        (self.state_dir / CURSOR_FILE).write_text(json.dumps(self._cursor, sort_keys=True))

    def _load_cursor(self) -> None:
        path = self.state_dir / CURSOR_FILE
        self._cursor = json.loads(path.read_text()) if path.exists() else {}

    # -- contract ------------------------------------------------------------------------
    def reset(self, *, conversation_id: str, now: datetime | None) -> None:
        # Slots and documents need a time; a trajectory without one gets the epoch, never
        # the wall clock.
        now = now or EPOCH
        self.system.wipe()
        self._cursor = {"trajectory": conversation_id, "conversation": conversation_id,
                        "session": None, "probes": 0}
        for key, value in sorted(self.options.slots.items()):
            self.system.set_slot(key, value, now=now)
        for path in self.options.documents:
            doc = Path(path)
            self.system.add_document(doc.stem, doc.read_text(encoding="utf-8"), now=now)
        self._save_cursor()

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        conv = self._ice_conversation(turn)
        record = TurnRecord(turn_id=turn.turn_id, conversation_id=conv,
                            session_id=turn.session_id, index=turn.index,
                            timestamp=turn.timestamp, role=turn.role, content=turn.content,
                            speaker=turn.speaker,
                            embed_text=embedding_text(turn, self.setup.embedding_text))
        self.system.ingest(record, now=now, preflight=self.options.preflight_on_ingest)
        if (conv, turn.session_id) != (self._cursor.get("conversation"),
                                       self._cursor.get("session")):
            self._cursor.update(conversation=conv, session=turn.session_id)
            self._save_cursor()

    def query(self, question: str, *, now: datetime) -> QueryResult:
        conv = self._cursor.get("conversation") or self._cursor.get("trajectory", "")
        if self.options.probe_conversation == "fresh":
            conv = f"{self._cursor.get('trajectory', '')}#probe"
        store_as = None
        if self.options.store_probe_turns:
            n = self._cursor["probes"] = self._cursor.get("probes", 0) + 1
            self._save_cursor()
            store_as = TurnRecord(turn_id=f"probe-{n:05d}", conversation_id=conv,
                                  session_id=self._cursor.get("session") or "probe",
                                  index=self.system.db.episodic.count(conv), timestamp=now,
                                  role="user", content=question)
        result = self.system.query(question, conversation_id=conv, now=now, store_as=store_as)
        fragments = tuple(
            Fragment(text=f.text, source_turn_ids=self._cited(f), tokens=f.tokens,
                     mechanisms=tuple(PREFIX + m for m in f.mechanisms), score=f.score,
                     kind=DERIVED_KIND.get(getattr(f, "source_type", None), f.kind))
            for f in result.fragments)
        return QueryResult(fragments=fragments, context_text=result.context_text,
                           truncated_tokens=result.truncated_tokens)

    def _cited(self, fragment: Any) -> tuple[str, ...]:
        """A summary cites only the turns it carries (by content); other fragments as ICE says."""
        if fragment.source_type != "summary" or self.options.summary_citations == "batch":
            return fragment.source_turn_ids
        # A stored turn's content never changes while its store is open (turns are append-only;
        # wipe, restore and reopen open a new store): once every listed turn was found, the
        # answer for this text and list is kept until the store object changes.
        store = self.system.db.episodic
        if store is not self._carried_for:
            self._carried, self._carried_for = {}, store
        key = (fragment.text, tuple(fragment.source_turn_ids))
        cited = self._carried.get(key)
        if cited is None:
            turns = store.get_many(list(key[1]))
            cited = carried_turns(fragment.text, key[1], {tid: t.content for tid, t in turns.items()})
            if len(turns) == len(set(key[1])):
                self._carried[key] = cited
        return cited

    def end_session(self, session_id: str, *, now: datetime) -> None:
        """ICE has no session-end step: post-flight already ran for every turn."""

    def maintain(self, operation: str, *, now: datetime) -> None:
        if operation not in MAINTENANCE:
            raise ValueError(f"unknown ICE maintenance operation {operation!r}; "
                             f"supported: {sorted(MAINTENANCE)}")
        for step in MAINTENANCE[operation]:
            match step:
                case "decay":
                    self.system.run_decay(now=now)
                case "extract":
                    self.system.run_extraction(now=now)
                case "reextract":
                    self.system.run_extraction(now=now, all_turns=True)
                case "summaries":
                    self.system.run_summaries(now=now)

    def snapshot(self) -> IceSnapshot:
        self.system.close()  # every write is committed; closing makes the copy plainly safe
        try:
            return IceSnapshot(DirectorySnapshot.take(self.state_dir))
        finally:
            self.system.reopen()

    def restore(self, snapshot: IceSnapshot) -> None:
        self.system.close()
        snapshot.directory.restore_into(self.state_dir)
        self.system.reopen()
        self._load_cursor()

    def state_digest(self) -> str:
        return digest_directory(self.state_dir)

    def close(self) -> None:
        self.system.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
