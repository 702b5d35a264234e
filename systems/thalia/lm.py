"""The one-method language-model protocol and the offline extractive responder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .prompt import evidence_lines, question_of
from .text import distinct_tokens


class LMClient(Protocol):
    """Anything that turns chat messages into assistant text."""

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class ExtractiveLM:
    """THALIA's default responder [SEED]: the evidence line sharing the most distinct
    lowercase alphanumeric tokens with the question; ties to the earliest line in prompt
    order; "" when the prompt has no evidence lines."""

    name = "thalia-extractive"

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        lines = evidence_lines(messages)
        if not lines:
            return ""
        wanted = distinct_tokens(question_of(messages))
        best, best_overlap = lines[0], -1
        for line in lines:
            overlap = len(wanted & distinct_tokens(line))
            if overlap > best_overlap:
                best, best_overlap = line, overlap
        return best


class CallableLM:
    """Wrap any `Callable[[messages], str]` as an LMClient."""

    def __init__(self, fn: Callable[[Sequence[dict[str, str]]], str], name: str = "callable") -> None:
        self.fn = fn
        self.name = name

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        return self.fn(messages)
