"""A valid instance of a JSON schema, built deterministically from a request's own text.

For the offline responder (`lsrep.memory_model.offline`): JSON-mode replies and tool-call
arguments. Strings are drawn from the request's words (so a library that extracts "facts" gets
back text that was really in its input), numbers from the schema's bounds, every required
property is present, arrays hold `minItems` items (at least one). `$ref` to `#/$defs/...` or
`#/definitions/...`, `anyOf`/`oneOf` (first non-null option), `allOf`, `enum`, `const` and
`default` are honoured. It is a test instrument, not a model: the content is not an answer.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 8
"""Recursion cut for self-referencing schemas (optional parts are left out beyond it)."""


class Words:
    """The request's text as a deterministic stream of short snippets."""

    def __init__(self, text: str) -> None:
        self.words = re.findall(r"\S+", text) or ["offline"]
        self.pos = 0

    def snippet(self, n: int = 12) -> str:
        start = self.pos % len(self.words)
        self.pos += n
        picked = (self.words + self.words)[start:start + min(n, len(self.words))]
        return " ".join(picked)


def instance(schema: Any, words: Words, *, root: Any = None, depth: int = 0) -> Any:
    """A value valid under `schema` (a JSON-schema dict; `True`/missing accepts anything)."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return words.snippet()
    if "$ref" in schema:
        return instance(_resolve(schema["$ref"], root), words, root=root, depth=depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [o for o in schema[key] if not (isinstance(o, dict) and o.get("type") == "null")]
            return instance((options or schema[key])[0], words, root=root, depth=depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = _resolve(part["$ref"], root) if isinstance(part, dict) and "$ref" in part else part
            for k, v in (part or {}).items():
                if k in ("properties",):
                    merged.setdefault(k, {}).update(v)
                elif k == "required":
                    merged[k] = [*merged.get(k, []), *v]
                else:
                    merged.setdefault(k, v)
        return instance(merged, words, root=root, depth=depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    match kind:
        case "object":
            return _object(schema, words, root, depth)
        case "array":
            if depth >= MAX_DEPTH:
                return []
            n = max(int(schema.get("minItems", 1)), 1)
            if "maxItems" in schema:
                n = min(n, int(schema["maxItems"]))
            return [instance(schema.get("items", {}), words, root=root, depth=depth + 1) for _ in range(n)]
        case "string":
            return _string(schema, words)
        case "integer":
            return int(_number(schema))
        case "number":
            return float(_number(schema))
        case "boolean":
            return bool(schema.get("default", False))
        case "null":
            return None
    return words.snippet()


def _object(schema: dict[str, Any], words: Words, root: Any, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or ())
    # Every required property; beyond the depth cut only those (a recursive schema ends).
    names = [n for n in props if depth < MAX_DEPTH or n in required]
    names += [n for n in required if n not in props]
    return {name: instance(props.get(name, {}), words, root=root, depth=depth + 1) for name in names}


def _string(schema: dict[str, Any], words: Words) -> str:
    fmt = schema.get("format")
    if fmt == "date-time":
        return "2000-01-01T00:00:00Z"
    if fmt == "date":
        return "2000-01-01"
    text = words.snippet()
    lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
    while len(text) < lo:
        text += " " + words.snippet()
    return text if hi is None else text[: int(hi)]


def _number(schema: dict[str, Any]) -> float:
    if "default" in schema and isinstance(schema["default"], (int, float)):
        return schema["default"]
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if lo is not None:
        return lo + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    if hi is not None:
        return min(0, hi - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0))
    return 0


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        return {}
    node = root
    for part in ref.lstrip("#/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node
