"""The Reasoner prompt: frozen memory, numbered evidence lines tagged with source indices,
then the question [CHOICE format, SEED content]."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .contracts import EvidenceWindow, MemorySnapshot

SYSTEM_PROMPT = (
    "Answer the question using only the numbered evidence and the read-only memory; "
    "cite evidence indices."
)
_EVIDENCE = re.compile(r"^\[(\d+)\] \(source (-?\d+)\) (.*)$")
_QUESTION = "Question: "


def build_messages(question: str, windows: Sequence[EvidenceWindow], snapshot: MemorySnapshot,
                   overflow_note: str | None = None) -> list[dict[str, str]]:
    """OpenAI-style messages for the one completion. Every window line gets its own tag."""
    memory = "\n".join(b.text for b in snapshot.bullets) or "(empty)"
    lines: list[str] = []
    for n, w in enumerate(windows, start=1):
        for offset, text in enumerate(w.text.splitlines() or [""]):
            index = w.source_index + offset if w.source_index >= 0 else w.source_index
            lines.append(f"[{n}] (source {index}) {' '.join(text.split())}")
    if overflow_note:
        lines.append(overflow_note)
    user = (f"Memory (read-only):\n{memory}\n\nEvidence:\n" + ("\n".join(lines) or "(none)")
            + f"\n\n{_QUESTION}{' '.join(question.split())}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def evidence_lines(messages: Sequence[dict[str, str]]) -> list[str]:
    """The evidence line texts of a prompt, in prompt order."""
    out = []
    for m in messages:
        if m.get("role") != "user":
            continue
        for line in m["content"].splitlines():
            hit = _EVIDENCE.match(line)
            if hit:
                out.append(hit.group(3))
    return out


def question_of(messages: Sequence[dict[str, str]]) -> str:
    """The question a prompt asks (its last `Question:` line)."""
    for m in reversed(messages):
        for line in reversed(m.get("content", "").splitlines()):
            if line.startswith(_QUESTION):
                return line[len(_QUESTION):]
    return ""
