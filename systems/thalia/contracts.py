"""Typed hand-offs between THALIA's stages (I, R, N, G in the paper's notation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

TaskCategory = Literal[
    "temporal", "preference", "code", "multi-session", "knowledge-update", "single-session"
]
Route = Literal["single-pass", "react"]
ConsolidationAction = Literal["none", "append_memory", "update_memory"]


class DeliveryMode(StrEnum):
    """How ranked evidence reaches the Reasoner [SEED]."""

    INLINE = "inline"
    FILE_BASED = "file_based"


@dataclass(frozen=True)
class Record:
    """One non-empty transcript line: the Inspector's line-addressed external state."""

    index: int
    """0-based position in the transcript (the source index)."""
    turn_id: int
    """THALIA episode id the line comes from."""
    source_id: str
    """The caller's id of that turn (cited back in fragments)."""
    session_id: str
    timestamp: datetime
    speaker: str
    text: str
    """The rendered line, e.g. `[2024-05-01] User: my wifi password is bluefish42`."""


@dataclass(frozen=True)
class EvidenceWindow:
    """A window handed from the Inspector (or recall) to the Retriever."""

    window_id: str
    """`line:<index>` for transcript windows, `recall:<turn>` for recalled episodes."""
    source_index: int
    """Transcript index (>= 0), or -1, -2, ... for recalled windows [SEED]."""
    text: str
    turn_id: int
    source_id: str
    session_id: str
    timestamp: datetime
    origin: Literal["inspector", "recall"]
    rho: float = 0.0
    """Inspector relevance |Q_I ∩ U(L_i)| / |Q_I| (0 for recalled windows)."""
    inspector_rank: int | None = None
    """0-based rank among the Inspector's windows (None for recalled windows)."""
    widened: bool = False
    """Emitted only because adaptive windows widened the cap (not under max_windows)."""


@dataclass(frozen=True)
class InspectorMetadata:
    """μ_I: what the Inspector did, for audit [SEED fields plus CHOICE extras]."""

    query_tokens: tuple[str, ...]
    patterns: tuple[str, ...]
    selected_indices: tuple[int, ...]
    confidence: float
    fallback: Literal["none", "order", "overlap"]
    n_records: int
    n_matches: int
    effective_max_windows: int
    partitioned: bool
    n_blocks: int = 0
    kept_blocks: tuple[int, ...] = ()
    records_discarded: int = 0
    discarded_matches: tuple[int, ...] = ()
    """Grep-matching records that sat in discarded blocks (unreachable downstream)."""


@dataclass(frozen=True)
class InspectorOutput:
    windows: tuple[EvidenceWindow, ...]
    metadata: InspectorMetadata


@dataclass(frozen=True)
class RankedEvidence:
    """One window after fusion, with where its rank came from."""

    window: EvidenceWindow
    score: float
    """Final score (fused, recency-adjusted when recency ran)."""
    fused_score: float
    """The unrounded weighted-RRF sum."""
    lexical_rank: int | None = None
    semantic_rank: int | None = None

    @property
    def lanes(self) -> tuple[str, ...]:
        out = []
        if self.lexical_rank is not None:
            out.append("retriever.bm25")
        if self.semantic_rank is not None:
            out.append("retriever.hashing")
        return tuple(out)


@dataclass(frozen=True)
class RetrieverOutput:
    """(W_R, δ_R): ranked evidence and the delivery decision."""

    query: str
    """The query the lanes ranked with (expanded when PRF ran)."""
    category: TaskCategory
    weights: tuple[float, float]
    ranked: tuple[RankedEvidence, ...]
    """W_R: the ranking after recency and MMR, capped at max_evidence."""
    inline: tuple[RankedEvidence, ...]
    """The rank-order prefix that fits the budget (all of W_R when INLINE)."""
    delivery_mode: DeliveryMode
    evidence_tokens: int
    budget_tokens: int
    full_ranking: tuple[RankedEvidence, ...] = ()
    """The whole fused ranking before the cap (what verify re-answers over)."""
    expansion_terms: tuple[str, ...] = ()
    executed: frozenset[str] = frozenset()
    """Retriever mechanisms that ran (for attribution)."""
    evidence_file: str | None = None


@dataclass(frozen=True)
class Citation:
    window_id: str
    source_index: int
    source_id: str
    text: str


@dataclass(frozen=True)
class ReasonerOutput:
    """(ŷ, C_cite, τ_N, b_N)."""

    answer: str
    category: TaskCategory
    route: Route
    citations: tuple[Citation, ...]
    trace: tuple[str, ...]
    """Auditable routing and evidence-use trace (no hidden reasoning)."""
    requires_consolidation: bool
    """r_N: knowledge-update task or explicit memory cue [SEED]."""
    explicit_request: bool
    """x_N: the query carries an explicit memory request."""
    messages: tuple[dict[str, str], ...] = ()
    prompt_window_ids: tuple[str, ...] = ()
    citation_fallback: bool = False
    support: float | None = None
    support_after: float | None = None
    completions: int = 0


@dataclass(frozen=True)
class Episode:
    """One raw row of the append-only episodic store."""

    turn_id: int
    source_id: str
    session_id: str
    timestamp: datetime
    role: str
    speaker: str
    query: str
    answer: str
    citations: tuple[int, ...] = ()
    task_category: str = "single-session"
    consolidation_action: ConsolidationAction = "none"


@dataclass(frozen=True)
class Bullet:
    """One MEMORY.md bullet: a derived fact that cites its source turn."""

    text: str
    source_turn: int | None
    line_no: int

    @property
    def bullet_id(self) -> str:
        return f"memory:{self.line_no}"


@dataclass(frozen=True)
class MemorySnapshot:
    """ℳ: the frozen MEMORY.md text one invocation reads (never written during it) [SEED]."""

    text: str
    bullets: tuple[Bullet, ...]
    digest: str


@dataclass(frozen=True)
class GateOutput:
    """(e, ΔM): what the Memory Gate appended and consolidated."""

    episode: Episode | None
    criteria: dict[str, bool]
    requires_consolidation: bool
    action: ConsolidationAction
    delta: str = ""
    replaced: str | None = None


@dataclass(frozen=True)
class HarnessOutput:
    """Everything one invocation produced, stage by stage."""

    query: str
    category: TaskCategory
    inspector: InspectorOutput
    recalled: tuple[EvidenceWindow, ...]
    retriever: RetrieverOutput
    reasoner: ReasonerOutput
    snapshot: MemorySnapshot
    gate: GateOutput | None = None
    funnel: dict[str, Any] = field(default_factory=dict)
    """Evidence funnel: raw lines -> Inspector windows (+ recalled) -> ranked -> inline -> prompt
    (after ReAct integrate) -> cited."""
    attribution: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per ranked window id, the mechanisms that contributed it."""
