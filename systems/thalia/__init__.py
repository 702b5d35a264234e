"""THALIA re-implemented from its paper (D. A. Friedman, v0.1.0) and seed-systems section 3.

A standalone memory system: four runtime stages with typed hand-offs -- Inspector,
Retriever, Reasoner, Memory Gate -- over an append-only SQLite episodic store. It knows
nothing about any evaluation harness; see README.md for stages, provenance and deviations.
"""

from systems.thalia.config import ConfigError, HarnessConfig, resolve_config
from systems.thalia.contracts import (
    Citation,
    DeliveryMode,
    EvidenceWindow,
    GateOutput,
    HarnessOutput,
    InspectorOutput,
    MemorySnapshot,
    RankedEvidence,
    ReasonerOutput,
    RetrieverOutput,
)
from systems.thalia.embedding import Embedder, HashingEmbedder
from systems.thalia.events import EventHook, StageEvent
from systems.thalia.harness import Thalia
from systems.thalia.lm import CallableLM, ExtractiveLM, LMClient
from systems.thalia.store import DuplicateEpisodeError, EpisodicStore

__version__ = "0.1.0-reimpl.1"

__all__ = [
    "CallableLM", "Citation", "ConfigError", "DeliveryMode", "DuplicateEpisodeError", "Embedder",
    "EpisodicStore", "EventHook", "EvidenceWindow", "ExtractiveLM", "GateOutput", "HarnessConfig",
    "HarnessOutput", "HashingEmbedder", "InspectorOutput", "LMClient", "MemorySnapshot",
    "RankedEvidence", "ReasonerOutput", "RetrieverOutput", "StageEvent", "Thalia", "__version__",
    "resolve_config",
]
