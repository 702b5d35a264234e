"""What an adapter receives as `setup.memory_llm` and `setup.memory_embedder`.

Each names the gateway (`base_url`, a dummy `api_key`, `model`) for libraries that build their
own OpenAI client, and offers a direct call (`chat`, `embed`) for adapters that do not: the same
path through the gateway's relay, so both are cached, limited and recorded alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsrep.memory_model import GATEWAY_KEY
from lsrep.memory_model.gateway import Gateway


class MemoryModelError(RuntimeError):
    """The memory-side model call failed (the gateway's error message, which names the endpoint)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else str(body)
        super().__init__(f"memory model call failed (HTTP {status}): {message}")
        self.status = status


class MemoryLLM:
    """The condition's memory-side chat model, on the local gateway."""

    def __init__(self, gateway: Gateway, model: str) -> None:
        self._gateway = gateway
        self.base_url = gateway.base_url
        self.api_key = GATEWAY_KEY
        self.model = model

    def chat(self, messages: Sequence[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
             tool_choice: Any = None, response_format: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
        """The `chat.completion` body (a dict) for these messages; raises MemoryModelError on failure."""
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages], **params}
        for key, value in (("tools", tools), ("tool_choice", tool_choice), ("response_format", response_format)):
            if value is not None:
                body[key] = value
        reply = self._gateway.handle("chat", body)
        if reply["status"] != 200:
            raise MemoryModelError(reply["status"], reply["body"])
        return reply["body"]

    def __repr__(self) -> str:
        return f"MemoryLLM(model={self.model!r}, base_url={self.base_url!r})"


class MemoryEmbedder:
    """The condition's memory-side embedder, on the same gateway."""

    def __init__(self, gateway: Gateway, model: str, dimensions: int | None) -> None:
        self._gateway = gateway
        self.base_url = gateway.base_url
        self.api_key = GATEWAY_KEY
        self.model = model
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; raises MemoryModelError on failure."""
        if not texts:
            return []
        body: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        reply = self._gateway.handle("embeddings", body)
        if reply["status"] != 200:
            raise MemoryModelError(reply["status"], reply["body"])
        return [row["embedding"] for row in sorted(reply["body"]["data"], key=lambda r: r["index"])]

    def __repr__(self) -> str:
        return f"MemoryEmbedder(model={self.model!r}, dimensions={self.dimensions}, base_url={self.base_url!r})"


def open_handles(forward, spec: dict[str, Any] | None) -> tuple[Gateway | None, MemoryLLM | None, MemoryEmbedder | None]:
    """The gateway and the two handles for a relay's public spec (`MemoryRelay.public()`)."""
    if not spec or not (spec.get("llm") or spec.get("embedder")):
        return None, None, None
    llm, emb = spec.get("llm"), spec.get("embedder")
    gateway = Gateway(forward, [s["model"] for s in (llm, emb) if s])
    return (gateway, MemoryLLM(gateway, llm["model"]) if llm else None,
            MemoryEmbedder(gateway, emb["model"], emb.get("dimensions")) if emb else None)
