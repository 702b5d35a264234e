"""Mechanism stage events: ICE's own tiny event type and the callback that receives them.

ICE knows nothing about any harness. It reports each mechanism's stages through an
optional callback; whoever embeds ICE decides what to do with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

STAGES: tuple[str, ...] = (
    "eligible", "ineligible", "executed", "skipped", "error", "output", "selected", "in_prompt"
)


@dataclass(frozen=True)
class StageEvent:
    """One stage of one mechanism's work."""

    mechanism: str
    """Dotted name without a system prefix, e.g. `leg.graph`."""
    stage: str
    """One of :data:`STAGES`."""
    reason: str | None = None
    """Why (for ineligible, skipped, error) or a short note."""
    count: int | None = None
    """How many items the stage concerns."""
    ids: tuple[str, ...] = ()
    """Item ids (candidate, fragment, edge or turn ids)."""
    source_turn_ids: tuple[str, ...] = ()
    """Turns the items derive from."""
    params: dict[str, Any] = field(default_factory=dict)
    """Effective parameters, JSON-serialisable."""


EventCallback = Callable[[StageEvent], None]


class EventRelay:
    """Sends events to a callback, if one is set; a no-op otherwise."""

    def __init__(self, callback: EventCallback | None = None) -> None:
        self.callback = callback

    def __call__(self, mechanism: str, stage: str, **fields: Any) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}")
        if self.callback is not None:
            self.callback(StageEvent(mechanism=mechanism, stage=stage, **fields))
