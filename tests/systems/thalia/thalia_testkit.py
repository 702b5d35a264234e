"""Helpers for the THALIA tests: an event recorder, turn feeding and generated haystacks."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from lsrep.systems.thalia import HarnessConfig, StageEvent, Thalia

T0 = datetime(2024, 5, 1, 9, 0)

FILLER_WORDS = ("garden budget museum recipe guitar marathon invoice puppy kitchen novel laptop "
                "concert dentist cousin painting hiking coffee bakery lecture tennis camera violin "
                "holiday bicycle apartment festival river market sandwich pottery").split()


class Recorder:
    """Collects THALIA's stage events."""

    def __init__(self) -> None:
        self.events: list[StageEvent] = []

    def __call__(self, event: StageEvent) -> None:
        self.events.append(event)

    def clear(self) -> None:
        self.events.clear()

    def of(self, mechanism: str, stage: str | None = None) -> list[StageEvent]:
        return [e for e in self.events if e.mechanism == mechanism and (stage is None or e.stage == stage)]

    def ids(self, mechanism: str, stage: str) -> set[str]:
        return {i for e in self.of(mechanism, stage) for i in e.ids}

    def stages(self, mechanism: str) -> set[str]:
        return {e.stage for e in self.of(mechanism)}


def open_thalia(path: Path, recorder: Recorder | None = None, **config) -> Thalia:
    return Thalia(path, HarnessConfig(**config), on_event=recorder)


def feed(thalia: Thalia, texts: Iterable[str | tuple[str, str]], *, session: str = "s1",
         start: datetime = T0, step: timedelta = timedelta(minutes=1), prefix: str = "t",
         offset: int = 0) -> list[str]:
    """Append turns (text, or (role, text)); roles alternate user/assistant by default."""
    ids = []
    for n, item in enumerate(texts):
        role, text = item if isinstance(item, tuple) else ("user" if n % 2 == 0 else "assistant", item)
        sid = f"{prefix}{offset + n}"
        thalia.append_turn(text, role=role, session_id=session, timestamp=start + step * (offset + n),
                           source_id=sid)
        ids.append(sid)
    return ids


def filler(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(FILLER_WORDS) for _ in range(n_words))


BOTTLENECK_QUERY = "What is the router passphrase for the cabin network?"


def bottleneck_haystack(n: int = 1500, gold_at: int = 1100, distractors: int = 40,
                        seed: int = 3) -> tuple[list[str], int]:
    """T-1: the gold shares one (rare) query token; 40 long distractors share two.

    Full-haystack BM25 ranks the short gold first (rare term, short line), but the Inspector
    ranks by query-token overlap ρ, so the distractor blocks win the partition and the
    window cap. Returns the turn texts and the gold's transcript index.
    """
    rng = random.Random(seed)
    texts = [filler(rng, rng.randint(6, 12)) for _ in range(n)]
    step = gold_at // distractors
    for k in range(distractors):
        texts[k * step + 3] = f"{filler(rng, 25)} cabin router {filler(rng, 25)}"
    texts[gold_at] = "passphrase is bluefish42"
    return texts, gold_at


def contains_all(haystack: Sequence[str], needles: Iterable[str]) -> bool:
    return all(any(n in h for h in haystack) for n in needles)


def transcript_of(lines: list[str]):
    """A Transcript of one session, one `User` record per line (turn ids from 1), at T0."""
    from lsrep.systems.thalia.transcript import Record, Transcript

    t = Transcript()
    for i, line in enumerate(lines):
        t.add(Record(index=i, turn_id=i + 1, source_id=f"t{i}", session_id="s", timestamp=T0,
                     speaker="User", text=line))
    return t
