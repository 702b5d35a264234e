"""The harness's end of the gateway: each memory-side request answered, limited, cached, recorded.

One relay per unit. `serve(kind, body)` is what the gateway forwards (over the host wire, or
directly in-process): it answers from the offline responder or the configured endpoint
(`upstream`) and adds one `memory_calls` row attributed to the adapter call being driven
(`accounting`). Calls of the campaign's own endpoint embedder (`[embedder] kind = "openai"`),
which systems reach as `setup.embedder`, are recorded here too (`record_embedder_call`).
"""

from __future__ import annotations

import base64
import struct
import time
from collections.abc import Callable
from typing import Any

from lsrep.memory_model.accounting import CallBook, call_context
from lsrep.memory_model.config import endpoint_spec, public_spec
from lsrep.memory_model.gateway import error_body
from lsrep.memory_model.offline import OfflineResponder


class MemoryRelay:
    """Answers a unit's memory-side requests and books them."""

    def __init__(self, book: CallBook, *, llm: Any = None, embedder: Any = None, store_path: str | None = None,
                 refresh_before: str | None = None, where: Callable[[], dict[str, Any]] = dict) -> None:
        self.book = book
        self.where = where
        self.llm_spec, self.embedder_spec = llm, embedder
        self._llm = _answerer(llm, store_path, refresh_before)
        self._embedder = _answerer(embedder, store_path, refresh_before)

    @property
    def active(self) -> bool:
        """Whether the condition gives its system a memory-side model at all."""
        return self.llm_spec is not None or self.embedder_spec is not None

    def public(self) -> dict[str, Any] | None:
        """What the adapter's side may know: model names and dimensions, never a URL or key variable."""
        if not self.active:
            return None
        return {"llm": public_spec(self.llm_spec), "embedder": public_spec(self.embedder_spec)}

    # -- attribution (driven by the host client or the in-process wrapper) -------------------------
    def begin(self, method: str, args: Any = (), kwargs: Any = None) -> None:
        self.book.begin(call_context(method, args, kwargs))

    def end(self) -> None:
        self.book.end()

    # -- serving -------------------------------------------------------------------------------------
    def serve(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """`{"status", "body"}` for one gateway request."""
        if kind == "chat":
            return self._chat(body)
        if kind == "embeddings":
            return self._embeddings(body)
        return {"status": 404, "body": error_body(f"unknown request kind {kind!r}", "invalid_request_error")}

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        spec, answerer = self.llm_spec, self._llm
        if answerer is None:
            return {"status": 404, "body": error_body("this condition gives its system no [memory_llm]",
                                                      "invalid_request_error")}
        start = time.perf_counter()
        common = dict(role="memory_llm", kind="chat", model=_model(spec), where=self.where())
        if isinstance(answerer, OfflineResponder):
            reply = answerer.chat(body)
            usage = reply["usage"]
            self.book.add(**common, source="offline", endpoint="offline", latency_ms=_ms(start),
                          prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                          profile=reply["system_fingerprint"].partition(":")[2])
            return {"status": 200, "body": reply}
        done = answerer.chat(body)
        self.book.add(**common, source="endpoint", endpoint=answerer.base_url, latency_ms=_ms(start),
                      status="ok" if done.status == 200 else "failed", prompt_tokens=done.prompt_tokens,
                      completion_tokens=done.completion_tokens, cost=done.cost, cached=done.cached,
                      attempts=done.attempts, faults=done.faults, error=done.error,
                      request_sha256=done.request_sha256)
        return {"status": done.status, "body": done.body}

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        spec, answerer = self.embedder_spec, self._embedder
        if answerer is None:
            return {"status": 404, "body": error_body("this condition gives its system no [memory_embedder]",
                                                      "invalid_request_error")}
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else list(raw or [])
        if not all(isinstance(t, str) for t in texts):
            return {"status": 400, "body": error_body(
                "the LSREP gateway embeds text inputs only, not token arrays (LangChain: "
                "OpenAIEmbeddings(check_embedding_ctx_length=False))", "invalid_request_error")}
        dimensions = body.get("dimensions") or spec.dimensions
        start = time.perf_counter()
        common = dict(role="memory_embedder", kind="embedding", model=_model(spec), where=self.where(),
                      inputs=len(texts))
        if isinstance(answerer, OfflineResponder):
            rows, tokens = answerer.embed(texts, dimensions)
            self.book.add(**common, source="offline", endpoint="offline", latency_ms=_ms(start), prompt_tokens=tokens)
        else:
            rows, done = answerer.embed(texts, dimensions)
            self.book.add(**common, source="endpoint", endpoint=answerer.base_url, latency_ms=_ms(start),
                          status="ok" if rows is not None else "failed", prompt_tokens=done.prompt_tokens,
                          cost=done.cost, cached=done.cached, attempts=done.attempts, faults=done.faults,
                          error=done.error, request_sha256=done.request_sha256)
            if rows is None:
                return {"status": done.status, "body": done.body}
            tokens = done.prompt_tokens or 0
        as_base64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": _base64(row) if as_base64 else row} for i, row in enumerate(rows)]
        return {"status": 200, "body": {"object": "list", "data": data, "model": _model(spec),
                                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}}

    def record_embedder_call(self, record: Any) -> None:
        """A CallRecord of the campaign's endpoint embedder (`setup.embedder`), booked as role `embedder`."""
        usage = record.usage
        self.book.add(role="embedder", kind="embedding", source="endpoint", endpoint=record.base_url,
                      model=record.model, where=self.where(), latency_ms=1000 * record.latency_s,
                      status=record.status, prompt_tokens=usage.prompt_tokens or usage.estimated_prompt_tokens,
                      cost=record.cost_usd, cached=record.cached, attempts=record.attempts, faults=record.faults,
                      error=" ".join(x for x in (record.reason, record.error) if x) or None,
                      request_sha256=record.request_digest)

    def close(self) -> None:
        for answerer in (self._llm, self._embedder):
            if answerer is not None and not isinstance(answerer, OfflineResponder):
                answerer.client.close()


def _answerer(spec: Any, store_path: str | None, refresh_before: str | None) -> Any:
    if spec is None:
        return None
    if spec.kind == "offline":
        return OfflineResponder(model=spec.model, dimensions=spec.dimensions)
    from lsrep.llm.client import LLMClient
    from lsrep.memory_model.upstream import EndpointUpstream

    endpoint = endpoint_spec(spec)
    if store_path is None:
        return EndpointUpstream(LLMClient(endpoint))
    from pathlib import Path

    from lsrep.judge.campaign import cache_path_for, shared_limit
    from lsrep.llm.cache import ResponseCache

    cache = ResponseCache(cache_path_for(Path(store_path)), not_before=refresh_before)
    return EndpointUpstream(LLMClient(endpoint, cache=cache, limit=shared_limit(store_path, spec)))


def _model(spec: Any) -> str:
    from lsrep.memory_model.offline import OFFLINE_MODEL

    return spec.model or OFFLINE_MODEL


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _base64(row: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(row)}f", *row)).decode("ascii")
