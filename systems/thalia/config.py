"""HarnessConfig: every tunable THALIA value, each labelled with its provenance.

Provenance labels (seed-systems preamble):

- ``seed``   -- the THALIA paper states the value; a test pins it.
- ``infer``  -- inferred from the paper's numbers or wording.
- ``chosen`` -- the paper is silent; the value is this re-implementation's, never the original's.
- ``switch`` -- an ablation or branch switch, not a parameter of the original.

Precedence, lowest to highest [SEED]: built-in defaults < file < environment (`THALIA_*`)
< explicit values. Lane weights are set both or neither in every layer [SEED].
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ENV_PREFIX = "THALIA_"

CATEGORIES: tuple[str, ...] = (
    "temporal", "preference", "code", "multi-session", "knowledge-update", "single-session"
)
"""Task categories [SEED]."""

ABLATABLE: frozenset[str] = frozenset({
    "inspector.partition", "inspector.adaptive_windows", "recall.fts", "retriever.prf",
    "retriever.bm25", "retriever.hashing", "retriever.rrf", "retriever.recency",
    "retriever.mmr", "reasoner.verify", "gate.consolidate",
})
"""Mechanisms a condition may switch off (`ablate`)."""

DEFAULT_CATEGORY_WEIGHTS: dict[str, tuple[float, float]] = {
    "temporal": (0.75, 0.25),
    "single-session": (0.75, 0.25),
    "preference": (0.50, 0.50),
    "knowledge-update": (0.50, 0.50),
}
"""Lexical/semantic weights per category [CHOICE values, SEED direction]; categories not
listed (code, multi-session) use `lexical_weight`/`semantic_weight`."""

TIGHT_BUDGET_PRESET: dict[str, int] = {"top_k": 2, "max_evidence": 2}
"""The paper's tight-budget diagnostic preset [SEED]."""


class ConfigError(ValueError):
    """An invalid configuration layer (for example one lane weight without the other)."""


def _field(provenance: str, default: Any, doc: str, **kw: Any) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"provenance": provenance}, **kw)


def _seed(default: Any, doc: str, **kw: Any) -> Any:
    return _field("seed", default, doc, **kw)


def _chosen(default: Any, doc: str, **kw: Any) -> Any:
    return _field("chosen", default, doc, **kw)


def _switch(default: Any, doc: str, **kw: Any) -> Any:
    return _field("switch", default, doc, **kw)


class HarnessConfig(BaseModel):
    """THALIA's parameter vector (the Compiler's search surface plus the added methods)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- Retriever ---------------------------------------------------------------------------
    top_k: int = _seed(8, "Per-lane retrieval depth.", ge=1)
    max_evidence: int = _seed(5, "Cap on ranked evidence windows.", ge=1)
    rrf_k: int = _seed(60, "Reciprocal-rank-fusion constant k.", ge=0)
    lexical_weight: float = _seed(0.65, "BM25 lane weight in weighted RRF.", ge=0)
    semantic_weight: float = _seed(0.35, "Hashing-cosine lane weight in weighted RRF.", ge=0)
    task_conditioned_weights: bool = _seed(
        True, "Lane weights follow the task category (temporal/single-session lexical-heavy, "
        "preference/knowledge-update semantic-heavier).")
    category_weights: dict[str, tuple[float, float]] = _chosen(
        DEFAULT_CATEGORY_WEIGHTS, "Lexical/semantic weights per category (others use the defaults).")
    bm25_k1: float = _seed(1.5, "BM25 term-frequency saturation k1.", gt=0)
    bm25_b: float = _seed(0.75, "BM25 length normalisation b.", ge=0, le=1)
    hash_dim: int = _chosen(512, "Buckets D of the hashing-trigram embedder.", ge=8)
    context_budget_tokens: int = _chosen(4096, "Evidence budget B in |T(x)| tokens.", ge=1)
    query_expansion: bool = _seed(False, "Pseudo-relevance-feedback query expansion (PRF).")
    prf_feedback_docs: int = _chosen(3, "PRF feedback windows R.", ge=1)
    prf_top_terms: int = _chosen(5, "PRF appended terms K.", ge=1)
    recency_weight: float = _seed(0.0, "Recency bonus weight; 0 is a no-op.", ge=0, le=1)
    mmr: bool = _seed(False, "MMR diversity re-ranking.")
    mmr_lambda: float = _chosen(0.7, "MMR relevance/diversity trade-off lambda.", ge=0, le=1)
    evidence_dir: str | None = _chosen(
        None, "Where FILE_BASED overflow lists are written (None: kept in the output only).")
    # -- Inspector ---------------------------------------------------------------------------
    max_windows: int = _seed(15, "Inspector window cap.", ge=1)
    adaptive_windows: bool = _seed(False, "Widen the window cap with the transcript length.")
    adaptive_window_ratio: int = _seed(5, "One window per this many transcript lines.", ge=1)
    partition_threshold: int = _chosen(200, "Records above which the block filter runs.", ge=0)
    partition_size: int = _chosen(5, "Records per partition block.", ge=1)
    window_radius: int = _chosen(0, "Context lines added on each side of a window.", ge=0)
    render_dates: bool = _chosen(True, "Render turns as `[YYYY-MM-DD] Speaker: text` lines.")
    # -- Recall and memory -------------------------------------------------------------------
    recall: bool = _chosen(
        False, "Read-only FTS recall from the episodic store joins the corpus (opt-in: in replay "
        "the store repeats the transcript, so recall would bypass the Inspector).")
    recall_limit: int = _chosen(5, "FTS hits injected as recalled windows.", ge=0)
    recall_drop_stopwords: bool = _chosen(
        True, "Drop stopwords from the sanitised FTS query when content tokens remain.")
    fts: bool = _switch(True, "Use SQLite FTS5 when available; False selects the LIKE branch.")
    snapshot_refresh: Literal["session", "turn"] = _chosen(
        "session", "When the frozen MEMORY.md snapshot is re-read (Hermes pattern: session).")
    memory_update_jaccard: float = _chosen(
        0.5, "Content-token Jaccard at which a delta replaces a bullet (update_memory).", ge=0, le=1)
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL"] = _chosen(
        "OFF", "SQLite synchronous pragma (replay state is disposable and snapshotted by copy).")
    sqlite_journal_mode: Literal["MEMORY", "DELETE"] = _chosen(
        "MEMORY", "SQLite rollback journal; MEMORY keeps rollback and leaves no journal file.")
    # -- Reasoner ----------------------------------------------------------------------------
    verify: bool = _seed(False, "Grounding verification with one re-answer below threshold.")
    grounding_threshold: float = _chosen(0.5, "Answer-token support below which verify re-answers.",
                                         ge=0, le=1)
    citation_min_overlap: int = _chosen(1, "Shared non-stopword tokens that make a window cited.",
                                        ge=1)
    # -- Ablation ----------------------------------------------------------------------------
    ablate: frozenset[str] = _switch(frozenset(), "Mechanisms switched off for an ablation.")

    @model_validator(mode="after")
    def _check(self) -> HarnessConfig:
        unknown = set(self.ablate) - ABLATABLE
        if unknown:
            raise ValueError(f"cannot ablate {sorted(unknown)}; ablatable: {sorted(ABLATABLE)}")
        bad = set(self.category_weights) - set(CATEGORIES)
        if bad:
            raise ValueError(f"unknown categories in category_weights: {sorted(bad)}")
        return self

    def ablated(self, mechanism: str) -> bool:
        return mechanism in self.ablate

    def lane_weights(self, category: str) -> tuple[float, float]:
        """(lexical, semantic) weights for a task category."""
        if self.task_conditioned_weights and category in self.category_weights:
            return self.category_weights[category]
        return self.lexical_weight, self.semantic_weight

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["ablate"] = sorted(self.ablate)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HarnessConfig:
        """Build from a mapping, ignoring unrecognised keys (as the paper's from_dict does)."""
        return cls.model_validate({k: v for k, v in data.items() if k in cls.model_fields})

    def fingerprint(self) -> str:
        """SHA-256 of the resolved values: what a run records to be rebuildable."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()

    @classmethod
    def provenance(cls) -> dict[str, str]:
        """The provenance label of every field."""
        return {name: (f.json_schema_extra or {})["provenance"]  # type: ignore[index]
                for name, f in cls.model_fields.items()}


def _check_lane_pair(layer: str, values: Mapping[str, Any]) -> None:
    present = {"lexical_weight", "semantic_weight"} & set(values)
    if len(present) == 1:
        raise ConfigError(f"{layer}: set lexical_weight and semantic_weight both or neither "
                          f"(only {present.pop()} given)")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A TOML or JSON file, fields flat or under a `harness` table; unknown keys ignored."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    if isinstance(data.get("harness"), dict):
        data = data["harness"]
    return {k: v for k, v in data.items() if k in HarnessConfig.model_fields}


def read_environment(env: Mapping[str, str]) -> dict[str, Any]:
    """`THALIA_<FIELD>` variables for known fields; others (API keys...) are not config."""
    out: dict[str, Any] = {}
    for name in HarnessConfig.model_fields:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is None:
            continue
        if name == "ablate":
            out[name] = frozenset(p.strip() for p in raw.split(",") if p.strip())
        elif name == "category_weights":
            out[name] = json.loads(raw)
        elif name == "evidence_dir" and raw == "":
            out[name] = None
        else:
            out[name] = raw
    return out


def resolve_config(file: str | Path | None = None, env: Mapping[str, str] | None = None,
                   explicit: Mapping[str, Any] | None = None) -> HarnessConfig:
    """Defaults < file < environment < explicit. `env=None` reads no environment at all."""
    layers = [
        ("file", read_config_file(file) if file is not None else {}),
        ("environment", read_environment(env) if env is not None else {}),
        ("explicit", dict(explicit or {})),
    ]
    merged: dict[str, Any] = {}
    for layer, values in layers:
        _check_lane_pair(layer, values)
        merged.update(values)
    return HarnessConfig.model_validate(merged)
