"""EXIA SEED test kit: a clock origin, a scripted model, a provider rig."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lsrep.systems.exia_seed import ExiaSeedProvider, StageEvent, StandInModel
from lsrep.systems.exia_seed.prompts import CONSOLIDATION_TASK

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
"""Simulated clock origin: 2026-03-01 09:00 UTC."""


def at(days: float = 0, minutes: float = 0) -> datetime:
    return T0 + timedelta(days=days, minutes=minutes)


class ScriptedModel:
    """A real deterministic model: consolidation requests get the queued replies in order;
    summary requests get `summary(subject)` if set, else the offline stand-in's answer."""

    def __init__(self, *replies: str | dict) -> None:
        self.replies = [r if isinstance(r, str) else json.dumps(r) for r in replies]
        self.summary: Callable[[str], str] | None = None
        self.requests: list[list[dict[str, str]]] = []
        self._standin = StandInModel()

    def push(self, reply: str | dict) -> None:
        self.replies.append(reply if isinstance(reply, str) else json.dumps(reply))

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        self.requests.append(list(messages))
        if messages[0]["content"].startswith(CONSOLIDATION_TASK):
            return self.replies.pop(0) if self.replies else '{"faits": []}'
        if self.summary is not None:
            subject = messages[-1]["content"].splitlines()[0].removeprefix("SUBJECT: ")
            return json.dumps({"resume": self.summary(subject), "mots_cles": []})
        return self._standin.complete(messages)


def fact(text: str, refs: list[str], node: str, **extra: Any) -> dict[str, Any]:
    """A proposed fact in the consolidation JSON shape."""
    return {"fait": text, "sources": refs, "noeud": node, "section": extra.pop("section", "episodic"),
            "type": extra.pop("type", "fait"), "concepts": extra.pop("concepts", []), **extra}


@dataclass
class Rig:
    """A provider under test with its events, state root and (optional) scripted model."""

    provider: ExiaSeedProvider
    home: Path
    events: list[StageEvent] = field(default_factory=list)
    model: ScriptedModel | None = None

    @property
    def root(self) -> Path:
        return self.home / "exia_seed"

    def stages(self, mechanism: str) -> list[StageEvent]:
        return [e for e in self.events if e.mechanism == mechanism]

    def note(self, text: str, now: datetime, **args: Any) -> str:
        reply = json.loads(self.provider.handle_tool_call("memoire_noter", {"texte": text, **args}, now=now))
        assert reply.get("ok"), reply
        return f"registre:{reply['id']}"

    def page_text(self) -> str:
        return "\n".join(p.read_text() for p in sorted((self.root / "fiches").glob("*.md")))

    def tool(self, name: str, now: datetime, **args: Any) -> dict[str, Any]:
        return json.loads(self.provider.handle_tool_call(name, args, now=now))


