"""Full-context baseline: the whole history, in time order with dates, up to a context limit.

When the history exceeds the limit the oldest turns are dropped and the drop is
reported to the caller (never silent).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Line:
    """One remembered turn."""

    turn_id: str
    session_id: str
    text: str
    tokens: int


@dataclass
class Recall:
    """What a query returns: kept lines in time order and what was dropped."""

    lines: list[Line]
    dropped_turns: int
    dropped_tokens: int


def estimate(text: str) -> int:
    """Token estimate used for the limit: characters / 4."""
    return (len(text) + 3) // 4


@dataclass
class FullContextMemory:
    """Append-only transcript returned whole, newest turns kept when over the limit."""

    context_limit: int | None = None
    lines: list[Line] = field(default_factory=list)
    _total: int = 0
    _held: set[str] = field(default_factory=set)
    version: int = 0
    """Changes whenever the lines do through `add` or `clear`: what a caller may key a recall on."""

    def add(self, turn_id: str, session_id: str, text: str) -> None:
        """Append a turn; a turn id already held is not added again."""
        if turn_id in self._held:
            return
        self._held.add(turn_id)
        line = Line(turn_id, session_id, text, estimate(text))
        self.lines.append(line)
        self._total += line.tokens
        self.version += 1

    def recall(self) -> Recall:
        if self.context_limit is None or self._total <= self.context_limit:
            return Recall(list(self.lines), 0, 0)
        kept: list[Line] = []
        used = 0
        for line in reversed(self.lines):
            if used + line.tokens > self.context_limit:
                break
            kept.append(line)
            used += line.tokens
        kept.reverse()
        # The dropped turns are the older rest: counted from the running total, not re-summed
        # (a pass over the whole history at every query).
        return Recall(kept, len(self.lines) - len(kept), self._total - used)

    def clear(self) -> None:
        self.lines.clear()
        self._held.clear()
        self._total = 0
        self.version += 1
