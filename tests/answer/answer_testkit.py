"""What the offline answerer's rule tests share: a dated fragment line as adapters render a
turn, and one question asked of fragments at a fixed simulated now."""

from __future__ import annotations

from datetime import datetime

from lsrep.answer.extractive import ExtractiveAnswerer
from lsrep.contract import Fragment

NOW = datetime(2024, 9, 1, 12, 0)


def line(stamp: str, who: str, text: str) -> Fragment:
    return Fragment(text=f"[{stamp}] {who} (user): {text}")


def ask(question: str, *fragments: Fragment) -> str:
    return ExtractiveAnswerer().answer(question, list(fragments), NOW)
