"""Memory-side requests answered by an OpenAI-compatible endpoint through LSREP's own client.

The request body the library built (messages, tools, `response_format`, its own parameters) is
sent as it is, with the configured model; the reply body comes back as it is. What LSREP adds is
what every call of the harness gets (`lsrep.llm.client`): the key read from the environment in
the harness only, retries with backoff on 429/5xx/timeouts/connection errors/malformed bodies, a
concurrency bound shared by every process using the store's folder, a content-addressed cache
beside the store (a re-run makes no upstream call), and redacted errors.
"""

from __future__ import annotations

import base64
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from lsrep.llm.cache import request_key
from lsrep.llm.client import LLMClient, _check_chat, _post
from lsrep.llm.config import EndpointSpec
from lsrep.memory_model.gateway import error_body


@dataclass
class Answered:
    """One request's outcome: the HTTP status and body for the library, and what to record."""

    status: int
    body: dict[str, Any]
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    cached: bool = False
    attempts: int = 0
    faults: tuple[str, ...] = ()
    error: str | None = None
    request_sha256: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


UPSTREAM_FAILED = 424
"""Status the gateway answers when LSREP's client gave up: a 4xx the library's own client does not
retry (LSREP already retried, and recorded every attempt)."""


class EndpointUpstream:
    """Chat and embedding bodies through an :class:`LLMClient` for one endpoint."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.spec: EndpointSpec = client.spec

    @property
    def base_url(self) -> str:
        return self.spec.base_url

    def chat(self, body: dict[str, Any]) -> Answered:
        spec = self.spec
        sent = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "n")}
        sent["model"] = spec.model
        if "temperature" not in sent and spec.temperature is not None:
            sent["temperature"] = spec.temperature
        if "seed" not in sent and spec.seed is not None:
            sent["seed"] = spec.seed
        key = request_key({"kind": "memory_chat", "base_url": spec.base_url, "body": sent})
        cache = self.client.cache
        if cache is not None and (hit := cache.get(key)) is not None:
            usage = hit.usage or {}
            return Answered(200, hit.response["body"], usage.get("prompt_tokens"), usage.get("completion_tokens"),
                            cost=None if spec.cost(0, 0) is None else 0.0, cached=True, request_sha256=key)
        outcome = self.client._with_retries(
            lambda sdk: _post(sdk, "/chat/completions", sent, spec.timeout_s), _check_chat)
        if outcome.body is None:
            return Answered(UPSTREAM_FAILED, error_body(f"LSREP gateway: {spec.base_url} failed ({outcome.reason}) "
                                                        f"after {outcome.attempts} attempt(s): {outcome.error}"),
                            attempts=outcome.attempts, faults=outcome.faults,
                            error=f"{outcome.reason}: {outcome.error}", request_sha256=key)
        usage = outcome.body.get("usage") or {}
        if cache is not None:
            cache.put(key, kind="memory_chat", base_url=spec.base_url, model=spec.model, request=sent,
                      response={"body": outcome.body}, usage=usage)
        return Answered(200, outcome.body, usage.get("prompt_tokens"), usage.get("completion_tokens"),
                        cost=spec.cost(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0),
                        attempts=outcome.attempts, faults=outcome.faults, request_sha256=key)

    def embed(self, texts: list[str], dimensions: int | None) -> tuple[list[list[float]] | None, Answered]:
        """(rows or None, outcome): every text cached on its own, the missing ones in one request."""
        spec = self.spec
        params = {"model": spec.model, **({"dimensions": dimensions} if dimensions else {})}
        keys = [request_key({"kind": "memory_embedding", "base_url": spec.base_url, **params, "input": t})
                for t in texts]
        cache = self.client.cache
        found = {k: c for k, c in (cache.get_many(keys) if cache is not None else {}).items()}
        missing = list(dict.fromkeys((k, t) for k, t in zip(keys, texts, strict=True) if k not in found))
        digest = request_key({"keys": keys})
        vectors = {k: c.response["vector"] for k, c in found.items()}
        tokens = sum(int(c.usage.get("tokens") or 0) for c in found.values())
        if not missing:
            return [vectors[k] for k in keys], Answered(200, {}, tokens, None, cached=True, request_sha256=digest,
                                                        cost=None if spec.cost(0, 0) is None else 0.0)
        batch = [t for _, t in missing]
        outcome = self.client._with_retries(
            lambda sdk: _post(sdk, "/embeddings", {**params, "input": batch}, spec.timeout_s),
            lambda b: _check_rows(b, len(batch)))
        if outcome.body is None:
            return None, Answered(UPSTREAM_FAILED, error_body(
                f"LSREP gateway: {spec.base_url} failed ({outcome.reason}) after {outcome.attempts} attempt(s): "
                f"{outcome.error}"), attempts=outcome.attempts, faults=outcome.faults,
                error=f"{outcome.reason}: {outcome.error}", request_sha256=digest)
        reported = int((outcome.body.get("usage") or {}).get("prompt_tokens") or 0)
        rows = sorted(outcome.body["data"], key=lambda d: d["index"])
        share = _shares(reported, batch)
        for (key, text), row, n in zip(missing, rows, share, strict=True):
            vectors[key] = _floats(row["embedding"])
            if cache is not None:
                cache.put(key, kind="memory_embedding", base_url=spec.base_url, model=spec.model,
                          request={**params, "input": text}, response={"vector": vectors[key]}, usage={"tokens": n})
        return [vectors[k] for k in keys], Answered(
            200, {}, tokens + reported, None, cost=spec.cost(reported, 0), attempts=outcome.attempts,
            faults=outcome.faults, request_sha256=digest)


def _check_rows(body: Any, expected: int) -> dict[str, Any]:
    from lsrep.llm.client import _check_embeddings

    return _check_embeddings(body, expected)


def _floats(embedding: Any) -> list[float]:
    if isinstance(embedding, str):  # base64 float32, as some servers answer
        raw = base64.b64decode(embedding)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return [float(x) for x in embedding]


def _shares(total: int, texts: list[str]) -> list[int]:
    """The reported token total split over the texts by their length (each cached with its share)."""
    from lsrep.text import estimate_tokens

    sizes = [max(estimate_tokens(t), 1) for t in texts]
    whole = sum(sizes)
    out = [total * s // whole for s in sizes]
    out[-1] += total - sum(out)
    return out


def monotonic_ms(start: float) -> float:
    return (time.monotonic() - start) * 1000
