"""Who a memory-side model call belongs to, and the `memory_calls` / `ingests` rows that say it.

Attribution is the harness's: a relayed request arrives while the harness is driving one adapter
call (a single call, or call k of a batch, whose earlier calls have already answered), so it is
tagged with that call's phase and turn or probe. A request that arrives between adapter calls
(e.g. from a library's background thread) is recorded with phase `unattributed`, never dropped;
one that arrives during a later call is booked to that call (the harness cannot tell it apart).
"""

from __future__ import annotations

import json
import threading
from typing import Any

PHASES = {"ingest": "ingest", "end_session": "maintenance", "maintain": "maintenance", "query": "query",
          "reset": "setup", "build": "setup"}
"""Adapter method -> phase; snapshot, restore, state digests and close are `other`."""
UNATTRIBUTED = "unattributed"


def call_context(method: str, args: Any = (), kwargs: Any = None) -> dict[str, Any]:
    """The attribution of calls made while the adapter runs `method(*args, **kwargs)`."""
    context: dict[str, Any] = {"phase": PHASES.get(method, "other"), "method": method}
    first = args[0] if args else None
    if method == "ingest" and first is not None:
        context["turn_id"] = first.get("turn_id") if isinstance(first, dict) else getattr(first, "turn_id", None)
    elif method in ("end_session", "maintain") and first is not None:
        context["detail"] = str(first)
    return context


class CallBook:
    """The rows of one unit's memory-side calls, in the order they were answered; thread-safe."""

    def __init__(self, run_id: str, unit_id: str, condition: str) -> None:
        self.run_id, self.unit_id, self.condition = run_id, unit_id, condition
        self.rows: list[dict[str, Any]] = []
        self.context: dict[str, Any] = {}
        self._lock = threading.Lock()

    def begin(self, context: dict[str, Any]) -> None:
        self.context = dict(context)

    def end(self) -> None:
        self.context = {}

    def add(self, *, role: str, kind: str, source: str, endpoint: str, model: str, where: dict[str, Any],
            latency_ms: float, status: str = "ok", prompt_tokens: int | None = None,
            completion_tokens: int | None = None, cost: float | None = None, cached: bool = False,
            attempts: int = 0, faults: tuple[str, ...] = (), error: str | None = None, inputs: int = 1,
            request_sha256: str | None = None, profile: str | None = None) -> dict[str, Any]:
        context = {**self.context}
        for key in ("probe_id", "checkpoint"):
            if where.get(key) is not None and context.get("phase") == "query":
                context[key] = where[key]
        with self._lock:
            seq = len(self.rows)
            row = {
                "call_id": f"{self.run_id}:{self.unit_id}:m{seq}", "run_id": self.run_id, "unit_id": self.unit_id,
                "condition": self.condition, "seq": seq, "role": role, "kind": kind, "source": source,
                "endpoint": endpoint, "model": model, "phase": context.get("phase", UNATTRIBUTED),
                "method": context.get("method"), "turn_id": context.get("turn_id"),
                "probe_id": context.get("probe_id"), "checkpoint": context.get("checkpoint"),
                "detail": context.get("detail"), "inputs": inputs, "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens, "cost": cost, "latency_ms": latency_ms,
                "cached": int(cached), "attempts": attempts, "faults": json.dumps(list(faults)),
                "status": status, "error": error, "request_sha256": request_sha256, "profile": profile,
            }
            self.rows.append(row)
        return row


def ingest_row(run_id: str, unit_id: str, condition: str, seq: int, turn_id: str, elapsed_ms: float,
               ok: bool) -> dict[str, Any]:
    """One `ingests` row: how long the system took to take one turn."""
    return {"run_id": run_id, "unit_id": unit_id, "condition": condition, "seq": seq, "turn_id": turn_id,
            "elapsed_ms": elapsed_ms, "status": "ok" if ok else "failed"}
