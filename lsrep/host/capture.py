"""Warnings and log records an adapter emits, captured per call in the adapter host.

Libraries say important things only as warnings or log records: mem0 warns when its BM25 and entity
lanes are off (they need hub downloads) and runs degraded. Around each adapter call (and the
adapter's construction) the host catches every `warnings.warn` (filter `always`, so a repeated
warning is counted each time) and every log record of level WARNING or above reaching the root
logger, and sends them back with the call's reply. The harness keeps them per unit (the
`adapter_logs` table, migration m011_adapter_logs: kind, source, level, message, count, the first
call that emitted it) and the report lists them per condition.

While a call runs, the root logger's handlers other than the capture are not used by records the
capture takes (so a library's warnings are reported once, in the report, rather than on stderr).
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

MESSAGE_CHARS = 500
"""A message is kept up to this many characters."""


def _source_of_warning(w: warnings.WarningMessage) -> str:
    return f"{w.category.__name__} at {os.path.basename(str(w.filename))}:{w.lineno}"


class _Handler(logging.Handler):
    """The root logger's one handler while a capture is open: records go to the innermost open
    capture (`sink`). One handler for the process, not one per call: building a `logging.Handler`
    (its lock, registered for re-initialisation at fork, and its weak reference in `logging`) cost
    the host more than a short adapter call (an ingest)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.sink: Capture | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is still a record
            message = str(record.msg)
        if self.sink is not None:
            self.sink.add("log", record.name, record.levelname.lower(), message)


_HANDLER: _Handler | None = None


def _handler() -> _Handler:
    global _HANDLER
    if _HANDLER is None:
        _HANDLER = _Handler()
    return _HANDLER


class Capture:
    """A context manager collecting warnings and WARNING+ log records, deduplicated with counts."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.records: dict[tuple[str, str, str, str], int] = {}

    def add(self, kind: str, source: str, level: str, message: str) -> None:
        key = (kind, source, level, " ".join(message.split())[:MESSAGE_CHARS])
        self.records[key] = self.records.get(key, 0) + 1

    def __enter__(self) -> Capture:
        self._warnings = warnings.catch_warnings(record=True)
        self._caught = self._warnings.__enter__()
        warnings.simplefilter("always")
        self._handler = _handler()
        self._outer = self._handler.sink
        self._handler.sink = self
        root = logging.getLogger()
        self._saved = root.handlers[:]
        root.handlers = [self._handler]
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger().handlers = self._saved
        self._handler.sink = self._outer
        self._warnings.__exit__(*exc)
        for w in self._caught or ():
            self.add("warning", _source_of_warning(w), "warning", str(w.message))

    def rows(self) -> list[dict[str, Any]]:
        """What the host sends back: one dict per distinct record."""
        return [{"kind": k, "source": s, "level": lvl, "message": m, "count": n, "method": self.method}
                for (k, s, lvl, m), n in self.records.items()]


def merge(into: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """Add a call's records to a unit's, counting repeats (the first emitting call is kept)."""
    index = {(r["kind"], r["source"], r["level"], r["message"]): r for r in into}
    for row in rows:
        key = (row["kind"], row["source"], row["level"], row["message"])
        if key in index:
            index[key]["count"] += row["count"]
        else:
            index[key] = dict(row)
            into.append(index[key])
