"""The synthetic conversation every check replays, and the questions asked of it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Literal

from lsrep.contract import (
    ReplayTurn,
)
from lsrep.text import estimate_tokens

Status = Literal["passed", "failed", "skipped", "info"]
CONDITION = "conformance"
CONVERSATION = "conformance"
SEED = 0
BUDGET = 120
"""Retrieval budget (tokens) given to adapters that declare `honours_budget`."""
MAX_PRESSURE_TURNS = 400
"""Filler turns added at most to push a history past a declared limit."""


# -- the scenario -----------------------------------------------------------------------------------
def _history(rows: Sequence[tuple[str, str, str, str, str | None, str]], first: int = 0) -> tuple[ReplayTurn, ...]:
    return tuple(
        ReplayTurn(turn_id=tid, session_id=sid, conversation_id=CONVERSATION, index=first + i,
                   timestamp=datetime.fromisoformat(when), role=role, speaker=speaker, content=content)
        for i, (tid, sid, when, role, speaker, content) in enumerate(rows)
    )


SCENARIO = _history([
    ("c01", "s1", "2026-03-02T12:00:00+00:00", "user", "Ana", "I planted tulips in the back garden today."),
    ("c02", "s1", "2026-03-02T12:01:00+00:00", "assistant", None, "Lovely, tulips should flower in April."),
    ("c03", "s1", "2026-03-02T12:05:00+00:00", "user", "Ana", "My favourite colour is teal."),
    ("c04", "s2", "2026-03-09T12:00:00+00:00", "user", "Ana", "I planted roses in the back garden today."),
    ("c05", "s2", "2026-03-09T12:03:00+00:00", "user", "Ana", "My favourite colour is crimson now, not teal."),
    ("c06", "s3", "2026-03-16T12:00:00+00:00", "user", "Ana", "I planted lavender in the back garden today."),
    ("c07", "s3", "2026-03-16T12:02:00+00:00", "user", "Ana", "My favourite colour is amber now."),
    ("c08", "s3", "2026-03-16T12:04:00+00:00", "assistant", None, "Noted: amber it is."),
])
"""Three sessions a week apart: a planting per date and a fact revised twice."""
MIDPOINT = 5
"""The first two sessions; the third is the part a snapshot must not contain."""
BEFORE_RESET = _history([
    ("r01", "r1", "2026-02-20T12:00:00+00:00", "user", "Ana", "The locker code at the gym is QUOKKAZEPHYR 4417."),
    ("r02", "r1", "2026-02-20T12:01:00+00:00", "assistant", None, "Noted: the gym locker code is QUOKKAZEPHYR 4417."),
])
AFTER_RESET = _history([
    ("a01", "a1", "2026-02-20T12:00:00+00:00", "user", "Ana", "The bakery on the corner sells rye bread."),
    ("a02", "a1", "2026-02-20T12:01:00+00:00", "assistant", None, "Good to know about the rye bread."),
])
"""As many turns as BEFORE_RESET, at the same times, without its fact."""
RESET_TOKEN = "quokkazephyr"
ASK_DATE = "What did I plant in the back garden on 2026-03-02?"
ASKED_DATE = date(2026, 3, 2)
ASK_RECENT = "What is my favourite colour now?"
VERSIONS = ("teal", "crimson", "amber")
"""The revised fact's values, oldest to latest."""
ASK_GARDEN = "What did I plant in the back garden?"
ASK_RESET = "What is the locker code at the gym?"
QUESTIONS = (ASK_DATE, ASK_RECENT, ASK_GARDEN, ASK_RESET)
_BY_ID = {t.turn_id: t for t in SCENARIO}


def pressure(tokens: int) -> tuple[ReplayTurn, ...]:
    """Filler turns (one more session) taking the scenario past `tokens`; none if that needs too many."""
    have = sum(estimate_tokens(t.content) for t in SCENARIO)
    line = "Filler note {i:03d}: the weather stayed mild and the garden needed no work at all."
    per = estimate_tokens(line.format(i=0))
    need = max(0, (int(tokens * 1.25) - have) // per + 1)
    if need > MAX_PRESSURE_TURNS:
        return ()
    start = SCENARIO[-1].timestamp.replace(day=20)
    rows = [(f"f{i:03d}", "s4", start.replace(hour=8 + i // 60, minute=i % 60).isoformat(), "user", "Ana",
             line.format(i=i)) for i in range(need)]
    return _history(rows, first=len(SCENARIO))
