"""The memory model `lsrep adapters check` gives an adapter: the offline responder by default, or
an endpoint given on the command line (`--memory-llm` / `--memory-embedder`), reached first so an
endpoint that is down is one error naming its URL, not one bare connection error per check."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from pydantic import ValidationError

from lsrep.errors import ConfigError, pydantic_reason
from lsrep.memory_model.accounting import CallBook
from lsrep.memory_model.relay import MemoryRelay


def parse_table(flag: str, text: str | None) -> Any:
    """`offline` (default), `none`, or a JSON object of the `[memory_llm]` table's keys."""
    from lsrep.protocol.campaign import MemoryModelSpec

    text = "offline" if text is None else text.strip()
    if text == "none":
        return None
    if text == "offline":
        return MemoryModelSpec(kind="offline")
    try:
        table = json.loads(text)
    except json.JSONDecodeError:
        table = None
    if not isinstance(table, dict):
        raise ConfigError(f"{flag} {text!r}: expected offline, none, or a JSON object of the table's keys, e.g. "
                          '\'{"base_url": "http://127.0.0.1:8080/v1", "model": "m", "api_key_env": ""}\'')
    try:
        return MemoryModelSpec.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(f"{flag}: {pydantic_reason(exc)}") from None


def unreachable(spec: Any, timeout_s: float = 5.0) -> str | None:
    """Why an endpoint table's server cannot be reached (None: it answered, whatever the status)."""
    if spec is None or spec.kind != "endpoint":
        return None
    url = spec.base_url.rstrip("/") + "/models"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=timeout_s):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: reachable (a missing /models or auth is not this check's business)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"{spec.base_url} is unreachable ({type(reason).__name__}: {reason})"


def check_relay(llm: Any, embedder: Any) -> MemoryRelay:
    """The relay of a conformance run: every call booked (unit `conformance`), nothing cached."""
    problems = [f"{flag}: {why}" for flag, s in (("--memory-llm", llm), ("--memory-embedder", embedder))
                if (why := unreachable(s))]
    if problems:
        raise ConfigError("; ".join(problems) + " — start the server or check the URL; no check was run")
    from lsrep.conformance.scenario import CONDITION

    return MemoryRelay(CallBook("conformance", "conformance", CONDITION), llm=llm, embedder=embedder)
