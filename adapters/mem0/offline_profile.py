"""Offline-responder profile for mem0 2.2.1's extraction prompt (a test instrument, not a model).

mem0 describes the JSON it wants only in prose (`{"memory": [{"id": "0", "text": ...}]}`), so the
generic responder cannot fill it. This profile recognises mem0's additive extraction request
(system prompt "You are a Memory Extractor", user prompt with a `## New Messages` section) and
answers deterministically from the request text alone: each new message of three or more words
becomes one memory, `Speaker: content` (whitespace collapsed), unless it is already among the
`## Existing Memories`. The memories are therefore the turns' own words, never invented; a
sentence split would lose words a question may need (the conformance suite's hostile-text check).
Registered under the entry-point group `lsrep.offline_profiles` as `mem0`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lsrep.adapters.thirdparty import parse_turn_text, statement

_SECTION = re.compile(r"^## (?P<name>[^\n]+)\n(?P<body>.*?)(?=^## |^# Output:|\Z)", re.S | re.M)
_ROLE = re.compile(r"^(user|assistant|system): ", re.M)


def _sections(text: str) -> dict[str, str]:
    return {m["name"].strip(): m["body"].strip() for m in _SECTION.finditer(text)}


def _existing(section: str) -> set[str]:
    try:
        rows = json.loads(section)
    except ValueError:
        return set()
    return {str(r.get("text", "")) for r in rows if isinstance(r, dict)} if isinstance(rows, list) else set()


def _messages(section: str) -> list[tuple[str, str]]:
    """`(role, text)` of each message in mem0's `role: content` rendering of the new messages."""
    parts = _ROLE.split(section)
    return [(parts[i], parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2)]


def mem0_profile(body: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message for a mem0 extraction request, or None for any other request."""
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
    if not (isinstance(system, str) and isinstance(user, str) and "You are a Memory Extractor" in system):
        return None
    sections = _sections(user)
    if "New Messages" not in sections:
        return None
    seen = _existing(sections.get("Existing Memories", "[]"))
    memories: list[dict[str, str]] = []
    for role, text in _messages(sections["New Messages"]):
        _, speaker, content = parse_turn_text(text)
        kept = statement(content)
        fact = f"{speaker or role}: {kept}"
        if kept and fact not in seen:
            seen.add(fact)
            memories.append({"id": str(len(memories)), "text": fact, "attributed_to": role})
    return {"content": json.dumps({"memory": memories})}
