"""Command-line changes to a campaign: `-S key=value` overrides and condition/trajectory filters.

Both act on the campaign's TOML data before it is validated, so an override is
checked exactly like a value written in the file, and the manifest records the
campaign as it ran (plus the override strings themselves).

Override keys are dotted paths into the campaign file. A list of named tables is
addressed by name: `conditions.NAME.…` (by `name`), `judges.NAME.…` (by `name`),
`trajectories.ID.…` (by `id`). Values are JSON where they parse (`10`, `true`,
`[1, 2]`, `"text"`), plain strings otherwise::

    -S answerer.endpoint.model=gpt-4o-mini
    -S conditions.vector-rag.options.top_k=10
    -S repetitions=3
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from typing import Any

from lsrep.errors import ConfigError

NAMED_LISTS = {"conditions": "name", "judges": "name", "trajectories": "id"}
"""Campaign lists whose entries an override addresses by this key."""


def parse_value(raw: str) -> Any:
    """JSON where it parses, the raw string otherwise."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def apply_overrides(data: dict[str, Any], pairs: Sequence[str]) -> dict[str, Any]:
    """A copy of campaign data with each `key=value` applied in order."""
    out = copy.deepcopy(data)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"-S {pair!r}: expected KEY=VALUE with a dotted KEY (e.g. answerer.endpoint.model=NAME)")
        _set(out, key.split("."), parse_value(raw), pair)
    return out


def _set(node: dict[str, Any], parts: list[str], value: Any, pair: str) -> None:
    done: list[str] = []
    while len(parts) > 1:
        head, parts = parts[0], parts[1:]
        done.append(head)
        child = node.get(head)
        if head in NAMED_LISTS and isinstance(child, list):
            field, name, parts = NAMED_LISTS[head], parts[0], parts[1:]
            entries = [e for e in child if isinstance(e, dict) and e.get(field) == name]
            if not entries:
                known = ", ".join(str(e.get(field)) for e in child if isinstance(e, dict)) or "none"
                raise ConfigError(f"-S {pair!r}: no {head[:-1]} {name!r} in the campaign (known: {known})")
            if not parts:
                raise ConfigError(f"-S {pair!r}: name a field of {head[:-1]} {name!r}")
            done.append(name)
            node = entries[0]
            continue
        if child is None:
            child = node[head] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"-S {pair!r}: {'.'.join(done)} is a value, not a table")
        node = child
    node[parts[0]] = value


def select(data: dict[str, Any], *, conditions: Iterable[str] | None = None,
           trajectories: Iterable[str] | None = None) -> dict[str, Any]:
    """Campaign data keeping only the named conditions and trajectories (in file order).

    Declared comparisons that name a dropped condition are dropped with it.
    """
    out = dict(data)
    for key, field, wanted in (("conditions", "name", conditions), ("trajectories", "id", trajectories)):
        noun = key[:-1] if key == "conditions" else "trajectory"
        if wanted is None:
            continue
        wanted = list(dict.fromkeys(wanted))
        entries = [e for e in data.get(key, []) if isinstance(e, dict)]
        names = [e.get(field) for e in entries]
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise ConfigError(f"--{key}: no {noun} named {', '.join(map(repr, unknown))} "
                              f"(the campaign has: {', '.join(map(str, names)) or 'none'})")
        out[key] = [e for e in entries if e.get(field) in wanted]
    if conditions is not None and "compare" in out:
        kept = {e.get("name") for e in out["conditions"]}
        out["compare"] = [pair for pair in out["compare"] if all(n in kept for n in pair)]
    return out


def split_names(text: str | None) -> list[str] | None:
    """`a,b , c` to ['a', 'b', 'c']; None stays None."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"expected comma-separated names, got {text!r}")
    return names
