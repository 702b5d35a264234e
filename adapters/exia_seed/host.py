"""A minimal host that treats the provider the way the Hermes agent's memory manager does.

What it keeps from Hermes (`agent/memory_manager.py`, `agent/redact.py`):

- one external provider at most;
- every string handed to the provider first goes through a secret-redaction pass;
- `sync_turn` runs on a single serialising worker in Hermes; here it is called synchronously,
  which gives the same order;
- prefetched text is sanitised, repeated bullets are dropped, and it is wrapped in a
  `<memory-context>` fence with the system-note header, for the user turn;
- external prefetch is bounded by an 8 s timeout. Nothing here waits: the provider reports
  the work its recall did, the host turns it into simulated seconds, and a recall over the
  limit is dropped and reported, as Hermes drops a timed-out provider's text.

Every hook that depends on time gets the replay clock as `now=` (Hermes' own signatures take no
time: the provider would read the wall clock); the host calls `on_turn_start` before each turn.

Deviation: Hermes skips a turn whose user text is empty; a replayed trajectory can hold
assistant-only turns, so this host passes them on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

SYSTEM_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. Treat as "
    "authoritative reference data — this is the agent's persistent memory and should inform all responses.]"
)

_PREFIXES = (
    r"sk-[A-Za-z0-9_\-]{10,}", r"ghp_[A-Za-z0-9]{10,}", r"github_pat_[A-Za-z0-9_]{10,}", r"gh[ousr]_[A-Za-z0-9]{10,}",
    r"xox[baprs]-[A-Za-z0-9\-]{10,}", r"AIza[A-Za-z0-9_\-]{30,}", r"AKIA[A-Z0-9]{16}", r"hf_[A-Za-z0-9]{10,}",
    r"sk_(?:live|test)_[A-Za-z0-9]{10,}", r"glpat-[A-Za-z0-9_\-]{10,}", r"npm_[A-Za-z0-9]{10,}",
)
_PREFIX_RE = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(_PREFIXES) + r")")
_FENCE_TAG = re.compile(r"</?\s*memory-context\s*>", re.IGNORECASE)
_INNER_BLOCK = re.compile(r"<\s*memory-context\s*>[\s\S]*?</\s*memory-context\s*>", re.IGNORECASE)
_INNER_NOTE = re.compile(r"\[System note:\s*The following is recalled memory context,[^\]]*\]\s*", re.IGNORECASE)
_BULLET = re.compile(r"[-*+]\s+\S")

HostEvent = Callable[[str, str, dict[str, Any]], None]


def redact(text: str) -> str:
    """Hermes-style redaction of known key prefixes: short tokens fully, long ones kept 6+4."""
    def mask(m: re.Match[str]) -> str:
        token = m.group(0)
        return "***" if len(token) < 18 else f"{token[:6]}...{token[-4:]}"

    return _PREFIX_RE.sub(mask, text)


def build_memory_context_block(raw: str) -> str:
    """Wrap recalled text in the fenced block Hermes injects into the user turn."""
    if not raw or not raw.strip():
        return ""
    clean = raw
    for pattern in (_INNER_BLOCK, _INNER_NOTE, _FENCE_TAG):
        clean = pattern.sub("", clean)
    return f"<memory-context>\n{SYSTEM_NOTE}\n\n{_drop_repeated_bullets(clean)}\n</memory-context>"


def _drop_repeated_bullets(text: str) -> str:
    """Drop a column-0 bullet already stated in the same section (Hermes' dedupe rule)."""
    lines = text.split("\n")
    seen: set[str] = set()
    kept: list[str] = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and line[0].isspace():
            kept.append(line)
            continue
        bullet = bool(_BULLET.match(stripped))
        if stripped and not bullet:
            seen.clear()
        if bullet:
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if not (following.strip() and following[0].isspace()):
                if stripped in seen:
                    continue
                seen.add(stripped)
        kept.append(line)
    return "\n".join(kept)


@dataclass(frozen=True)
class Prefetch:
    """One host prefetch: what the provider returned and what the host injects."""

    raw: str
    block: str
    """The fenced block ("" when empty or dropped)."""
    simulated_seconds: float
    timed_out: bool


class HermesHost:
    """Owns the single external provider and mediates every call to it."""

    def __init__(self, *, on_event: HostEvent, timeout_s: float = 8.0,
                 seconds_per_work_unit: float = 1e-4, redaction: bool = True) -> None:
        self.provider: Any = None
        self.on_event = on_event
        self.timeout_s = timeout_s
        self.seconds_per_work_unit = seconds_per_work_unit
        self.redaction = redaction

    def add_provider(self, provider: Any) -> None:
        if self.provider is not None:
            raise ValueError(f"only one external memory provider: {self.provider.name} is registered")
        self.provider = provider

    def _clean(self, text: str) -> str:
        return redact(text) if self.redaction else text

    def turn_start(self, turn_number: int, message: str, *, now: datetime) -> None:
        self.provider.on_turn_start(turn_number, self._clean(message), now=now)

    def session_end(self, *, now: datetime) -> None:
        self.provider.on_session_end(None, now=now)

    def session_switch(self, new_session_id: str, *, parent_session_id: str | None, now: datetime) -> None:
        self.provider.on_session_switch(new_session_id, parent_session_id=parent_session_id, now=now)

    def sync(self, user: str, assistant: str, *, session_id: str, now: datetime,
             user_time: datetime | None, origins: tuple[str | None, str | None]) -> None:
        if not user.strip() and not assistant.strip():
            return
        self.provider.sync_turn(self._clean(user), self._clean(assistant), session_id=session_id, now=now,
                                user_time=user_time, origins=origins)

    def prefetch(self, query: str, *, session_id: str, now: datetime) -> Prefetch:
        raw = self.provider.prefetch(self._clean(query), session_id=session_id, now=now) or ""
        status = self.provider.recall_status()
        seconds = (status.work if status else 0) * self.seconds_per_work_unit
        params = {"simulated_seconds": round(seconds, 6), "timeout_s": self.timeout_s}
        self.on_event("host.prefetch", "executed", params)
        if seconds > self.timeout_s:
            self.on_event("host.prefetch", "error", {**params, "reason": "timeout: block dropped"})
            return Prefetch(raw, "", seconds, True)
        return Prefetch(raw, build_memory_context_block(raw), seconds, False)

    def tool(self, name: str, args: dict[str, Any], *, now: datetime) -> str:
        return self.provider.handle_tool_call(name, {k: self._clean(v) if isinstance(v, str) else v
                                                     for k, v in args.items()}, now=now)
