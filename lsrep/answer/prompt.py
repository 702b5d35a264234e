"""Answering in context mode: the prompt every system's context goes into, and the offline answerer.

The extractive answerer is a real, deterministic answerer (THALIA's extractive
responder): it returns the context line sharing the most distinct content words
with the question, ties to the earliest line, and abstains when no line shares
a content word. Every report labels it as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from lsrep.contract import Fragment
from lsrep.prompts import ANSWER_CONTEXT
from lsrep.text import content_tokens, estimate_tokens

ABSTAIN_TEXT = "I don't know."

ANSWER_TEMPLATE_NAME = ANSWER_CONTEXT.name
ANSWER_TEMPLATE_VERSION = ANSWER_CONTEXT.version
ANSWER_TEMPLATE_DIGEST = ANSWER_CONTEXT.digest
NO_CONTEXT = "(no context was returned)"


def render_answer_messages(question: str, now: str, blocks: Sequence[str]) -> list[dict[str, str]]:
    """The answer prompt: the question, the simulated now and the context blocks in order."""
    context = "\n\n".join(f"[{i}] {b}" for i, b in enumerate(blocks, start=1)) or NO_CONTEXT
    return ANSWER_CONTEXT.render(question=question, now=now, context=context)


def build_messages(question: str, now: datetime, fragments: Sequence[Fragment]) -> list[dict[str, str]]:
    """The answer prompt, identical for every system in a campaign."""
    return render_answer_messages(question, now.isoformat(), [f.text for f in fragments])


def prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
    """The harness's estimate of a prompt's size (characters / 4 over every message's content)."""
    return sum(estimate_tokens(m.get("content") or "") for m in messages)


@dataclass(frozen=True)
class ExtractiveAnswerer:
    """Offline deterministic answerer (labelled `extractive-offline` in every output)."""

    name: str = "extractive-offline"
    version: str = "1"
    min_overlap: int = 2
    """Shared content words a line needs (capped at the question's own count). With 1 this is
    THALIA's rule exactly; 2 stops a name present in every line (the speaker's) from
    answering every question about that person."""

    def answer(self, question: str, fragments: Sequence[Fragment]) -> str:
        wanted = content_tokens(question)
        need = max(1, min(self.min_overlap, len(wanted)))
        best, best_overlap = None, 0
        for fragment in fragments:
            for line in fragment.text.splitlines():
                overlap = len(wanted & content_tokens(line))
                if overlap > best_overlap:
                    best, best_overlap = line.strip(), overlap
        return best if best and best_overlap >= need else ABSTAIN_TEXT
