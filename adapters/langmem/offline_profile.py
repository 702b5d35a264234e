"""Offline-responder profile for LangMem 0.0.30's memory manager (a test instrument, not a model).

LangMem (through trustcall) asks for tool calls: `Memory` (a new memory), `PatchDoc` (JSON-patch an
existing one) and `RemoveDoc`. The generic responder would fill one call from the schema; this
profile answers as a careful extractor would, deterministically from the request text alone:

- each `[date] Speaker: content` turn (its lines up to the next such turn) of the `<session_...>` block of three or more words gives one
  memory, `Speaker: content`;
- one already stored verbatim is skipped;
- one whose speaker and first three words match an existing memory (`<instance id=...>`) replaces
  that memory's content through `PatchDoc` (a revision: "I live in Porto" after "I live in
  Lisbon"), each existing memory at most once, when `PatchDoc` is offered;
- any other becomes a `Memory` call. `RemoveDoc` is never chosen.

Registered under the entry-point group `lsrep.offline_profiles` as `langmem`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from typing import Any

from lsrep.adapters.thirdparty import parse_turn_text, statement

_SESSION = re.compile(r"<session_[^>]*>\n(?P<body>.*?)\n</session_[^>]*>", re.S)
_TURN_START = re.compile(r"^\[[0-9]{4}-[0-9]{2}-[0-9]{2}[^\]\n]*\] ", re.M)
_HEADER = re.compile(r"^=+ [A-Za-z ]+ Message =+$", re.M)
_INSTANCE = re.compile(r'<instance id=(?P<id>\S+) schema_type="[^"]*">\n(?P<doc>.*?)\n</instance>', re.S)


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {t.get("function", {}).get("name") for t in body.get("tools") or () if isinstance(t, dict)}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _existing(system: str) -> list[tuple[str, str]]:
    """`(id, content)` of each existing memory the request shows."""
    found = []
    for m in _INSTANCE.finditer(system):
        try:
            doc = ast.literal_eval(m["doc"])
        except (ValueError, SyntaxError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("content"), str):
            found.append((m["id"], doc["content"]))
    return found


def _lead(fact: str) -> tuple[str, ...]:
    speaker, _, sentence = fact.partition(": ")
    return (speaker.lower(), *re.findall(r"[a-z0-9']+", sentence.lower())[:3])


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps([name, args], sort_keys=True).encode()).hexdigest()
    return {"id": f"call_{digest[:24]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def langmem_profile(body: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message for a LangMem memory-manager request, or None for any other request."""
    tools = _tool_names(body)
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    system = "\n".join(_text(m) for m in messages if m.get("role") == "system")
    user = "\n".join(_text(m) for m in messages if m.get("role") == "user")
    if "Memory" not in tools or "You are a memory subroutine for an AI." not in system:
        return None
    session = _SESSION.search(user)
    if session is None:
        return None
    existing = _existing(system) if "PatchDoc" in tools else []
    stored = {content for _, content in _existing(system)}
    patched: set[str] = set()
    calls = []
    body = _HEADER.sub("", session["body"])
    starts = [m.start() for m in _TURN_START.finditer(body)] + [len(body)]
    for line in (body[a:b] for a, b in zip(starts, starts[1:], strict=False)):
        when, speaker, content = parse_turn_text(line)
        if when is None:
            continue
        kept = statement(content)
        fact = f"{speaker}: {kept}"
        if kept is None or fact in stored:
            continue
        stored.add(fact)
        target = next((doc_id for doc_id, old in existing
                       if doc_id not in patched and _lead(old) == _lead(fact) and len(_lead(fact)) == 4), None)
        if target is not None:
            patched.add(target)
            calls.append(_call("PatchDoc", {
                "json_doc_id": target, "planned_edits": "replace the content with the newer statement",
                "patches": [{"op": "replace", "path": "/content", "value": fact}]}))
        else:
            calls.append(_call("Memory", {"content": fact}))
    if not calls:
        return {"content": "No new memories."}
    return {"content": None, "tool_calls": calls}
