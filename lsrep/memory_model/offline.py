"""The offline responder (`kind = "offline"`): deterministic replies to a library's model requests.

A labelled test instrument, not a model. For a `/chat/completions` request it tries the
profiles registered under the entry-point group `lsrep.offline_profiles` (in sorted name order,
the first that recognises the request wins: a bundled adapter's library may describe its JSON
only in prose), then answers generically:

- `tools` given (and `tool_choice` not `"none"`): one call to the named tool, else the first,
  with arguments built from its parameters schema (`schema_fill`);
- `response_format` `json_schema`: an instance of the schema; `json_object`: `{"content": ...}`;
- otherwise plain text: the opening words of the last user message.

Strings come from the request's own text, so the same request always gets the same reply.
Embeddings are the hashing embedder's vectors at the requested `dimensions`. Token counts are
LSREP's estimate (`lsrep.text.estimate_tokens`), reported as usage.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from typing import Any

from lsrep.memory_model.schema_fill import Words, instance
from lsrep.text import estimate_tokens

Profile = Callable[[dict[str, Any]], "dict[str, Any] | None"]
PROFILE_GROUP = "lsrep.offline_profiles"
OFFLINE_MODEL = "lsrep-offline"
DEFAULT_DIMENSIONS = 1536
"""Vector size when neither the request nor `[memory_embedder] dimensions` names one (the size
OpenAI-minded libraries assume)."""


@cache
def load_profiles() -> tuple[tuple[str, Profile], ...]:
    """Registered profiles, by name; one that fails to load is an error naming it."""
    from importlib.metadata import entry_points

    found = []
    for ep in sorted(entry_points(group=PROFILE_GROUP), key=lambda e: e.name):
        try:
            found.append((ep.name, ep.load()))
        except Exception as exc:  # noqa: BLE001 - named, not swallowed
            raise RuntimeError(f"offline profile {ep.name!r} ({ep.value}) failed to load: "
                               f"{type(exc).__name__}: {exc}") from None
    return tuple(found)


def message_text(message: dict[str, Any]) -> str:
    """A message's text: a string content, or the text parts of a list content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def request_text(body: dict[str, Any]) -> str:
    """The last user message's text (else all messages'), the source of every reply string."""
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    users = [message_text(m) for m in messages if m.get("role") == "user" and message_text(m).strip()]
    return users[-1] if users else " ".join(message_text(m) for m in messages)


def generic_message(body: dict[str, Any]) -> dict[str, Any]:
    """The generic reply (see the module docstring): an assistant message dict."""
    words = Words(request_text(body))
    tools = [t for t in body.get("tools") or () if isinstance(t, dict) and t.get("type", "function") == "function"]
    choice = body.get("tool_choice")
    if tools and choice != "none":
        name = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
        tool = next((t for t in tools if t.get("function", {}).get("name") == name), tools[0])
        function = tool.get("function", {})
        args = instance(function.get("parameters") or {"type": "object"}, words)
        digest = hashlib.sha256(json.dumps([function.get("name"), args], sort_keys=True).encode()).hexdigest()
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{digest[:24]}", "type": "function",
            "function": {"name": function.get("name", ""), "arguments": json.dumps(args)},
        }]}
    fmt = body.get("response_format") or {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        return {"role": "assistant", "content": json.dumps(instance(schema, words))}
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        return {"role": "assistant", "content": json.dumps({"content": words.snippet(24)})}
    return {"role": "assistant", "content": words.snippet(24)}


class OfflineResponder:
    """Answers chat and embedding request bodies; thread-safe (no state beyond the profiles)."""

    def __init__(self, *, model: str | None = None, dimensions: int | None = None,
                 profiles: tuple[tuple[str, Profile], ...] | None = None) -> None:
        self.model = model or OFFLINE_MODEL
        self.dimensions = dimensions
        self.profiles = load_profiles() if profiles is None else profiles

    def message(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """(assistant message, the profile that answered or `generic`)."""
        for name, profile in self.profiles:
            reply = profile(body)
            if reply is not None:
                return {"role": "assistant", **reply}, name
        return generic_message(body), "generic"

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """A `chat.completion` body for a request body."""
        message, profile = self.message(body)
        prompt = sum(estimate_tokens(message_text(m)) for m in body.get("messages") or () if isinstance(m, dict))
        out = message.get("content") or "".join(c["function"]["arguments"] for c in message.get("tool_calls") or ())
        completion = estimate_tokens(out)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return {
            "id": f"chatcmpl-offline-{digest[:24]}", "object": "chat.completion", "created": 0,
            "model": self.model, "system_fingerprint": f"lsrep-offline:{profile}",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def embed(self, texts: list[str], dimensions: int | None) -> tuple[list[list[float]], int]:
        """(one unit vector per text, estimated prompt tokens)."""
        from lsrep.embed.hashing import HashingEmbedder

        dim = dimensions or self.dimensions or DEFAULT_DIMENSIONS
        rows = HashingEmbedder(dim=dim).embed(texts) if texts else []
        return [list(map(float, r)) for r in rows], sum(estimate_tokens(t) for t in texts)
