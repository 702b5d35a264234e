"""EXIA SEED re-implemented as a Hermes memory provider (standalone: no harness imports).

A spec-faithful re-implementation from the EXIA SEED runtime report; not the original code.
See README.md for what is SEED, what is CHOICE, and the `fix.*` repair flags.
"""

from .events import EventHook, StageEvent
from .provider import ExiaSeedProvider, RecallStatus, is_trivial_prompt
from .recall import RecallLine
from .settings import Fixes, Settings, load_settings
from .standin import StandInModel

__all__ = [
    "EventHook", "ExiaSeedProvider", "Fixes", "RecallLine", "RecallStatus", "Settings", "StageEvent",
    "StandInModel", "is_trivial_prompt", "load_settings",
]
