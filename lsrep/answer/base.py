"""Answerers the engine calls in context mode: the offline extractive one, or a model endpoint.

Both build the same prompt (`lsrep.answer.prompt.build_messages`), so prompt size and
context-window handling are measured identically whoever answers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.answer.prompt import ANSWER_TEMPLATE_DIGEST, build_messages, prompt_tokens
from lsrep.contract import Fragment
from lsrep.protocol.campaign import AnswererSpec
from lsrep.text import estimate_tokens


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
    context_source: str = "harness"
    """`system`: the prompt held the system's own block; `harness`: the numbered fragments."""


def fit_to_window(question: str, now: datetime, fragments: Sequence[Fragment], window: int,
                  turn_index: Mapping[str, int] | None = None) -> tuple[list[Fragment], int]:
    """Drop the oldest fragments (by their earliest source turn) until the prompt fits.

    Returns the kept fragments in their original order and the dropped tokens.
    """
    from lsrep.llm.context import fit_blocks

    def age(i: int) -> int:
        ids = fragments[i].source_turn_ids
        if not turn_index or not ids:
            return -1  # unattributed context cannot be dated: it goes first
        return min(turn_index.get(t, -1) for t in ids)

    oldest_first = sorted(range(len(fragments)), key=lambda i: (age(i), i))

    def render(kept_keys: Sequence[str]) -> list[dict[str, str]]:
        kept = sorted(int(k) for k in kept_keys)
        return build_messages(question, now, [fragments[i] for i in kept])

    fit = fit_blocks([str(i) for i in oldest_first], render, window)
    kept = sorted(int(k) for k in fit.kept)
    dropped = sum(estimate_tokens(fragments[i].text) for i in range(len(fragments)) if i not in set(kept))
    return [fragments[i] for i in kept], dropped


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

    def drain_system_calls(self) -> list[dict[str, Any]]:
        """Records of systems' internal model calls since the last drain (as dicts)."""
        llm = self.system_llm()
        if llm is None or not hasattr(llm, "drain"):
            return []
        return [r.model_dump(mode="json") for r in llm.drain()]

    def answer(self, question: str, now: datetime, fragments: Sequence[Fragment],
               turn_index: Mapping[str, int] | None = None, *, block: str | None = None) -> AnswerOutcome:
        """Answer from `fragments`, or from the system's own `block` where one is given.

        A block is opaque, so it cannot be cut: when it does not fit the window (and overflow is not
        `fail`) the prompt falls back to the harness's fragments, cut to fit, and the outcome says
        `context_source = "harness"` with the tokens dropped against the block.
        """
        start = time.perf_counter()
        messages = build_messages(question, now, fragments, block)
        size = prompt_tokens(messages)
        used: Sequence[Fragment] = fragments
        dropped = 0
        source = "system" if block else "harness"
        if size > self.spec.context_window:
            if self.spec.overflow == "fail":
                return AnswerOutcome(
                    text=None, prompt_tokens=size, within_limit=False, fragments_used=fragments,
                    error=f"prompt_over_context_window: {size} > {self.spec.context_window} tokens",
                    context_source=source,
                )
            used, dropped = fit_to_window(question, now, fragments, self.spec.context_window, turn_index)
            messages = build_messages(question, now, used)
            if block:
                dropped = max(0, size - prompt_tokens(messages))
                source = "harness"
        outcome = self._complete(question, messages, used)
        outcome.prompt_tokens = size
        outcome.within_limit = size <= self.spec.context_window
        outcome.dropped_tokens = dropped
        outcome.fragments_used = used
        outcome.context_source = source
        outcome.elapsed_ms = (time.perf_counter() - start) * 1000
        return outcome

    def _complete(self, question: str, messages: list[dict[str, str]], fragments: Sequence[Fragment]) -> AnswerOutcome:
        raise NotImplementedError


class OfflineAnswerer(Answerer):
    """The deterministic span answerer (`lsrep.answer.extractive`, labelled `extractive-offline`).

    It reads what the prompt holds: the question, the simulated now and the fragments kept.
    """

    def __init__(self, spec: AnswererSpec) -> None:
        super().__init__(spec)
        self._impl = ExtractiveAnswerer(min_overlap=spec.min_overlap)
        self.name, self.version = self._impl.name, self._impl.version
        self._local = threading.local()  # the probe's simulated now, per answering thread

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rules": self._impl.rules}

    def answer(self, question: str, now: datetime, fragments: Sequence[Fragment],
               turn_index: Mapping[str, int] | None = None, *, block: str | None = None) -> AnswerOutcome:
        # The span answerer reads the fragments' text either way: a system block's framing (a
        # fence, a system note, tool-JSON keys) carries no answer; the prompt size counts the block.
        self._local.now = now
        return super().answer(question, now, fragments, turn_index, block=block)

    def _complete(self, question, messages, fragments) -> AnswerOutcome:
        return AnswerOutcome(text=self._impl.answer(question, fragments, getattr(self._local, "now", None)),
                             prompt_tokens=0,
                             within_limit=True, fragments_used=fragments)
