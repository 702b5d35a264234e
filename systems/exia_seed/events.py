"""Mechanism stage events: the provider's own tiny event type and the hook it calls.

The provider reports what each mechanism did (eligible, executed, output, selected ...) to an
optional callback. It knows nothing of any harness; a host or adapter translates the events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StageEvent:
    """One stage of one mechanism's work."""

    mechanism: str
    """Provider mechanism name, e.g. `recall.phase2`, `checker`, `batch.close`."""
    stage: str
    """`eligible`, `ineligible`, `executed`, `skipped`, `error`, `output` or `selected`."""
    reason: str | None = None
    count: int | None = None
    ids: tuple[str, ...] = ()
    """Item ids (fact ids, batch ids, note ids)."""
    refs: tuple[str, ...] = ()
    """Source refs the items derive from (`brut:<batch>:<line>`, `registre:<id>`)."""
    params: Mapping[str, Any] = field(default_factory=dict)


EventHook = Callable[[StageEvent], None]


class Emitter:
    """Calls the hook, if any, with a `StageEvent` built from keyword fields."""

    def __init__(self, hook: EventHook | None = None) -> None:
        self.hook = hook

    def __call__(self, mechanism: str, stage: str, **fields: Any) -> None:
        if self.hook is None:
            return
        for key in ("ids", "refs"):
            if key in fields:
                fields[key] = tuple(fields[key])
        self.hook(StageEvent(mechanism=mechanism, stage=stage, **fields))
