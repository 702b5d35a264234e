"""A context window set for the answerer is the one used, not the endpoint table's default."""

from __future__ import annotations

from lsrep.answer.model import LLMAnswerer
from lsrep.protocol.campaign import AnswererSpec

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": ""}


def _windows(**answerer) -> tuple[int, int | None]:
    """(the answerer's prompt window, the client's prompt budget: its window less max_tokens)."""
    llm = LLMAnswerer(AnswererSpec.model_validate({"kind": "llm", **answerer}))
    return llm.spec.context_window, llm.client.spec.prompt_budget


def test_the_answerers_window_wins_over_the_endpoints_default():
    assert _windows(context_window=20000, endpoint=ENDPOINT) == (20000, 20000)
    assert _windows(endpoint=ENDPOINT) == (32768, 32768)  # the answerer's default, not the endpoint's 8192


def test_the_answerers_window_wins_over_an_explicit_endpoint_window():
    assert _windows(context_window=20000, endpoint={**ENDPOINT, "context_window": 4096}) == (20000, 20000)


def test_an_endpoint_window_applies_when_the_answerer_sets_none():
    assert _windows(endpoint={**ENDPOINT, "context_window": 4096}) == (4096 - 256, 4096 - 256)
