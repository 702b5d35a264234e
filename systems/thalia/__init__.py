"""THALIA re-implemented from its paper (D. A. Friedman, v0.1.0) and seed-systems section 3.

A standalone memory system: four runtime stages with typed hand-offs -- Inspector,
Retriever, Reasoner, Memory Gate -- over an append-only SQLite episodic store. It knows
nothing about any evaluation harness; see README.md for stages, provenance and deviations.
"""

from .config import ConfigError, HarnessConfig, resolve_config
from .contracts import (
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
from .embedding import Embedder, HashingEmbedder
from .events import EventHook, StageEvent
from .harness import Thalia
from .lm import CallableLM, ExtractiveLM, LMClient
from .store import DuplicateEpisodeError, EpisodicStore

__version__ = "0.1.0-reimpl.1"

__all__ = [
    "CallableLM", "Citation", "ConfigError", "DeliveryMode", "DuplicateEpisodeError", "Embedder",
    "EpisodicStore", "EventHook", "EvidenceWindow", "ExtractiveLM", "GateOutput", "HarnessConfig",
    "HarnessOutput", "HashingEmbedder", "InspectorOutput", "LMClient", "MemorySnapshot",
    "RankedEvidence", "ReasonerOutput", "RetrieverOutput", "StageEvent", "Thalia", "__version__",
    "resolve_config",
]
