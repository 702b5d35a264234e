"""Adapter for THALIA (`systems.thalia`): binds the re-implementation to the harness contract.

- **ingest**: a historical turn goes through THALIA's replay-append mode: the Reasoner does
  not run (the given text *is* the turn), the Memory Gate appends the raw episode and may
  consolidate (`thalia.gate.*` events), and the turn's lines join the Inspector transcript.
  The harness's retry of an already stored turn (same id, same text) is a quiet no-op; THALIA's
  append-only store still rejects a different turn under a stored id.
- **end_session**: reaches the gate as its session-end criterion (s = true).
- **query**: Inspector -> recall -> Retriever -> Reasoner, with the gate only previewed
  (`thalia.gate.append` is `skipped`, reason "read-only probe"). THALIA's native
  `Session.ask` would append the probe as an episode; a probe is not a turn of the
  trajectory, so that happens only with `probe_appends=true` (seed-systems 2.6).
  Fragments are the frozen MEMORY.md bullets, then the inline ranked evidence, each citing
  the turns it came from and the mechanisms that contributed it. `answer` is THALIA's own
  Reasoner output (`setup.llm`, else the offline extractive responder).
- **state**: everything lives in files under `setup.state_dir` (SQLite store, transcript,
  MEMORY.md, the frozen snapshot, the open session), so snapshot/restore is a directory copy
  and `state_digest` hashes the directory bytes.
- **maintenance**: none. THALIA has no background workers; consolidation fires only inside
  the gate, and the session-end criterion arrives through `end_session`.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from lsrep.systems.thalia import HarnessConfig, HarnessOutput, StageEvent, Thalia, resolve_config
from lsrep.systems.thalia import __version__ as THALIA_VERSION
from lsrep.systems.thalia.text import token_count
from pydantic import BaseModel, ConfigDict, Field, model_validator

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

PREFIX = "thalia."

# THALIA's own event names -> the mechanism names this adapter declares.
EVENT_NAMES: dict[str, str] = {
    "inspector.peek": "thalia.inspector.peek",
    "inspector.grep": "thalia.inspector.grep",
    "inspector.fallback_order": "thalia.inspector.fallback_order",
    "inspector.fallback_overlap": "thalia.inspector.fallback_overlap",
    "inspector.partition": "thalia.inspector.partition",
    "inspector.adaptive_windows": "thalia.inspector.adaptive_windows",
    "recall.fts": "thalia.recall.fts",
    "retriever.prf": "thalia.retriever.prf",
    "retriever.bm25": "thalia.retriever.lexical",
    "retriever.hashing": "thalia.retriever.semantic",
    "retriever.rrf": "thalia.retriever.fusion",
    "retriever.recency": "thalia.retriever.recency",
    "retriever.mmr": "thalia.retriever.mmr",
    "retriever.budget": "thalia.retriever.budget",
    "reasoner.route": "thalia.reasoner.route",
    "reasoner.lm": "thalia.reasoner.lm",
    "reasoner.citations": "thalia.reasoner.citations",
    "reasoner.verify": "thalia.reasoner.verify",
    "memory.snapshot": "thalia.memory.snapshot",
    "gate.append": "thalia.gate.append",
    "gate.criteria": "thalia.gate.criteria",
    "gate.consolidate": "thalia.gate.consolidate",
}
SYSTEM_NAMES: dict[str, str] = {v: k for k, v in EVENT_NAMES.items()}


_FULL = ("eligible", "executed", "output", "selected", "in_prompt")
_PRODUCES = ("eligible", "executed", "output", "in_prompt")
_FEEDS = ("eligible", "executed", "in_prompt")
_STAGES: dict[str, tuple[str, ...]] = {
    "thalia.inspector.grep": _FULL, "thalia.recall.fts": _FULL, "thalia.retriever.lexical": _FULL,
    "thalia.retriever.semantic": _FULL, "thalia.memory.snapshot": _FULL,
    "thalia.inspector.fallback_order": _PRODUCES, "thalia.inspector.fallback_overlap": _PRODUCES,
    "thalia.gate.consolidate": _PRODUCES, "thalia.inspector.adaptive_windows": _FEEDS,
    "thalia.retriever.prf": _FEEDS,
}
"""Stages each mechanism is expected to reach when it has work (the rest: eligible, executed)."""

CREDITED: frozenset[str] = frozenset(m for m, st in _STAGES.items() if "in_prompt" in st)
"""Mechanisms that *produce* a prompt fragment (a window, a lane hit, a bullet). Fusion, recency,
MMR, the partition filter and the budget only reorder or cut what others produced, so a fragment
is not attributed to them (its `in_prompt` credit goes to its producers)."""

# THALIA's reasons for not running, in the audit's vocabulary (docs/fidelity.md).
_REASONS: dict[str, str] = {
    "adaptive_windows is off": "disabled", "mmr is off": "disabled", "query_expansion is off": "disabled",
    "recall is off": "disabled", "recency_weight is 0": "disabled", "verify is off": "disabled",
    "records within threshold": "idle",
}


def _m(name: str, description: str, can_disable: bool = True) -> MechanismSpec:
    return MechanismSpec(name=name, description=description, can_disable=can_disable,
                         stages=_STAGES.get(name))


MECHANISMS: tuple[MechanismSpec, ...] = (
    _m("thalia.inspector.peek", "Inspector structure summary of the transcript.", False),
    _m("thalia.inspector.grep", "Query-anchored grep and ρ-ranking into <= max_windows windows.", False),
    _m("thalia.inspector.fallback_order", "No content tokens in the query: transcript order.", False),
    _m("thalia.inspector.fallback_overlap", "Grep found nothing: rank every record by overlap.", False),
    _m("thalia.inspector.partition", "Coarse block filter above partition_threshold records."),
    _m("thalia.inspector.adaptive_windows", "Window cap widened to ⌈lines / ratio⌉ (opt-in)."),
    _m("thalia.recall.fts", "Read-only FTS5 recall of stored episodes into the corpus."),
    _m("thalia.retriever.prf", "Pseudo-relevance-feedback query expansion (opt-in)."),
    _m("thalia.retriever.lexical", "Okapi BM25 lane (k1 1.5, b 0.75)."),
    _m("thalia.retriever.semantic", "Hashing-trigram (or campaign-embedder) cosine lane."),
    _m("thalia.retriever.fusion", "Task-conditioned weighted RRF (k 60, 0.65/0.35)."),
    _m("thalia.retriever.recency", "Position-based recency bonus (weight > 0)."),
    _m("thalia.retriever.mmr", "MMR diversity re-ranking (opt-in)."),
    _m("thalia.retriever.budget", "max_evidence cap and INLINE / FILE_BASED delivery.", False),
    _m("thalia.reasoner.route", "Task classification and single-pass / ReAct routing.", False),
    _m("thalia.reasoner.lm", "The one completion (model or extractive responder).", False),
    _m("thalia.reasoner.citations", "Citations from windows overlapping the answer.", False),
    _m("thalia.reasoner.verify", "Grounding verification with one re-answer (opt-in)."),
    _m("thalia.memory.snapshot", "Frozen MEMORY.md snapshot in the Reasoner prompt.", False),
    _m("thalia.gate.append", "Append-only raw episode write (always first).", False),
    _m("thalia.gate.criteria", "Gate criteria: session end, novel class, explicit request.", False),
    _m("thalia.gate.consolidate", "Dual-key gated MEMORY.md consolidation."),
)
_DECLARED = {m.name: m for m in MECHANISMS}


class Options(BaseModel):
    """THALIA adapter options; unset fields keep THALIA's own defaults (or `config_file`'s)."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=8, ge=1)
    """Per-lane retrieval depth [seed 8]."""
    max_evidence: int = Field(default=5, ge=1)
    """Cap on ranked evidence [seed 5]."""
    max_windows: int = Field(default=15, ge=1)
    """Inspector window cap [seed 15]."""
    adaptive_windows: bool = False
    """Widen the window cap to ⌈lines / adaptive_window_ratio⌉ [seed: opt-in]."""
    adaptive_window_ratio: int = Field(default=5, ge=1)
    """Transcript lines per window under adaptive_windows [seed 5]."""
    partition_threshold: int = Field(default=200, ge=0)
    """Records above which the block filter runs [chosen 200]."""
    partition_size: int = Field(default=5, ge=1)
    """Records per block [chosen 5]."""
    rrf_k: int = Field(default=60, ge=0)
    """RRF constant [seed 60]."""
    lexical_weight: float | None = Field(default=None, ge=0)
    """BM25 lane weight [seed 0.65]; set with semantic_weight or not at all."""
    semantic_weight: float | None = Field(default=None, ge=0)
    """Hashing lane weight [seed 0.35]; set with lexical_weight or not at all."""
    task_conditioned_weights: bool = True
    """Lane weights follow the task category [seed]."""
    context_budget_tokens: int | None = Field(default=None, ge=1)
    """Evidence budget B in |T| tokens; default: the campaign's retrieval_budget, else 4096."""
    prf: bool = False
    """PRF query expansion [seed: off]."""
    prf_feedback_docs: int = Field(default=3, ge=1)
    """PRF feedback windows R [chosen 3]."""
    prf_top_terms: int = Field(default=5, ge=1)
    """PRF appended terms K [chosen 5]."""
    recency_weight: float = Field(default=0.0, ge=0, le=1)
    """Recency bonus weight ρ [seed 0 = no-op]."""
    mmr: bool = False
    """MMR re-ranking [seed: off]."""
    mmr_lambda: float = Field(default=0.7, ge=0, le=1)
    """MMR λ [chosen 0.7]."""
    verify: bool = False
    """Grounding verification [seed: off]."""
    grounding_threshold: float = Field(default=0.5, ge=0, le=1)
    """Support below which verify re-answers [chosen 0.5]."""
    recall: bool = False
    """FTS recall from the episodic store [chosen: opt-in]."""
    recall_limit: int = Field(default=5, ge=0)
    """Recalled episodes per query [chosen 5]."""
    snapshot_refresh: Literal["session", "turn"] = "session"
    """When the frozen MEMORY.md snapshot is re-read [chosen: session start]."""
    window_radius: int = Field(default=0, ge=0)
    """Context lines around each Inspector window [chosen 0]."""
    render_dates: bool = True
    """Render lines as `[YYYY-MM-DD] Speaker: text` [chosen]."""
    probe_appends: bool = False
    """Native `Session.ask` on probes: the question and answer become a stored episode."""
    evidence_dir: str | None = None
    """Folder for FILE_BASED overflow lists (keep it outside the state directory)."""
    config_file: str | None = None
    """A THALIA TOML/JSON config file, below these options in precedence."""

    @model_validator(mode="after")
    def _lane_pair(self) -> Options:
        if (self.lexical_weight is None) != (self.semantic_weight is None):
            raise ValueError("set lexical_weight and semantic_weight both or neither")
        return self


_RENAMED = {"prf": "query_expansion"}
_ADAPTER_ONLY = {"probe_appends", "config_file", "context_budget_tokens"}


def build_config(options: Options, setup: AdapterSetup) -> HarnessConfig:
    """THALIA's config for this condition: file < explicitly set options < ablations.

    The environment is deliberately not read: a run is rebuilt from its recorded options.
    """
    ablate = set()
    for name in setup.disabled:
        if not name.startswith(PREFIX):
            continue
        spec = _DECLARED.get(name)
        if spec is None or not spec.can_disable:
            raise ValueError(f"THALIA cannot switch off {name!r}")
        ablate.add(SYSTEM_NAMES[name])
    explicit: dict[str, Any] = {
        _RENAMED.get(k, k): getattr(options, k)
        for k in options.model_fields_set if k not in _ADAPTER_ONLY
    }
    budget = options.context_budget_tokens or setup.retrieval_budget
    if budget is not None:
        explicit["context_budget_tokens"] = budget
    if ablate:
        explicit["ablate"] = frozenset(ablate)
    return resolve_config(file=options.config_file, env=None, explicit=explicit)


@dataclass(frozen=True)
class ThaliaSnapshot:
    """A copy of the state directory and its digest at the time of the copy."""

    directory: DirectorySnapshot
    digest: str


class ThaliaAdapter(MemoryAdapter):
    """THALIA re-implementation under the harness contract."""

    version = f"1+thalia-{THALIA_VERSION}"
    Options = Options
    mechanisms = MECHANISMS
    maintenance_operations = frozenset()
    supports_snapshot = True
    deterministic = True
    answers = True
    # The semantic lane embeds each Inspector window as THALIA renders it, prefix included [seed].
    embeds = "the window line as rendered: `[date] Speaker: content`"

    def __init__(self, setup: AdapterSetup) -> None:
        super().__init__(setup)
        self.config = build_config(setup.options, setup)  # type: ignore[arg-type]
        self._own_dir: Path | None = None
        self.thalia: Thalia | None = None

    # -- state directory -----------------------------------------------------------------------
    @property
    def state_dir(self) -> Path:
        if self.setup.state_dir is not None:
            return Path(self.setup.state_dir)
        if self._own_dir is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="thalia-state-"))
        return self._own_dir

    def _open(self) -> Thalia:
        return Thalia(self.state_dir, self.config, embedder=self.setup.embedder, lm=self.setup.llm,
                      on_event=self._relay)

    def _system(self) -> Thalia:
        if self.thalia is None:
            raise RuntimeError("reset() must be called first")
        return self.thalia

    def _relay(self, event: StageEvent) -> None:
        reason = event.reason
        if reason in _REASONS and event.stage in ("ineligible", "skipped"):
            reason = f"{_REASONS[reason]}: {reason}"
        self.emit(EVENT_NAMES[event.mechanism], event.stage, reason=reason,  # type: ignore[arg-type]
                  count=event.count, ids=event.ids, source_turn_ids=event.source_turn_ids,
                  params=event.params)

    # -- contract ------------------------------------------------------------------------------
    def reset(self, *, conversation_id: str, now: datetime) -> None:
        if self.thalia is not None:
            self.thalia.close()
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.thalia = self._open()

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        system = self._system()
        stored = system.store.by_source(turn.turn_id)
        if stored is not None and (stored.query or stored.answer) == turn.content:
            # The harness retries a turn after a failed call: a quiet no-op. THALIA's store
            # itself stays strict; a different turn under a stored id still raises.
            self.emit("thalia.gate.append", "skipped", reason="turn already stored (retry)",
                      source_turn_ids=(turn.turn_id,))
            return
        system.append_turn(turn.content, role=turn.role, session_id=turn.session_id,
                           timestamp=turn.timestamp, source_id=turn.turn_id, speaker=turn.speaker)

    def end_session(self, session_id: str, *, now: datetime) -> None:
        self._system().end_session(session_id, timestamp=now)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        system = self._system()
        opts: Options = self.setup.options  # type: ignore[assignment]
        if opts.probe_appends:
            session = system.session["session_id"] or "probe"
            out = system.ask(question, session_id=session, timestamp=now,
                             source_id=f"probe:{system.store.next_turn_id()}")
        else:
            out = system.answer(question, timestamp=now, item=now.isoformat())
        return self._result(out)

    def _result(self, out: HarnessOutput) -> QueryResult:
        system = self._system()
        fragments: list[Fragment] = []
        sources = system.store.source_ids(
            [b.source_turn for b in out.snapshot.bullets if b.source_turn is not None])
        for bullet in out.snapshot.bullets:
            source = sources.get(bullet.source_turn) if bullet.source_turn is not None else None
            fragments.append(Fragment(
                text=bullet.text, source_turn_ids=(source,) if source else (),
                tokens=token_count(bullet.text), kind="memory",
                mechanisms=("thalia.memory.snapshot", "thalia.gate.consolidate")))
        produced = lambda names: tuple(dict.fromkeys(  # noqa: E731
            EVENT_NAMES[m] for m in names if EVENT_NAMES[m] in CREDITED))
        for r in out.retriever.inline:
            w = r.window
            fragments.append(Fragment(
                text=w.text, source_turn_ids=(w.source_id,), tokens=token_count(w.text),
                mechanisms=produced(out.attribution.get(w.window_id, ())),
                score=r.score, kind="recalled" if w.origin == "recall" else "evidence"))
        withheld = out.retriever.ranked[len(out.retriever.inline):]
        user = out.reasoner.messages[-1]["content"] if out.reasoner.messages else ""
        return QueryResult(
            fragments=tuple(fragments), answer=out.reasoner.answer,
            context_text=user.rsplit("\n\nQuestion: ", 1)[0] or None,
            truncated_tokens=sum(token_count(r.window.text) for r in withheld))

    # -- snapshots -----------------------------------------------------------------------------
    def snapshot(self) -> ThaliaSnapshot:
        return ThaliaSnapshot(DirectorySnapshot.take(self.state_dir), self.state_digest())

    def restore(self, snapshot: ThaliaSnapshot) -> None:
        # A read-only probe leaves the bytes as they were: then there is nothing to undo, and
        # the in-memory index (derived from those bytes) is already right.
        if self.thalia is not None and self.state_digest() == snapshot.digest:
            return
        if self.thalia is not None:
            self.thalia.close()
        snapshot.directory.restore_into(self.state_dir)
        self.thalia = self._open()

    def state_digest(self) -> str:
        return digest_directory(self.state_dir)

    def close(self) -> None:
        if self.thalia is not None:
            self.thalia.close()
            self.thalia = None
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None
