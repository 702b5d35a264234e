"""ICE v2, re-implemented from the LSREP paper's description (a memory system, not a plug-in).

This package never imports the harness. See README.md for the design, which values are the
paper's and which are ours, and the defect and fix switches.
"""

from .assemble import ContextFragment
from .config import LEGS, Fixes, IceConfig, SeedDefects
from .embedding import HashingEmbedder
from .episodic import TurnRecord
from .events import StageEvent
from .extraction import RuleBasedModel
from .system import IceSystem, Preflight

__all__ = [
    "LEGS", "ContextFragment", "Fixes", "HashingEmbedder", "IceConfig", "IceSystem", "Preflight",
    "RuleBasedModel", "SeedDefects", "StageEvent", "TurnRecord",
]

__version__ = "2.0.0-reimpl.1"
