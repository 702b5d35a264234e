"""Running prefix hashes of a trajectory's turns: what a checkpoint records as `prefix_sha256` and
what the engine checks the ingested turns against."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import Any


def _canonical_encoder() -> Callable[[Any], str]:
    """`json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)` for a dict payload,
    with the C encoder `json` would build for every call built once (a third of a turn's digest):
    the same arguments, but no check for circular references (a model's dump holds none)."""
    if c_make_encoder is None:  # no C accelerator: the plain encoder, one per process
        return json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
    make = c_make_encoder(None, str, encode_basestring_ascii, None, ":", ",", True, False, True)
    return lambda payload: "".join(make(payload, 0))


canonical_json = _canonical_encoder()


def turn_digest(previous: str, payload: dict[str, Any]) -> str:
    """Running prefix hash: sha256(previous hash + canonical JSON of the turn)."""
    blob = canonical_json(payload).encode()
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
