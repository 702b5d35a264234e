"""Adapters that fail in one place each, for the exit-status tests."""

from __future__ import annotations

from datetime import datetime

from lsrep.adapters.full_context import FullContextAdapter


class DecayRaisesAdapter(FullContextAdapter):
    """Answers normally; its `decay` maintenance raises every time it runs."""

    maintenance_operations = frozenset({"decay"})

    def maintain(self, operation: str, *, now: datetime) -> None:
        raise OSError("disk full during decay")


class QueryRaisesAdapter(FullContextAdapter):
    """Every query raises."""

    def query(self, question: str, *, now: datetime):
        raise RuntimeError("index corrupted while answering")


class IngestAlwaysRaisesAdapter(FullContextAdapter):
    """One root cause: every ingest raises, so every check that replays fails the same way."""

    def ingest(self, turn, *, now: datetime) -> None:
        raise ValueError("tokenizer missing")
