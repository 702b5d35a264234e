"""Building adapters for a condition, and the wrapper the harness puts around every call.

The wrapper times calls, tags every fidelity event with where it happened, and
turns exceptions into failure records. Adapters stay thin translators.
"""

from __future__ import annotations

import functools
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lsrep.contract import AdapterSetup, Embedder, FidelityEvent, MemoryAdapter
from lsrep.errors import ConfigError, pydantic_reason
from lsrep.registry import load_adapter_class


def validate_condition(system: str, options: dict[str, Any], disable: tuple[str, ...],
                       condition: str) -> tuple[type[MemoryAdapter], Any]:
    """Resolve the adapter class, validate its options and the ablation switches."""
    cls = load_adapter_class(system)
    try:
        opts = cls.Options.model_validate(options)
    except ValidationError as exc:
        raise ConfigError(f"condition {condition!r}: bad options for {system!r}: {pydantic_reason(exc)}") from None
    declared = {m.name: m for m in cls.mechanisms}
    for name in disable:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ConfigError(
                f"condition {condition!r}: {system!r} declares no mechanism {name!r} (declared: {known})"
            )
        if not declared[name].can_disable:
            raise ConfigError(f"condition {condition!r}: mechanism {name!r} of {system!r} cannot be switched off")
    return cls, opts


def build_adapter(cls: type[MemoryAdapter], options: Any, *, disable: tuple[str, ...], state_dir: Path,
                  retrieval_budget: int | None, embedder: Embedder | None, llm: Any, seed: int,
                  embedding_text: str = "content", memory_llm: Any = None, memory_embedder: Any = None) -> MemoryAdapter:
    setup = AdapterSetup(
        options=options, disabled=frozenset(disable), state_dir=state_dir,
        retrieval_budget=retrieval_budget, embedder=embedder, llm=llm, seed=seed,
        embedding_text=embedding_text, memory_llm=memory_llm, memory_embedder=memory_embedder,
    )
    return cls(setup)


@dataclass
class CallLog:
    """Events and failures of one unit, in the order they happened."""

    run_id: str
    unit_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    where: dict[str, Any] = field(default_factory=dict)

    def record_adapter_event(self, event: FidelityEvent) -> None:
        """An event from the adapter. Only the harness's prompt assembler writes `in_prompt`; what a
        system says about its own prompt is kept as its own stage, `reported_in_prompt`."""
        self.record_event(event, stage="reported_in_prompt" if event.stage == "in_prompt" else None)

    def record_event(self, event: FidelityEvent, *, stage: str | None = None) -> None:
        self.events.append({
            "run_id": self.run_id, "unit_id": self.unit_id, "seq": len(self.events),
            "step": self.where.get("step"), "checkpoint": self.where.get("checkpoint"),
            "probe_id": self.where.get("probe_id"), "mechanism": event.mechanism, "stage": stage or event.stage,
            "reason": event.reason, "count": event.count, "ids": _ids_json(tuple(event.ids)),
            "source_turn_ids": _ids_json(tuple(event.source_turn_ids)),
            "params": json.dumps(event.params, sort_keys=True, default=str) if event.params else "{}",
        })

    def record_failure(self, phase: str, exc: BaseException | str, *, checkpoint: int | None = None,
                       probe_id: str | None = None) -> str:
        if isinstance(exc, BaseException):
            kind, message, trace = type(exc).__name__, _one_line(exc), format_traceback(exc)
        else:
            kind, message, trace = "HarnessError", exc, None
        self.failures.append({
            "run_id": self.run_id, "unit_id": self.unit_id, "seq": len(self.failures), "phase": phase,
            "checkpoint": checkpoint, "probe_id": probe_id, "error_type": kind, "message": message,
            "traceback": trace,
        })
        return f"{kind}: {message}"


@functools.lru_cache(maxsize=8192)
def _ids_json(ids: tuple[str, ...]) -> str:
    # Events repeat the same id lists (a mechanism's in-prompt turns at every probe): encoded once.
    return json.dumps(list(ids))


class Guarded:
    """Calls into an adapter, with timing, event tagging and exception capture."""

    def __init__(self, adapter: MemoryAdapter, log: CallLog) -> None:
        self.adapter = adapter
        self.log = log
        adapter.bind_events(log.record_adapter_event)

    def call(self, step: str, fn, *args, checkpoint: int | None = None, probe_id: str | None = None,
             **kwargs) -> tuple[Any, float, BaseException | None]:
        """Run fn; return (result, elapsed ms, exception or None). Never raises adapter errors."""
        self.log.where = {"step": step, "checkpoint": checkpoint, "probe_id": probe_id}
        start = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
            return result, self._elapsed(start), None
        except Exception as exc:  # noqa: BLE001 - any adapter failure becomes a recorded row
            return None, self._elapsed(start), exc
        finally:
            self.log.where = {}

    def _elapsed(self, start: float) -> float:
        # A hosted adapter reports the time the call took in its host, without the message trip.
        hosted = getattr(self.adapter, "last_ms", None)
        return hosted if hosted is not None else (time.perf_counter() - start) * 1000


def format_traceback(exc: BaseException) -> str:
    """The exception's traceback as text (its causes included), for the failures table.

    An exception raised in the adapter host carries the host's own traceback (the adapter's
    frames); it is put first, then the harness side of the call."""
    local = "".join(traceback.format_exception(exc)).rstrip()
    hosted = getattr(exc, "host_traceback", "")
    return f"{hosted}\n\n(raised in the adapter host; harness side:)\n{local}" if hosted else local


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:500] if text else type(exc).__name__
