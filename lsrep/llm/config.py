"""How to reach one OpenAI-compatible endpoint, as a recreatable spec.

The API key is never part of the spec: `api_key_env` names the environment
variable that holds it, and the client reads that variable at call time.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Purpose = Literal["answer", "judge", "system"]
"""What a call is for; usage and cost are split by it."""

PURPOSES: tuple[str, ...] = ("answer", "judge", "system")

OverflowPolicy = Literal["fail", "truncate_oldest"]
"""What to do when a prompt does not fit the context window."""

NO_KEY = "no-key"
"""Placeholder sent to endpoints that need no key (local servers); not a secret."""


class MissingApiKey(RuntimeError):
    """The environment variable named by `api_key_env` is unset or empty."""


class EndpointSpec(BaseModel):
    """One model on one OpenAI-compatible endpoint, with its generation and call settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """Endpoint root including the version path, e.g. `http://127.0.0.1:8080/v1`."""
    model: str
    """Model name sent with every request."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key; None (or "") for endpoints without auth."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature; 0 is treated as deterministic for caching."""
    max_tokens: int = Field(default=256, ge=1)
    """Completion token limit per call; reserved out of the context window."""
    seed: int | None = 0
    """Base seed sent with each request (sampled repetition k sends seed + k); None sends none."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Per-attempt request timeout."""
    max_retries: int = Field(default=4, ge=0)
    """Retries after the first attempt on 429, 5xx, timeouts, connection errors, malformed bodies."""
    backoff_base_s: float = Field(default=0.5, ge=0)
    """First backoff delay; doubles per retry, with jitter."""
    backoff_max_s: float = Field(default=30.0, ge=0)
    """Cap on any single backoff delay, Retry-After included."""
    concurrency: int = Field(default=4, ge=1)
    """Most requests in flight to this endpoint at once."""
    context_window: int | None = Field(default=None, ge=1)
    """Model context (prompt + completion tokens); None means unchecked."""
    overflow: OverflowPolicy = "fail"
    """Policy when the estimated prompt exceeds `context_window - max_tokens`."""
    price_prompt_per_1k: float | None = Field(default=None, ge=0)
    """USD per 1,000 prompt tokens, if known."""
    price_completion_per_1k: float | None = Field(default=None, ge=0)
    """USD per 1,000 completion tokens, if known."""

    @classmethod
    def of(cls, endpoint: BaseModel | EndpointSpec) -> EndpointSpec:
        """An EndpointSpec from a campaign's endpoint table (same field names; unknown ones fail)."""
        if isinstance(endpoint, cls):
            return endpoint
        return cls.model_validate(endpoint.model_dump())

    @model_validator(mode="after")
    def _window_holds_completion(self) -> EndpointSpec:
        if self.context_window is not None and self.context_window <= self.max_tokens:
            raise ValueError("context_window must exceed max_tokens (the completion is reserved)")
        return self

    @property
    def prompt_budget(self) -> int | None:
        """Largest estimated prompt that fits: the window less the reserved completion."""
        if self.context_window is None:
            return None
        return self.context_window - self.max_tokens

    @property
    def sampled(self) -> bool:
        """Whether repetitions can differ (temperature above zero)."""
        return self.temperature > 0

    def seed_for(self, repetition: int) -> int | None:
        """Seed sent for a repetition: offset by it only when sampling, so greedy calls share one."""
        if self.seed is None:
            return None
        return self.seed + repetition if self.sampled else self.seed

    def read_api_key(self) -> str:
        """The key from the environment, read now; a placeholder when the endpoint needs none."""
        if not self.api_key_env:  # None or "": a keyless local server
            return NO_KEY
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise MissingApiKey(f"environment variable {self.api_key_env} is not set")
        return key

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD cost of a call, or None when prices are not declared."""
        if self.price_prompt_per_1k is None and self.price_completion_per_1k is None:
            return None
        return (
            prompt_tokens / 1000 * (self.price_prompt_per_1k or 0.0)
            + completion_tokens / 1000 * (self.price_completion_per_1k or 0.0)
        )
