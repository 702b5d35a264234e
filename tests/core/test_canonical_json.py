"""The prefix hashes' canonical JSON is `json.dumps(payload, sort_keys=True, separators=(",", ":"),
default=str)`, text for text, on what turns' dumps can hold."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime

import pytest

from lsrep.prefix_hash import canonical_json, turn_digest


def definition(payload) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)


@pytest.mark.parametrize("payload", [
    {}, {"b": 1, "a": None}, {"content": "café \u2028 \"quoted\" \\ back\nline", "index": 3, "speaker": None},
    {"lone": "\ud800 surrogate", "emoji": "🙂", "ctrl": "\x00\x1f"},
    {"floats": [0.1, 1e300, -0.0, 2.5], "bools": [True, False], "nested": {"z": [1, {"y": 2, "x": [3]}]}},
    {"when": datetime(2023, 5, 20, 2, 21, tzinfo=UTC), "n": 10**30},  # default=str, big ints
    {"nan": float("nan"), "inf": float("inf")},
])
def test_equals_the_definition(payload):
    assert canonical_json(payload) == definition(payload)


def test_random_turn_payloads_and_their_digests():
    rng = random.Random(37)
    alphabet = "abc XYZ 09.,!?'\"\\/\n\t\u00e9\u4e2d\U0001f642\x7f"
    for _ in range(500):
        payload = {"turn_id": f"s{rng.randrange(99)}:t{rng.randrange(999):03d}", "session_id": "s1",
                   "content": "".join(rng.choice(alphabet) for _ in range(rng.randrange(60))),
                   "index": rng.randrange(10**6), "speaker": rng.choice([None, "Ana", "Bö"]),
                   "timestamp": "2023-05-20T02:21:00Z", "role": rng.choice(["user", "assistant"])}
        assert canonical_json(payload) == definition(payload)
        assert turn_digest("f" * 64, payload) == hashlib.sha256(("f" * 64 + definition(payload)).encode()).hexdigest()
