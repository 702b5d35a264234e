"""ICE v2 configuration: every tunable value in one model, each labelled with its provenance.

Provenance labels (seed-systems.md, preamble):

- ``seed``   -- the LSREP paper states the value; pinned by a test.
- ``infer``  -- inferred from the paper's numbers or wording.
- ``chosen`` -- the paper says nothing; the value is ours, never the original's.
- ``switch`` -- a defect, fix or ablation switch, not a parameter of the original.

:func:`IceConfig.provenance` lists the label of every field and
:meth:`IceConfig.fingerprint` hashes the resolved values, so a run can record exactly
which configuration produced it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

LEGS: tuple[str, ...] = (
    "episodic_vector", "episodic_lexical", "graph", "procedural", "document", "summary"
)
"""The six designed retrieval legs, in the paper's order."""

SOURCE_TYPES: tuple[str, ...] = ("episodic", "graph", "procedural", "summary", "document")
"""Fragment source types, in budget phase-1 priority order (chosen)."""

INTENTS: tuple[str, ...] = (
    "recall_fact", "temporal", "preference", "procedural", "task", "chit_chat"
)

def _weights(*row: float) -> dict[str, float]:
    return dict(zip(LEGS, row, strict=True))


DEFAULT_INTENT_WEIGHTS: dict[str, dict[str, float]] = {
    "recall_fact": _weights(1.0, 0.8, 0.7, 0.2, 0.5, 0.4),
    "temporal": _weights(0.9, 1.0, 0.8, 0.1, 0.3, 0.6),
    "preference": _weights(1.0, 0.6, 1.0, 0.3, 0.3, 0.4),
    "procedural": _weights(0.7, 0.6, 0.4, 1.0, 0.5, 0.3),
    "task": _weights(0.8, 0.8, 0.5, 0.5, 1.0, 0.3),
    # chit_chat retrieves only when the reference rule forces long-term memory; it then
    # uses the recall_fact row (seed-systems 5.5).
    "chit_chat": _weights(1.0, 0.8, 0.7, 0.2, 0.5, 0.4),
}


def _seed(default: Any, doc: str) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"provenance": "seed"})


def _infer(default: Any, doc: str) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"provenance": "infer"})


def _chosen(default: Any = None, doc: str = "", **kw: Any) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"provenance": "chosen"}, **kw)


def _switch(default: Any, doc: str) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"provenance": "switch"})


class SeedDefects(BaseModel):
    """Switches that simulate outcomes the paper reports without describing the code path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    procedural_leg: bool = _switch(
        False, "Procedural leg reads the wrong field: executes, returns nothing (audit: defective)."
    )
    document_leg: bool = _switch(
        False, "Document leg queries the wrong key: executes, returns nothing (audit: defective)."
    )
    extraction_duplicates: bool = _switch(
        False, "Skip the (turn, triple) idempotency keys: re-extraction duplicates (no exactly-once)."
    )


class Fixes(BaseModel):
    """Repairs for seed-described code paths that are reproduced by default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    traversal_strength: bool = _switch(
        False, "Rank graph fragments by path edge strength x confidence, not hop distance only."
    )
    empty_conversation_cap: bool = _switch(
        False, "Grow the memory budget from the whole stored memory, not the (empty) conversation."
    )


class IceConfig(BaseModel):
    """Every ICE v2 parameter. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- retrieval legs --------------------------------------------------------------------
    leg_depths: dict[str, int] = _chosen(
        {"episodic_vector": 30, "episodic_lexical": 30, "graph": 20, "procedural": 5,
         "document": 10, "summary": 10},
        "Candidates each leg returns at most.",
    )
    intent_weights: dict[str, dict[str, float]] = _chosen(
        DEFAULT_INTENT_WEIGHTS, "Intent-conditioned RRF weight per leg."
    )
    procedural_trigger_cosine: float = _chosen(0.6, "Trigger cosine that matches a pattern.")
    cluster_scope: bool = _chosen(
        False, "Restrict the episodic legs to turns of the query's topic cluster."
    )
    doc_chunk_tokens: int = _chosen(200, "Target tokens per document chunk.")
    # -- fusion and bonuses ------------------------------------------------------------------
    fusion: Literal["rrf", "concat"] = _seed(
        "rrf", "`rrf` (the paper's) or `concat`: vector then lexical, unfused (ablation step)."
    )
    rrf_k: int = _chosen(60, "RRF constant; ranks are 1-based.")
    confidence_boost: float = _seed(1.5, "Multiplier for graph fragments with the confidence flag.")
    confidence_flag_threshold: float = _chosen(
        0.8, "Edge confidence at or above which a graph fragment carries the confidence flag."
    )
    strength_bonus_base: float = _chosen(
        0.5, "Strength bonus is x (base + (1 - base) * strength)."
    )
    current_conversation_bonus: float = _chosen(1.2, "Multiplier for current-conversation items.")
    # -- diversification -----------------------------------------------------------------------
    cross_conversation_cap: int = _infer(
        3, "At most this many fragments from each other conversation (current one exempt)."
    )
    type_cap_share: float = _chosen(
        0.6, "At most this share of packed fragments from one source type, if others exist."
    )
    # -- budget ------------------------------------------------------------------------------
    empty_conversation_budget: int = _seed(
        2000, "Memory budget (tokens) when the current conversation is empty."
    )
    budget_growth: float = _chosen(0.5, "Budget grows by this many tokens per conversation token.")
    budget_max: int = _chosen(16000, "Ceiling of the dynamic memory budget.")
    short_term_budget_factor: float = _chosen(0.5, "Budget factor when reliance is short_term.")
    static_budget: int | None = _chosen(
        None, "Replace the dynamic budget with a fixed one (the v1 pilot used 5,000)."
    )
    context_budget: int | None = _chosen(
        None, "Ceiling on all returned context (slots + fragments + recent turns); None: none."
    )
    phase1_priority: tuple[str, ...] = _chosen(SOURCE_TYPES, "Phase-1 source-type order.")
    # -- prompt assembly -----------------------------------------------------------------------
    recent_turns: int = _chosen(6, "Sliding window of the current conversation's last turns.")
    recent_max_tokens: int = _chosen(4000, "Token cap of the recent-turn window.")
    recent_share_of_context_budget: float = _chosen(
        0.25, "Share of `context_budget` the recent window may take when a ceiling is set."
    )
    dedupe_recent: bool = _chosen(
        True, "Drop retrieved turns already shown in the recent window."
    )
    # -- Codex ---------------------------------------------------------------------------------
    traversal_depth: int = _seed(3, "Hops of current-edge traversal.")
    fuzzy_threshold: float = _seed(0.85, "Entity-embedding cosine for a fuzzy entity match.")
    context_edges: int = _seed(10, "Most recent active outgoing edges in an entity context.")
    graph_conversation_scope: bool = _chosen(
        False, "Traverse only edges extracted in the current conversation."
    )
    # -- classifier ----------------------------------------------------------------------------
    long_conversation_turns: int = _chosen(
        20, "Beyond this many turns, short_term is upgraded when a known entity is named."
    )
    # -- workers -------------------------------------------------------------------------------
    decay_half_life_days: float = _chosen(14.0, "Half-life of strength, in simulated days.", gt=0)
    decay_floor: float = _chosen(0.05, "Strength never decays below this.")
    summary_batch_turns: int = _chosen(20, "Turns per batch summary.")
    summary_max_chars: int = _chosen(600, "Length cap of the offline extractive summary.")
    extraction_mode: Literal["postflight", "maintenance"] = _chosen(
        "postflight", "Extract at ingest (post-flight) or only at the `extract` maintenance step."
    )
    extract_roles: tuple[str, ...] = _chosen(("user",), "Roles whose turns are extracted.")
    reinforce_recent: bool = _chosen(
        False, "Also reinforce turns shown in the recent window (default: retrieved ones only)."
    )
    # -- embedding -----------------------------------------------------------------------------
    embed_dim: int = _chosen(512, "Dimension of the internal hashing embedder.")
    # -- switches ------------------------------------------------------------------------------
    seed_defects: SeedDefects = Field(default_factory=SeedDefects)
    """Simulated defects the paper reports as outcomes only."""
    fix: Fixes = Field(default_factory=Fixes)
    """Repairs of reproduced seed code paths."""
    disabled: frozenset[str] = _switch(
        frozenset(), "Mechanisms switched off (names without the `ice.` prefix)."
    )

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of every resolved value."""
        return hashlib.sha256(canonical_json(self).encode()).hexdigest()

    def is_on(self, mechanism: str) -> bool:
        """Whether a mechanism is switched on."""
        return mechanism not in self.disabled

    @classmethod
    def provenance(cls) -> dict[str, str]:
        """Field name -> provenance label (`seed`, `infer`, `chosen`, `switch`)."""
        out: dict[str, str] = {}
        for name, info in cls.model_fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            out[name] = str(extra.get("provenance", "switch"))
        return out


def canonical_json(config: IceConfig) -> str:
    """Sorted-key JSON of a config (sets as sorted lists), for hashing and recording."""
    data = config.model_dump(mode="json")
    data["disabled"] = sorted(config.disabled)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
