"""What every model call leaves behind: a `CallRecord`, and running totals per purpose."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lsrep.llm.config import PURPOSES, Purpose

Fault = str
"""One failed attempt's cause: an HTTP status (`"429"`, `"500"`), `"timeout"`,
`"connection"` or `"malformed"` (a body that is not a valid completion)."""

FailureReason = Literal[
    "prompt_over_context_window",
    "retries_exhausted",
    "request_rejected",
    "missing_api_key",
]


class Usage(BaseModel):
    """Token counts for one call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    estimated_prompt_tokens: int = 0
    """The harness's estimate (lsrep.text.estimate_tokens over message contents)."""
    prompt_tokens: int | None = None
    """Prompt tokens the endpoint reported, if it did."""
    completion_tokens: int | None = None
    """Completion tokens the endpoint reported, if it did."""
    total_tokens: int | None = None
    """Total tokens the endpoint reported, if it did."""


class CallRecord(BaseModel):
    """One logical model call: every attempt, its faults, and the outcome. Holds no key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call_id: str
    """Unique id of this record, for linking it to an observation."""
    kind: Literal["chat", "embedding"] = "chat"
    """Which endpoint was called."""
    purpose: Purpose
    """What the call was for."""
    model: str
    """Model requested."""
    base_url: str
    """Endpoint root."""
    request_digest: str
    """SHA-256 of the request content and generation settings (the cache key)."""
    prompt_digest: str | None = None
    """Digest of the prompt template that produced the messages, if any."""
    repetition: int = 0
    """Repetition index of a sampled call (enters the seed and, when sampled, the key)."""
    seed: int | None = None
    """Seed sent with the request."""
    attempts: int = 0
    """Requests actually sent (0 for cache hits and calls refused before sending)."""
    faults: tuple[Fault, ...] = ()
    """Cause of each failed attempt, in order."""
    backoff_s: tuple[float, ...] = ()
    """Delay slept before each retry, in order."""
    status: Literal["ok", "failed"]
    """Whether a usable response came back."""
    reason: FailureReason | None = None
    """Why the call failed, when it did."""
    error: str | None = None
    """The last error message, when the call failed."""
    usage: Usage = Field(default_factory=Usage)
    """Token counts."""
    cost_usd: float | None = None
    """Spend of this call (0 for a cache hit); None when prices are not declared."""
    latency_s: float = 0.0
    """Wall time of the whole call, retries and backoff included."""
    cached: bool = False
    """Answered from the cache without contacting the endpoint."""
    finish_reason: str | None = None
    """The endpoint's finish reason (`stop`, `length`...), for chat calls."""
    response_model: str | None = None
    """Model name the endpoint reported."""
    truncated_tokens: int = 0
    """Estimated prompt tokens dropped by the `truncate_oldest` policy."""
    dropped_messages: int = 0
    """Messages dropped by the `truncate_oldest` policy."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ChatRequest(BaseModel):
    """One chat call for `complete_many`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[dict[str, str], ...]
    """OpenAI-style chat messages."""
    purpose: Purpose = "answer"
    """What the call is for."""
    repetition: int = 0
    """Repetition index (distinct seed and, when sampled, distinct cache entry)."""
    prompt_digest: str | None = None
    """Digest of the template that produced the messages, carried into the record."""


class LLMCallError(RuntimeError):
    """A model call failed; `record` says how."""

    def __init__(self, record: CallRecord) -> None:
        super().__init__(f"{record.purpose} call failed ({record.reason}): {record.error}")
        self.record = record


class PurposeTotals(BaseModel):
    """Running totals for one purpose."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    calls: int = 0
    cached: int = 0
    failed: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class UsageLedger:
    """Thread-safe totals of calls, tokens and spend, split by purpose."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = {p: dict.fromkeys(PurposeTotals.model_fields, 0) for p in PURPOSES}

    def add(self, record: CallRecord) -> None:
        billed = not record.cached
        with self._lock:
            t = self._totals[record.purpose]
            t["calls"] += 1
            t["cached"] += int(record.cached)
            t["failed"] += int(not record.ok)
            t["attempts"] += record.attempts
            t["prompt_tokens"] += (record.usage.prompt_tokens or 0) * billed
            t["completion_tokens"] += (record.usage.completion_tokens or 0) * billed
            t["cost_usd"] += record.cost_usd or 0.0

    def totals(self) -> dict[str, PurposeTotals]:
        """Totals per purpose (tokens and cost count only uncached calls)."""
        with self._lock:
            return {p: PurposeTotals(**t) for p, t in self._totals.items()}


def message_texts(messages: Sequence[dict[str, str]]) -> list[str]:
    """The content of each message, in order."""
    return [m.get("content") or "" for m in messages]
