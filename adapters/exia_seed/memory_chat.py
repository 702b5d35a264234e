"""EXIA's consolidation and summary calls on the condition's `[memory_llm]` (`setup.memory_llm`).

The seed calls its host's auxiliary client with the task name `exia_seed_consolidation` and
its own messages (systems/exia_seed/prompts.py); here the same messages go, unchanged, to the
memory model through the gateway (its temperature is the `[memory_llm]` table's, 0 unless set),
so every call is cached, limited and booked as a `memory_calls` row. The reply's text goes back to the consolidator, which parses or
salvages it: an unparseable reply is the consolidator's `consolidate.llm` `error` event (inputs
stay pending), never a silent skip. A reply with no text content is raised here, which the
consolidator records the same way (`erreur modèle`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class MemoryChat:
    """`complete(messages) -> str` over a `MemoryLLM` handle."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.model = llm.model

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        body = self.llm.chat([dict(m) for m in messages])
        choices = body.get("choices") if isinstance(body, dict) else None
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise ValueError(f"memory model {self.model!r} returned no text content "
                             f"(choices: {len(choices) if isinstance(choices, list) else 'none'})")
        return content
