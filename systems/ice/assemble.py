"""Prompt assembly: persistent slots, retrieved fragments, recent turns, the live message.

Every fragment carries the mechanisms that produced it; a fragment without any would be
counted as unattributable (the paper's audit found 34.5%; here it must be 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from .episodic import StoredTurn
from .legs import Candidate
from .text import estimate_tokens

SYSTEM_PREAMBLE = ("You are a helpful assistant with a long-term memory of this user. "
                   "Use the memory below when it is relevant; it may be incomplete.")


@dataclass(frozen=True)
class ContextFragment:
    """One block of the assembled context, in prompt order."""

    id: str
    text: str
    kind: str
    """`slot`, `memory` or `recent`."""
    source_type: str
    mechanisms: tuple[str, ...]
    source_turn_ids: tuple[str, ...]
    score: float | None = None
    conversation_id: str | None = None

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass(frozen=True)
class Assembly:
    fragments: tuple[ContextFragment, ...]
    context_text: str
    messages: tuple[dict[str, str], ...]
    block_tokens: dict[str, int]
    unattributable: int
    without_source_turns: int


def recent_window(turns: list[StoredTurn], cap_tokens: int) -> tuple[list[StoredTurn], int]:
    """Newest turns going back while they fit in cap_tokens; (window oldest first, dropped)."""
    window: list[StoredTurn] = []
    used = 0
    for turn in reversed(turns):
        if used + turn.tokens > cap_tokens:
            break
        window.append(turn)
        used += turn.tokens
    dropped = sum(t.tokens for t in turns[: len(turns) - len(window)])
    return list(reversed(window)), dropped


def fit_slots(slots: list[tuple[str, str]], ceiling: int | None) -> list[ContextFragment]:
    out: list[ContextFragment] = []
    used = 0
    for key, value in slots:
        frag = ContextFragment(id=f"slot:{key}", text=f"{key}: {value}", kind="slot",
                               source_type="slot", mechanisms=("slots",), source_turn_ids=())
        if ceiling is not None and used + frag.tokens > ceiling:
            break
        out.append(frag)
        used += frag.tokens
    return out


def assemble(slots: list[ContextFragment], memory: list[Candidate], recent: list[StoredTurn],
             message: str) -> Assembly:
    """Order the blocks, render the context text and the chat messages."""
    frags: list[ContextFragment] = list(slots)
    frags += [ContextFragment(id=c.id, text=c.text, kind="memory", source_type=c.source_type,
                              mechanisms=c.attribution(), source_turn_ids=c.source_turn_ids,
                              score=round(c.score, 8), conversation_id=c.conversation_id)
              for c in memory]
    frags += [ContextFragment(id=f"recent:{t.turn_id}", text=t.render(), kind="recent",
                              source_type="episodic", mechanisms=("recent_window",),
                              source_turn_ids=(t.turn_id,), conversation_id=t.conversation_id)
              for t in recent]
    sections = []
    for kind, title in (("slot", "Memory slots"), ("memory", "Retrieved memory"),
                        ("recent", "Recent conversation")):
        lines = [f"- {f.text}" for f in frags if f.kind == kind]
        if lines:
            sections.append(f"## {title}\n" + "\n".join(lines))
    context_text = "\n\n".join(sections)
    system = SYSTEM_PREAMBLE + ("\n\n" + "\n\n".join(
        s for s in sections if not s.startswith("## Recent")) if sections else "")
    messages = [{"role": "system", "content": system}]
    messages += [{"role": "assistant" if t.role == "assistant" else "user", "content": t.content}
                 for t in recent]
    messages.append({"role": "user", "content": message})
    block_tokens = {
        kind: sum(f.tokens for f in frags if f.kind == kind) for kind in ("slot", "memory", "recent")
    }
    block_tokens["live_message"] = estimate_tokens(message)
    block_tokens["prompt_total"] = sum(estimate_tokens(m["content"]) for m in messages)
    return Assembly(
        fragments=tuple(frags), context_text=context_text, messages=tuple(messages),
        block_tokens=block_tokens,
        unattributable=sum(1 for f in frags if not f.mechanisms),
        without_source_turns=sum(1 for f in frags if not f.source_turn_ids),
    )
