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


_PREFIXES: dict[int, tuple[Any, tuple[str, ...]]] = {}


def prefix_hashes(turns) -> list[str]:
    """The running prefix hash after each turn (element i covers turns 0..i); the last few kept by identity."""
    hit = _PREFIXES.get(id(turns))
    if hit is None or hit[0] is not turns:  # the driver's turn rows and an in-process unit: hashed once
        out, running = [], ""
        for turn in turns:
            running = turn_digest(running, turn.model_dump(mode="json"))
            out.append(running)
        if len(_PREFIXES) >= 3:
            _PREFIXES.clear()
        hit = _PREFIXES[id(turns)] = (turns, tuple(out))
    return list(hit[1])
