"""Helpers for the ICE tests: real SQLite stores in tmp dirs, a simulated clock, an event recorder."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lsrep.systems.ice import IceConfig, IceSystem, StageEvent, TurnRecord

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def day(n: float) -> datetime:
    """Simulated time n days after T0."""
    return T0 + timedelta(days=n)


class Recorder:
    """Collects stage events; a real callback, no mocking."""

    def __init__(self) -> None:
        self.events: list[StageEvent] = []

    def __call__(self, event: StageEvent) -> None:
        self.events.append(event)

    def clear(self) -> None:
        self.events.clear()

    def stages(self, mechanism: str) -> list[str]:
        return [e.stage for e in self.events if e.mechanism == mechanism]

    def last(self, mechanism: str, stage: str) -> StageEvent:
        return [e for e in self.events if e.mechanism == mechanism and e.stage == stage][-1]


class Harness:
    """A tiny driver: one system, numbered turns, one clock."""

    def __init__(self, root: Path, **config) -> None:
        self.recorder = Recorder()
        self.system = IceSystem(root, config=IceConfig(**config), on_event=self.recorder)
        self.n = 0

    def say(self, text: str, *, conv: str = "c1", sess: str = "s1", role: str = "user",
            at: float | None = None) -> str:
        tid = f"t{self.n:04d}"
        when = day(self.n if at is None else at)
        self.system.ingest(TurnRecord(tid, conv, sess, self.n, when, role, text), now=when)
        self.n += 1
        return tid

    def say_all(self, texts: Iterable[str], **kw) -> list[str]:
        return [self.say(t, **kw) for t in texts]

    def ask(self, text: str, *, conv: str = "c1", at: float | None = None, **kw):
        self.recorder.clear()
        return self.system.query(text, conversation_id=conv, now=day(self.n if at is None else at),
                                 **kw)


FILLER = [
    "The weather was mild and we talked about gardening tomatoes.",
    "I baked sourdough bread over the weekend with a new starter.",
    "We discussed a podcast episode about deep sea creatures.",
    "The train was late again this morning, twenty minutes.",
    "I repainted the hallway a pale shade of green.",
    "My neighbour lent me a ladder for the gutters.",
    "We compared two recipes for lentil soup.",
    "The museum had a new exhibition on ancient maps.",
]
