"""Answering in context mode: the prompt every system's context goes into, and the offline answerer.

The extractive answerer is a real, deterministic answerer (THALIA's extractive
responder): it returns the context line sharing the most distinct content words
with the question, ties to the earliest line, and abstains when no line shares
a content word. Every report labels it as such.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from lsrep.contract import Fragment
from lsrep.text import content_tokens, estimate_tokens

ABSTAIN_TEXT = "I don't know."

ANSWER_TEMPLATE_NAME = "lsrep-context-answer"
ANSWER_TEMPLATE_VERSION = "1"
ANSWER_SYSTEM = (
    "You answer questions about a long conversation using only the memory context provided. "
    "Answer briefly. If the context does not contain the answer, reply exactly: I don't know."
)
ANSWER_USER = "Current date and time: {now}\n\nMemory context:\n{context}\n\nQuestion: {question}\nAnswer:"
ANSWER_TEMPLATE_DIGEST = hashlib.sha256(
    f"{ANSWER_TEMPLATE_NAME}\n{ANSWER_TEMPLATE_VERSION}\n{ANSWER_SYSTEM}\n{ANSWER_USER}".encode()
).hexdigest()


def render_context(fragments: Sequence[Fragment]) -> str:
    """Context block: one fragment after another, separated by blank lines."""
    return "\n\n".join(f.text for f in fragments) if fragments else "(no memory returned)"


def build_messages(question: str, now: datetime, fragments: Sequence[Fragment]) -> list[dict[str, str]]:
    """The answer prompt, identical for every system in a campaign."""
    user = ANSWER_USER.format(now=now.isoformat(), context=render_context(fragments), question=question)
    return [{"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": user}]


def prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
    """The harness's estimate of a prompt's size."""
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)


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
