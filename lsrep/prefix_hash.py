"""Running prefix hashes of a trajectory's turns: what a checkpoint records as `prefix_sha256` and
what the engine checks the ingested turns against."""

from __future__ import annotations

import hashlib
import json
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""`json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)` without building an
encoder per call (json.dumps does that whenever an argument is not its default)."""


def turn_digest(previous: str, payload: dict[str, Any]) -> str:
    """Running prefix hash: sha256(previous hash + canonical JSON of the turn)."""
    blob = _CANONICAL.encode(payload).encode()
    return hashlib.sha256(previous.encode() + blob).hexdigest()


def prefix_hashes(turns) -> list[str]:
    """The running prefix hash after each turn (element i covers turns 0..i).

    Computed once per trajectory by the driver: for its turn rows, and carried to every unit of
    the trajectory in its task (`UnitTask.prefix_sha256`)."""
    out, running = [], ""
    for turn in turns:
        running = turn_digest(running, turn.model_dump(mode="json"))
        out.append(running)
    return out
