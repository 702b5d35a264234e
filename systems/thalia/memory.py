"""MEMORY.md: derived, gated, source-cited bullets, and the frozen snapshot the Reasoner reads.

A delta is one bullet `- <fact> (source: turn <t>, <YYYY-MM-DD>)` [CHOICE]. It replaces
an existing bullet whose content-token Jaccard with the new fact is at least the threshold
(update_memory, keeping the old source as `(was: ...)`), else it is appended (append_memory).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .contracts import Bullet, ConsolidationAction, MemorySnapshot
from .text import content_tokens

HEADER = "# MEMORY\n"
_SOURCE = re.compile(r"\s*\(source: turn (\d+), ([0-9-]+)\)")
_WAS = re.compile(r"\s*\(was: [^)]*\)\s*$")


def bullet_fact(text: str) -> str:
    """The fact of a bullet line, without `- `, its source and any `(was: ...)` note."""
    body = _WAS.sub("", text.removeprefix("- "))
    return _SOURCE.sub("", body).strip()


def jaccard(a: str, b: str) -> float:
    ta, tb = content_tokens(a), content_tokens(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def parse_bullets(text: str) -> tuple[Bullet, ...]:
    out = []
    for n, line in enumerate(text.splitlines()):
        if line.startswith("- "):
            src = _SOURCE.search(line)
            out.append(Bullet(text=line, source_turn=int(src.group(1)) if src else None, line_no=n))
    return tuple(out)


def make_snapshot(text: str) -> MemorySnapshot:
    return MemorySnapshot(text=text, bullets=parse_bullets(text),
                          digest=hashlib.sha256(text.encode()).hexdigest())


@dataclass(frozen=True)
class Delta:
    """A planned MEMORY.md change, decided before anything is written."""

    action: ConsolidationAction
    bullet: str
    replaced: str | None = None


class MemoryFile:
    """The MEMORY.md file; written whole through a temporary file and a rename."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8") if self.path.exists() else ""

    def snapshot(self) -> MemorySnapshot:
        return make_snapshot(self.read())

    def plan(self, fact: str, turn_id: int, when: datetime, threshold: float) -> Delta:
        bullet = f"- {' '.join(fact.split())} (source: turn {turn_id}, {when.strftime('%Y-%m-%d')})"
        for b in parse_bullets(self.read()):
            if jaccard(bullet_fact(b.text), fact) >= threshold:
                src = _SOURCE.search(b.text)
                was = f"turn {src.group(1)}, {src.group(2)}" if src else "unsourced"
                return Delta("update_memory", f"{bullet} (was: {was})", replaced=b.text)
        return Delta("append_memory", bullet)

    def apply(self, delta: Delta) -> None:
        text = self.read() or HEADER + "\n"
        if delta.action == "update_memory" and delta.replaced is not None:
            lines = text.splitlines()
            lines[lines.index(delta.replaced)] = delta.bullet
            text = "\n".join(lines) + "\n"
        elif delta.action == "append_memory":
            text = text.rstrip("\n") + "\n" + delta.bullet + "\n"
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.path)
