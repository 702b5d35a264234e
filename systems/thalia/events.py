"""Mechanism stage events: THALIA's own tiny event type and the hook that receives them.

THALIA knows nothing about any evaluation harness. Each stage reports what its mechanisms
did through an optional callback; whoever embeds THALIA translates the events.
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
    """Dotted name without a system prefix, e.g. `retriever.bm25`."""
    stage: str
    """One of :data:`STAGES`."""
    reason: str | None = None
    """Why (for ineligible, skipped, error) or a short note."""
    count: int | None = None
    """How many items the stage concerns."""
    ids: tuple[str, ...] = ()
    """Window ids (`line:<i>` for transcript records, `recall:<turn>` for recalled episodes)."""
    source_turn_ids: tuple[str, ...] = ()
    """External ids of the turns the items derive from."""
    params: dict[str, Any] = field(default_factory=dict)
    """Effective parameters, JSON-serialisable."""


EventHook = Callable[[StageEvent], None]


class EventRelay:
    """Calls the hook, if one is set; a no-op otherwise."""

    def __init__(self, hook: EventHook | None = None) -> None:
        self.hook = hook

    def __call__(self, mechanism: str, stage: str, **fields: Any) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}")
        if self.hook is not None:
            self.hook(StageEvent(mechanism=mechanism, stage=stage, **fields))

    def gate(self, mechanism: str, *, eligible: bool, ablated: bool, reason: str,
             **params: Any) -> bool:
        """Emit eligible/ineligible (and skipped when ablated); True when the mechanism runs."""
        if not eligible:
            self(mechanism, "ineligible", reason=reason, params=params)
            return False
        self(mechanism, "eligible", params=params)
        if ablated:
            self(mechanism, "skipped", reason="ablated")
            return False
        return True
