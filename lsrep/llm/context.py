"""Prompt size against a context window: estimate, and drop the oldest blocks when asked.

Nothing here is silent: every helper reports what it dropped, and a prompt that
cannot be made to fit says so instead of being sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from lsrep.text import estimate_tokens

Messages = Sequence[dict[str, str]]


def estimate_prompt_tokens(messages: Messages) -> int:
    """The harness's prompt estimate: estimate_tokens over each message's content, summed."""
    return sum(estimate_tokens(m.get("content") or "") for m in messages)


class BlockFit(BaseModel):
    """Which context blocks survived a budget, oldest dropped first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kept: tuple[str, ...]
    """Blocks kept, in their original order."""
    dropped_blocks: int
    """How many of the oldest blocks were dropped."""
    dropped_tokens: int
    """Estimated tokens of the dropped blocks."""
    prompt_tokens: int
    """Estimated tokens of the prompt rendered from the kept blocks."""
    fits: bool
    """Whether that prompt is within the budget (False only if nothing more can go)."""


def fit_blocks(
    blocks: Sequence[str],
    render: Callable[[Sequence[str]], Messages],
    budget: int | None,
) -> BlockFit:
    """Drop the fewest oldest blocks (the list is oldest first) so the rendered prompt fits.

    `render` builds the messages from a list of blocks; the estimate is taken on
    what it renders, so separators and numbering are counted exactly once.
    """
    blocks = list(blocks)

    def size(dropped: int) -> int:
        return estimate_prompt_tokens(render(blocks[dropped:]))

    if budget is None or size(0) <= budget:
        return BlockFit(kept=tuple(blocks), dropped_blocks=0, dropped_tokens=0,
                        prompt_tokens=size(0), fits=True)
    # Fewer blocks never render larger, so the smallest fitting drop count is found by bisection.
    lo, hi = 1, len(blocks)
    if size(hi) > budget:
        lo = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if size(mid) <= budget:
            hi = mid
        else:
            lo = mid + 1
    tokens = size(lo)
    return BlockFit(
        kept=tuple(blocks[lo:]),
        dropped_blocks=lo,
        dropped_tokens=sum(estimate_tokens(b) for b in blocks[:lo]),
        prompt_tokens=tokens,
        fits=tokens <= budget,
    )


class MessageFit(BaseModel):
    """Chat messages after dropping the oldest droppable ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[dict[str, str], ...]
    """Messages kept, in order."""
    dropped_messages: int
    """Messages dropped."""
    dropped_tokens: int
    """Estimated tokens dropped."""
    prompt_tokens: int
    """Estimated tokens of the kept messages."""
    fits: bool
    """Whether the kept messages are within the budget."""


def truncate_messages(messages: Messages, budget: int) -> MessageFit:
    """Drop the oldest messages between the leading system messages and the last message.

    For raw chat histories (a system calling the model directly); prompts built
    from context blocks should use :func:`fit_blocks` before rendering instead.
    """
    messages = list(messages)
    head = 0
    while head < len(messages) - 1 and messages[head].get("role") == "system":
        head += 1
    middle = messages[head:-1] if messages else []
    dropped = 0
    dropped_tokens = 0
    while dropped < len(middle):
        kept = messages[:head] + middle[dropped:] + messages[-1:]
        if estimate_prompt_tokens(kept) <= budget:
            break
        dropped_tokens += estimate_tokens(middle[dropped].get("content") or "")
        dropped += 1
    kept = messages[:head] + middle[dropped:] + messages[-1:]
    tokens = estimate_prompt_tokens(kept)
    return MessageFit(
        messages=tuple(kept),
        dropped_messages=dropped,
        dropped_tokens=dropped_tokens,
        prompt_tokens=tokens,
        fits=tokens <= budget,
    )
