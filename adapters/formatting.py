"""How adapters render a replayed turn as text: date, speaker and content on one line."""

from __future__ import annotations

from lsrep.contract import ReplayTurn


def turn_line(turn: ReplayTurn) -> str:
    """`[2026-03-02 09:15] Ana (user): text` — dates reach the system with the words."""
    who = f"{turn.speaker} ({turn.role})" if turn.speaker else turn.role
    stamp = turn.timestamp.strftime("%Y-%m-%d %H:%M")
    content = " ".join(turn.content.split())
    return f"[{stamp}] {who}: {content}"
