"""Bridge: the engine's context-mode `Answerer` (lsrep.answer.base) answered by a model endpoint.

The engine's base class builds the prompt and applies the answerer's window and
overflow policy; this class only sends the messages through :class:`LLMClient`
(purpose `answer`) and hands back the CallRecord as a dict for the store. It
also gives systems their model (purpose `system`) on the same endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsrep.answer.base import Answerer, AnswerOutcome
from lsrep.contract import Fragment
from lsrep.llm.client import SystemLanguageModel
from lsrep.protocol.campaign import AnswererSpec


def role_window(spec: AnswererSpec) -> tuple[AnswererSpec, Any]:
    """The answerer's spec and endpoint under one window: the answerer's own when it sets one (or
    the endpoint sets none), else the endpoint's — never an endpoint default over the role.

    The answerer's `context_window` bounds the prompt (the harness's estimate); the client's
    window also holds the reserved completion (`max_tokens`), so it is that much larger.
    """
    from lsrep.llm.config import EndpointSpec

    endpoint = spec.endpoint
    EndpointSpec.of(endpoint)  # the table as written must be valid (e.g. its window above max_tokens)
    if "context_window" in spec.model_fields_set or "context_window" not in endpoint.model_fields_set:
        prompt_window = spec.context_window
    else:
        prompt_window = endpoint.context_window - endpoint.max_tokens
    return (spec.model_copy(update={"context_window": prompt_window}),
            endpoint.model_copy(update={"context_window": prompt_window + endpoint.max_tokens}))


class LLMAnswerer(Answerer):
    """Context-mode answers from an OpenAI-compatible endpoint."""

    version = "1"

    def __init__(self, spec: AnswererSpec, *, store_path: str | None = None,
                 refresh_before: str | None = None) -> None:
        if spec.endpoint is None:
            raise ValueError("answerer kind 'llm' needs an endpoint")
        spec, endpoint = role_window(spec)
        super().__init__(spec)
        from lsrep.judge.campaign import make_client

        # One response cache and one cross-process concurrency limit per store folder.
        self.client = make_client(endpoint, store_path, refresh_before=refresh_before)
        self.name = f"llm:{self.client.spec.model}"
        self._system_llm: SystemLanguageModel | None = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(),
                "endpoint": self.client.spec.model_dump(mode="json")}

    def system_llm(self) -> SystemLanguageModel:
        if self._system_llm is None:
            self._system_llm = self.client.as_language_model()
        return self._system_llm

    def _complete(
        self, question: str, messages: list[dict[str, str]], fragments: Sequence[Fragment]
    ) -> AnswerOutcome:
        text, record = self.client.complete(
            messages, purpose="answer", prompt_digest=self.template_digest
        )
        return AnswerOutcome(
            text=text, prompt_tokens=0, within_limit=True, fragments_used=fragments,
            usage_prompt_tokens=record.usage.prompt_tokens,
            usage_completion_tokens=record.usage.completion_tokens,
            error=None if record.ok else f"{record.reason}: {record.error}",
            calls=[record.model_dump(mode="json")],
        )
