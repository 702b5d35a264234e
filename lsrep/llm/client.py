"""One client for OpenAI-compatible endpoints: bounded concurrency, retries, cache, accounting.

Every call returns a :class:`CallRecord`, failures included; nothing is retried
by the SDK (``max_retries=0``) so every attempt and its fault is visible here.
The API key is read from the environment each time the SDK client is needed
and is never copied into a record, the cache, a log line or a repr.
"""

from __future__ import annotations

import importlib
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any

import numpy as np
import openai

from lsrep.llm.cache import ResponseCache, request_key
from lsrep.llm.config import EndpointSpec, MissingApiKey, Purpose
from lsrep.llm.context import MessageFit, estimate_prompt_tokens, truncate_messages
from lsrep.llm.limits import ConcurrencyLimit, ThreadLimit
from lsrep.llm.records import CallRecord, ChatRequest, LLMCallError, Usage, UsageLedger
from lsrep.text import estimate_tokens

RecordSink = Callable[[CallRecord], None]


class _Malformed(Exception):
    """The endpoint answered 2xx with a body that is not a valid response."""


@dataclass(frozen=True)
class _Attempted:
    """Outcome of the retry loop: the parsed body or the failure, with the attempt history."""

    body: dict[str, Any] | None
    attempts: int
    faults: tuple[str, ...]
    backoff_s: tuple[float, ...]
    reason: str | None = None
    error: str | None = None


class LLMClient:
    """Calls one :class:`EndpointSpec`; thread-safe; share one per endpoint."""

    def __init__(
        self,
        spec: EndpointSpec,
        *,
        cache: ResponseCache | None = None,
        limit: ConcurrencyLimit | None = None,
        on_record: RecordSink | None = None,
        rng_seed: int | None = None,
    ) -> None:
        self.spec = spec
        self.cache = cache
        self.limit: ConcurrencyLimit = limit or ThreadLimit(spec.concurrency)
        self.ledger = UsageLedger()
        self._sinks: list[RecordSink] = [on_record] if on_record else []
        self._rng = random.Random(spec.seed if rng_seed is None else rng_seed)
        self._rng_lock = threading.Lock()
        self._sdk_lock = threading.Lock()
        self._sdk: openai.OpenAI | None = None

    def __repr__(self) -> str:
        return f"LLMClient(model={self.spec.model!r}, base_url={self.spec.base_url!r})"

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("LLMClient is not picklable; rebuild it from its EndpointSpec")

    def __copy__(self) -> LLMClient:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LLMClient:
        # A client is a shared connection to an endpoint, not state: copies share it.
        return self

    # -- public ---------------------------------------------------------------------------
    def add_sink(self, sink: RecordSink) -> None:
        """Also send every future CallRecord to `sink`."""
        self._sinks.append(sink)

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        *,
        purpose: Purpose = "answer",
        repetition: int = 0,
        prompt_digest: str | None = None,
    ) -> tuple[str | None, CallRecord]:
        """Chat completion. Returns (text, record); text is None when the record says failed."""
        started = time.monotonic()
        spec = self.spec
        messages = [dict(m) for m in messages]
        seed = spec.seed_for(repetition)
        base = dict(
            kind="chat", purpose=purpose, model=spec.model, base_url=spec.base_url,
            prompt_digest=prompt_digest, repetition=repetition, seed=seed,
        )
        fit = self._fit_window(messages)
        if not fit.fits:
            return None, self._emit(
                **base, request_digest=request_key(self._chat_payload(messages, repetition)),
                status="failed", reason="prompt_over_context_window",
                error=f"estimated prompt {estimate_prompt_tokens(messages)} tokens exceeds budget "
                f"{spec.prompt_budget} (context_window {spec.context_window} - max_tokens "
                f"{spec.max_tokens}; overflow policy {spec.overflow})",
                usage=Usage(estimated_prompt_tokens=estimate_prompt_tokens(messages)),
                latency_s=time.monotonic() - started,
            )
        messages, estimate = list(fit.messages), fit.prompt_tokens
        payload = self._chat_payload(messages, repetition)
        key = request_key(payload)
        base.update(request_digest=key, truncated_tokens=fit.dropped_tokens,
                    dropped_messages=fit.dropped_messages)

        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit.response["text"], self._emit(
                **base, status="ok", cached=True,
                usage=_usage(hit.usage, estimate), cost_usd=self._cost(None),
                finish_reason=hit.response.get("finish_reason"),
                response_model=hit.response.get("response_model"),
                latency_s=time.monotonic() - started,
            )

        outcome = self._with_retries(
            lambda sdk: _post(sdk, "/chat/completions", _send_args(payload), spec.timeout_s),
            _check_chat,
        )
        history = dict(attempts=outcome.attempts, faults=outcome.faults,
                       backoff_s=outcome.backoff_s)
        if outcome.body is None:
            return None, self._emit(
                **base, **history, status="failed", reason=outcome.reason, error=outcome.error,
                usage=Usage(estimated_prompt_tokens=estimate),
                latency_s=time.monotonic() - started,
            )
        body = outcome.body
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
        reported = body.get("usage") or {}
        response = {"text": text, "finish_reason": choice.get("finish_reason"),
                    "response_model": body.get("model")}
        if self.cache is not None:
            self.cache.put(key, kind="chat", base_url=spec.base_url, model=spec.model,
                           request=payload, response=response, usage=reported)
        return text, self._emit(
            **base, **history, status="ok", usage=_usage(reported, estimate),
            cost_usd=self._cost(reported), finish_reason=response["finish_reason"],
            response_model=response["response_model"], latency_s=time.monotonic() - started,
        )

    def forget(self, record: CallRecord) -> None:
        """Take a reply out of the cache (its reader could not use it): the next identical
        request goes to the endpoint again instead of repeating a transient bad reply."""
        if self.cache is not None and record.request_digest:
            self.cache.forget(record.request_digest)

    def complete_many(
        self, requests: Sequence[ChatRequest]
    ) -> list[tuple[str | None, CallRecord]]:
        """Run many chat calls on a thread pool no wider than the concurrency limit; keeps order."""
        if not requests:
            return []
        workers = min(len(requests), self.limit.limit)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lsrep-llm") as pool:
            return list(
                pool.map(
                    lambda r: self.complete(
                        r.messages, purpose=r.purpose, repetition=r.repetition,
                        prompt_digest=r.prompt_digest,
                    ),
                    requests,
                )
            )

    def embed(
        self, texts: Sequence[str], *, purpose: Purpose = "system", batch_size: int = 128
    ) -> tuple[np.ndarray, list[CallRecord]]:
        """Embedding rows as the endpoint returns them (cached per text).

        Raises :class:`LLMCallError` if any batch fails (its record is emitted first).
        """
        spec = self.spec
        texts = list(texts)
        keys = [request_key(self._embed_payload(t)) for t in texts]
        vectors: dict[str, list[float]] = {}
        records: list[CallRecord] = []
        started = time.monotonic()
        if self.cache is not None:
            vectors.update({k: c.response["vector"] for k, c in self.cache.get_many(keys).items()})
            if vectors:
                hit_texts = [t for t, k in zip(texts, keys, strict=True) if k in vectors]
                records.append(self._emit(
                    kind="embedding", purpose=purpose, model=spec.model, base_url=spec.base_url,
                    request_digest=request_key({"keys": sorted(set(k for k in keys if k in vectors))}),
                    status="ok", cached=True, cost_usd=self._cost(None),
                    usage=Usage(estimated_prompt_tokens=sum(estimate_tokens(t) for t in hit_texts)),
                    latency_s=time.monotonic() - started,
                ))
        missing = list(dict.fromkeys(
            (k, t) for t, k in zip(texts, keys, strict=True) if k not in vectors
        ))
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            batch_texts = [t for _, t in batch]
            t0 = time.monotonic()
            outcome = self._with_retries(
                lambda sdk, inputs=batch_texts: _post(
                    sdk, "/embeddings", {"model": spec.model, "input": inputs}, spec.timeout_s
                ),
                partial(_check_embeddings, expected=len(batch)),
            )
            estimate = sum(estimate_tokens(t) for t in batch_texts)
            common = dict(
                kind="embedding", purpose=purpose, model=spec.model, base_url=spec.base_url,
                request_digest=request_key({"keys": [k for k, _ in batch]}),
                attempts=outcome.attempts, faults=outcome.faults, backoff_s=outcome.backoff_s,
            )
            if outcome.body is None:
                record = self._emit(
                    **common, status="failed", reason=outcome.reason, error=outcome.error,
                    usage=Usage(estimated_prompt_tokens=estimate), latency_s=time.monotonic() - t0,
                )
                raise LLMCallError(record)
            reported = outcome.body.get("usage") or {}
            rows = sorted(outcome.body["data"], key=lambda d: d["index"])
            for (key, text), row in zip(batch, rows, strict=True):
                vectors[key] = row["embedding"]
                if self.cache is not None:
                    self.cache.put(key, kind="embedding", base_url=spec.base_url,
                                   model=spec.model, request=self._embed_payload(text),
                                   response={"vector": row["embedding"]}, usage={})
            records.append(self._emit(
                **common, status="ok", usage=_usage(reported, estimate),
                cost_usd=self._cost(reported), response_model=outcome.body.get("model"),
                latency_s=time.monotonic() - t0,
            ))
        matrix = np.asarray([vectors[k] for k in keys], dtype=np.float64)
        return matrix.reshape(len(texts), -1), records

    def as_language_model(self) -> SystemLanguageModel:
        """A `LanguageModel` for systems: purpose `system`, raises on failure."""
        return SystemLanguageModel(self)

    def close(self) -> None:
        """Release the SDK's connection pool."""
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None

    # -- internals ------------------------------------------------------------------------
    def _fit_window(self, messages: list[dict[str, str]]) -> MessageFit:
        """The messages to send under the window and overflow policy (`fits` False: refuse)."""
        budget = self.spec.prompt_budget
        estimate = estimate_prompt_tokens(messages)
        if budget is None or estimate <= budget or self.spec.overflow == "fail":
            # Hot path, trusted values: skip re-validating every message.
            return MessageFit.model_construct(
                messages=tuple(messages), dropped_messages=0, dropped_tokens=0,
                prompt_tokens=estimate, fits=budget is None or estimate <= budget,
            )
        return truncate_messages(messages, budget)

    def _chat_payload(self, messages: list[dict[str, str]], repetition: int) -> dict[str, Any]:
        spec = self.spec
        return {
            "kind": "chat",
            "base_url": spec.base_url,
            "model": spec.model,
            "messages": messages,
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "seed": spec.seed_for(repetition),
            # Greedy repetitions are the same request; sampled ones are distinct draws.
            "repetition": repetition if spec.sampled else None,
        }

    def _embed_payload(self, text: str) -> dict[str, Any]:
        return {"kind": "embedding", "base_url": self.spec.base_url, "model": self.spec.model,
                "input": text}

    def _client(self) -> openai.OpenAI:
        from lsrep.redact import register_secret

        key = self.spec.read_api_key()
        register_secret(key)
        with self._sdk_lock:
            if self._sdk is None or self._sdk.api_key != key:
                # A rotated key gets a new SDK client; the old one is left to finish its calls.
                # Plain-HTTP endpoints never use TLS: skip loading a CA bundle (~0.1 s a client).
                plain = self.spec.base_url.startswith("http://")
                self._sdk = openai.OpenAI(
                    base_url=self.spec.base_url, api_key=key, max_retries=0,
                    timeout=self.spec.timeout_s,
                    http_client=openai.DefaultHttpxClient(verify=False) if plain else None,
                )
            return self._sdk

    def _with_retries(
        self,
        send: Callable[[openai.OpenAI], Any],
        check: Callable[[Any], dict[str, Any]],
    ) -> _Attempted:
        faults: list[str] = []
        waits: list[float] = []
        attempts = 0
        while True:
            try:
                sdk = self._client()
            except MissingApiKey as exc:
                return _Attempted(None, attempts, tuple(faults), tuple(waits),
                                  "missing_api_key", str(exc))
            attempts += 1
            retry_after: float | None = None
            try:
                with self.limit.slot():
                    raw = send(sdk)
                    body = check(_json_body(raw.text))
                return _Attempted(body, attempts, tuple(faults), tuple(waits))
            except _Malformed as exc:
                fault, retryable, error = "malformed", True, str(exc)
            except openai.APITimeoutError as exc:
                fault, retryable, error = "timeout", True, _describe(exc)
            except openai.APIConnectionError as exc:
                fault, retryable, error = "connection", True, _describe(exc)
            except openai.APIStatusError as exc:
                status = exc.status_code
                fault, error = str(status), str(exc)
                retryable = status in (408, 409, 429) or status >= 500
                retry_after = _retry_after(exc.response.headers)
            from lsrep.redact import redact

            error = redact(error)
            faults.append(fault)
            if not retryable:
                return _Attempted(None, attempts, tuple(faults), tuple(waits),
                                  "request_rejected", error)
            if attempts > self.spec.max_retries:
                return _Attempted(None, attempts, tuple(faults), tuple(waits),
                                  "retries_exhausted", error)
            delay = self._backoff(attempts, retry_after)
            waits.append(delay)
            time.sleep(delay)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with equal jitter from the client's seeded RNG; honours Retry-After."""
        spec = self.spec
        with self._rng_lock:
            jitter = 0.5 + 0.5 * self._rng.random()
        delay = spec.backoff_base_s * 2 ** (attempt - 1) * jitter
        if retry_after is not None:
            delay = max(delay, retry_after)
        return round(min(delay, spec.backoff_max_s), 6)

    def _cost(self, reported: dict[str, Any] | None) -> float | None:
        if reported is None:  # cache hit: nothing spent now
            return None if self.spec.cost(0, 0) is None else 0.0
        return self.spec.cost(reported.get("prompt_tokens") or 0,
                              reported.get("completion_tokens") or 0)

    def _emit(self, **fields: Any) -> CallRecord:
        if fields.get("error"):
            from lsrep.redact import redact

            fields["error"] = redact(fields["error"])
        record = CallRecord(call_id=uuid.uuid4().hex, **fields)
        self.ledger.add(record)
        for sink in self._sinks:
            sink(record)
        return record


class SystemLanguageModel:
    """`lsrep.contract.LanguageModel` over an :class:`LLMClient`, for systems (purpose `system`).

    Failures raise :class:`LLMCallError`. Records also go to the client's sinks;
    `drain()` hands the harness the ones made since the last drain.
    """

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        text, record = self.client.complete(messages, purpose="system")
        with self._lock:
            self._records.append(record)
        if text is None:
            raise LLMCallError(record)
        return text

    def drain(self) -> list[CallRecord]:
        """Records of the calls made since the last drain, in completion order."""
        with self._lock:
            out, self._records = self._records, []
        return out

    def __repr__(self) -> str:
        return f"SystemLanguageModel({self.client!r})"


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__
    return f"{exc} ({type(cause).__name__}: {cause})" if cause else str(exc)


# The HTTP library the installed openai package is built on (httpx, or httpx2 in newer releases).
_HTTP = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])


def _post(sdk: openai.OpenAI, path: str, body: dict[str, Any], timeout: float) -> Any:
    """POST through the SDK (auth, base URL, error mapping) and return the raw HTTP response.

    The SDK's documented escape hatch for raw requests: the body is ours already,
    so its per-call request transformation and response models are skipped, and we
    read malformed bodies ourselves.
    """
    return sdk.post(path, cast_to=_HTTP.Response, body=body, options={"timeout": timeout})


def _send_args(payload: dict[str, Any]) -> dict[str, Any]:
    args = {k: payload[k] for k in ("model", "messages", "temperature", "max_tokens")}
    if payload["seed"] is not None:
        args["seed"] = payload["seed"]
    return args


def _json_body(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Malformed(f"response body is not JSON: {exc}") from None


def _check_chat(body: Any) -> dict[str, Any]:
    try:
        message = body["choices"][0]["message"]
        content = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise _Malformed("response has no choices[0].message") from None
    if content is not None and not isinstance(content, str):
        raise _Malformed("choices[0].message.content is not a string")
    return body


def _check_embeddings(body: Any, expected: int) -> dict[str, Any]:
    try:
        rows = body["data"]
        ok = len(rows) == expected and all(
            isinstance(r["embedding"], list) and isinstance(r["index"], int) for r in rows
        )
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise _Malformed(f"embedding response does not hold {expected} rows")
    return body


def _retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or HTTP date), if present."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _usage(reported: dict[str, Any], estimate: int) -> Usage:
    return Usage(
        estimated_prompt_tokens=estimate,
        prompt_tokens=reported.get("prompt_tokens"),
        completion_tokens=reported.get("completion_tokens"),
        total_tokens=reported.get("total_tokens"),
    )
