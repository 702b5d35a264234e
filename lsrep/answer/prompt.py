"""Answering in context mode: the prompt every system's context goes into.

The offline answerer that reads the same prompt content lives in
`lsrep.answer.extractive`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from lsrep.contract import Fragment
from lsrep.prompts import ANSWER_CONTEXT
from lsrep.text import estimate_tokens

ANSWER_TEMPLATE_NAME = ANSWER_CONTEXT.name
ANSWER_TEMPLATE_VERSION = ANSWER_CONTEXT.version
ANSWER_TEMPLATE_DIGEST = ANSWER_CONTEXT.digest
NO_CONTEXT = "(no context was returned)"


def render_answer_messages(question: str, now: str, blocks: Sequence[str],
                           system_block: str | None = None) -> list[dict[str, str]]:
    """The answer prompt: the question, the simulated now and the context blocks in order.

    `system_block`, when given, is the memory context verbatim (the block a system formats itself,
    campaign `context_format = "system"`), in place of the numbered blocks.
    """
    if system_block:
        context = system_block
    else:
        context = "\n\n".join(f"[{i}] {b}" for i, b in enumerate(blocks, start=1)) or NO_CONTEXT
    return ANSWER_CONTEXT.render(question=question, now=now, context=context)


def build_messages(question: str, now: datetime, fragments: Sequence[Fragment],
                   system_block: str | None = None) -> list[dict[str, str]]:
    """The answer prompt, identical for every system in a campaign (with `context_format =
    "harness"`); with a `system_block`, that block is the memory context."""
    return render_answer_messages(question, now.isoformat(), [f.text for f in fragments], system_block)


def prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
    """The harness's estimate of a prompt's size (characters / 4 over every message's content)."""
    return sum(estimate_tokens(m.get("content") or "") for m in messages)
