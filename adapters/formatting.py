"""How adapters render a replayed turn as text: date, speaker and content on one line."""

from __future__ import annotations

from lsrep.contract import ReplayTurn
from lsrep.text import collapse_whitespace

EMBEDDING_TEXTS = ("content", "speaker", "date-speaker")


def embedding_text(turn: ReplayTurn, policy: str) -> str:
    """The text of a turn a system embeds under the campaign's policy (`AdapterSetup.embedding_text`).

    `content`: the words alone; `speaker`: `Ana: words`; `date-speaker`: `turn_line(turn)`.
    """
    content = collapsed(turn.content)
    if policy == "content":
        return content
    if policy == "speaker":
        return f"{turn.speaker or turn.role}: {content}"
    if policy == "date-speaker":
        return turn_line(turn)
    raise ValueError(f"unknown embedding-text policy {policy!r}: one of {', '.join(EMBEDDING_TEXTS)}")


def turn_line(turn: ReplayTurn) -> str:
    """`[2026-03-02 09:15] Ana (user): text` — dates reach the system with the words."""
    who = f"{turn.speaker} ({turn.role})" if turn.speaker else turn.role
    stamp = turn.timestamp.strftime("%Y-%m-%d %H:%M")
    return f"[{stamp}] {who}: {collapsed(turn.content)}"


_LAST: tuple[str, str] = ("", "")


def collapsed(content: str) -> str:
    """`" ".join(content.split())`; the last content's again when asked for the same string object
    (an adapter that embeds a turn's content and stores its line asks twice per turn)."""
    global _LAST
    last = _LAST
    if last[0] is content:
        return last[1]
    out = collapse_whitespace(content)
    _LAST = (content, out)
    return out
