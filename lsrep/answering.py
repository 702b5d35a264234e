"""Answerers the engine calls in context mode: the offline extractive one, or a model endpoint.

Both build the same prompt (`lsrep.answerer.build_messages`), so prompt size and
context-window handling are measured identically whoever answers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lsrep.answerer import (
    ANSWER_TEMPLATE_DIGEST,
    ExtractiveAnswerer,
    build_messages,
    prompt_tokens,
)
from lsrep.contract import Fragment
from lsrep.protocol.campaign import AnswererSpec


@dataclass
class AnswerOutcome:
    """What answering one probe produced."""

    text: str | None
    prompt_tokens: int
    within_limit: bool
    fragments_used: Sequence[Fragment]
    dropped_tokens: int = 0
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None
    elapsed_ms: float = 0.0
    error: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)


def fit_to_window(question: str, now: datetime, fragments: Sequence[Fragment], window: int,
                  turn_index: dict[str, int] | None = None) -> tuple[list[Fragment], int]:
    """Drop the oldest fragments until the prompt fits; return kept fragments and dropped tokens."""
    kept = list(fragments)

    def age(frag: Fragment) -> int:
        if not turn_index or not frag.source_turn_ids:
            return -1
        return min(turn_index.get(t, -1) for t in frag.source_turn_ids)

    dropped = 0
    order = sorted(range(len(kept)), key=lambda i: (age(kept[i]), i))
    removed: set[int] = set()
    for i in order:
        if prompt_tokens(build_messages(question, now, [f for j, f in enumerate(kept) if j not in removed])) <= window:
            break
        removed.add(i)
        dropped += prompt_tokens([{"role": "user", "content": kept[i].text}]) - 4
    return [f for j, f in enumerate(kept) if j not in removed], dropped


class Answerer:
    """Base: answer a question from fragments under the declared context window."""

    name = "answerer"
    version = "0"
    template_digest = ANSWER_TEMPLATE_DIGEST

    def __init__(self, spec: AnswererSpec) -> None:
        self.spec = spec

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "template_digest": self.template_digest,
                "context_window": self.spec.context_window, "overflow": self.spec.overflow,
                "min_overlap": self.spec.min_overlap if self.spec.kind == "extractive" else None}

    def system_llm(self) -> Any:
        """Model handed to systems for their internal calls (None: their offline stand-ins)."""
        return None

    def answer(self, question: str, now: datetime, fragments: Sequence[Fragment]) -> AnswerOutcome:
        start = time.perf_counter()
        messages = build_messages(question, now, fragments)
        size = prompt_tokens(messages)
        used: Sequence[Fragment] = fragments
        dropped = 0
        if size > self.spec.context_window:
            if self.spec.overflow == "fail":
                return AnswerOutcome(
                    text=None, prompt_tokens=size, within_limit=False, fragments_used=fragments,
                    error=f"prompt_over_context_window: {size} > {self.spec.context_window} tokens",
                )
            used, dropped = fit_to_window(question, now, fragments, self.spec.context_window)
            messages = build_messages(question, now, used)
        outcome = self._complete(question, messages, used)
        outcome.prompt_tokens = size
        outcome.within_limit = size <= self.spec.context_window
        outcome.dropped_tokens = dropped
        outcome.fragments_used = used
        outcome.elapsed_ms = (time.perf_counter() - start) * 1000
        return outcome

    def _complete(self, question: str, messages: list[dict[str, str]], fragments: Sequence[Fragment]) -> AnswerOutcome:
        raise NotImplementedError


class OfflineAnswerer(Answerer):
    """The deterministic extractive answerer (labelled `extractive-offline`)."""

    def __init__(self, spec: AnswererSpec) -> None:
        super().__init__(spec)
        self._impl = ExtractiveAnswerer(min_overlap=spec.min_overlap)
        self.name, self.version = self._impl.name, self._impl.version

    def _complete(self, question, messages, fragments) -> AnswerOutcome:
        return AnswerOutcome(text=self._impl.answer(question, fragments), prompt_tokens=0, within_limit=True,
                             fragments_used=fragments)


def make_answerer(spec: AnswererSpec) -> Answerer:
    if spec.kind == "extractive":
        return OfflineAnswerer(spec)
    from lsrep.llm.answering import LLMAnswerer

    return LLMAnswerer(spec)
