"""What the bundled adapters of third-party memory libraries share (mem0, LangMem).

These libraries build their own OpenAI clients, keep their state in objects of their own and
draw ids from `uuid.uuid4()`. The helpers here keep such a library inside the contract: turns
rendered with their speaker and date, a private folder instead of the home folder, seeded ids so
two replays give the same state, and returned context cut to the campaign's budget.
"""

from __future__ import annotations

import contextlib
import random
import re
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from lsrep.contract import AdapterSetup, Fragment, ReplayTurn
from lsrep.text import estimate_tokens


def turn_text(turn: ReplayTurn) -> str:
    """The turn as the library is given it: `[YYYY-MM-DD HH:MM] Speaker: content`."""
    return f"[{turn.timestamp:%Y-%m-%d %H:%M}] {turn.speaker or turn.role}: {turn.content}"


def chat_role(turn: ReplayTurn) -> str:
    """The OpenAI message role for a turn (`user` unless the trajectory says `assistant`)."""
    return "assistant" if turn.role == "assistant" else "user"


def owner_id(conversation_id: str, owner: str | None = None, participants: Any = None) -> str:
    """The user identity the library scopes memories by: the given owner, else the owner the harness
    announces in `reset(participants=...)`, else one per conversation."""
    if owner is None and participants is not None:
        owner = participants.owner
    return owner or f"lsrep-{conversation_id}"


def require_models(setup: AdapterSetup, system: str) -> tuple[Any, Any]:
    """`(setup.memory_llm, setup.memory_embedder)`, or a clear error when the condition has none."""
    missing = [name for name in ("memory_llm", "memory_embedder") if getattr(setup, name, None) is None]
    if missing:
        raise RuntimeError(
            f"{system} needs a memory-side model: give the campaign (or the condition) "
            + " and ".join(f"[{m}]" for m in missing)
            + ' tables (kind = "offline" for the built-in deterministic responder; docs/memory-model.md)')
    return setup.memory_llm, setup.memory_embedder


class PrivateDir:
    """The adapter's own folder: `setup.state_dir`, else a temporary one removed on close."""

    def __init__(self, setup: AdapterSetup, name: str) -> None:
        self._tmp: tempfile.TemporaryDirectory | None = None
        if setup.state_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=f"lsrep-{name}-")
            root = Path(self._tmp.name)
        else:
            root = Path(setup.state_dir)
        self.path = root / name
        self.path.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


class SeededUuid:
    """A stand-in for the `uuid` module whose `uuid4()` is drawn from a seeded generator."""

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(str(seed))

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def __getattr__(self, name: str) -> Any:
        return getattr(uuid, name)


@contextlib.contextmanager
def seeded_ids(modules: Sequence[ModuleType], ids: SeededUuid) -> Iterator[None]:
    """Within the block, these library modules' `uuid.uuid4()` come from `ids` (restored after)."""
    saved = [(m, m.uuid) for m in modules]
    for m in modules:
        m.uuid = ids
    try:
        yield
    finally:
        for m, original in saved:
            m.uuid = original


def within_budget(fragments: Sequence[Fragment], budget: int | None) -> tuple[tuple[Fragment, ...], int]:
    """The leading fragments whose estimated tokens fit the budget, and the tokens dropped."""
    if budget is None:
        return tuple(fragments), 0
    kept: list[Fragment] = []
    used = dropped = 0
    for f in fragments:
        n = estimate_tokens(f.text)
        if used + n <= budget:
            kept.append(f)
            used += n
        else:
            dropped += n
    return tuple(kept), dropped


_TURN_LINE = re.compile(r"^\[(?P<when>[0-9]{4}-[0-9]{2}-[0-9]{2}[^\]]*)\]\s+(?P<speaker>[^:]{1,80}):\s+(?P<content>.*)$",
                        re.S)


def statement(text: str, *, min_words: int = 3) -> str | None:
    """What a careful extractor keeps of a turn's content: all of it, unless it is under `min_words`
    words (a greeting)."""
    text = " ".join(text.split())
    return text if len(text.split()) >= min_words else None


def parse_turn_text(line: str) -> tuple[str | None, str | None, str]:
    """`(date, speaker, content)` of a `turn_text` line; `(None, None, line)` for any other text."""
    m = _TURN_LINE.match(line.strip())
    if not m:
        return None, None, line.strip()
    return m["when"], m["speaker"], m["content"].strip()
