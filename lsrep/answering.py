"""Concurrent answering, recorded as if it had been sequential.

The probes of a checkpoint are queried one after another (the adapter's state is
sequential), but each answer is handed to a pool as soon as its context is known,
bounded by the answerer endpoint's `concurrency`; the offline answerer answers
in-line. The replay goes on while the answers are in flight: a checkpoint's probes
are concluded (answer, fragments, judgement rows) when the next checkpoint has been
asked, before any other row is written, or at the end of the unit. Everything the unit
log records meanwhile (each probe's query events and failures, a restore, what the
later steps log) is captured and put back in the sequential order with the same
sequence numbers, so the stored rows are those of a sequential run
(tests/core/test_golden.py).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lsrep.context_audit import ContextAudit
from lsrep.contract import Fragment, QueryResult
from lsrep.harness import CallLog
from lsrep.protocol.models import Probe


@dataclass
class Asked:
    """A probe queried by the engine (result None: the query failed, the row says why) and its answer under way."""

    row: dict[str, Any]
    probe: Probe
    result: QueryResult | None = None
    fragments: list[Fragment] = field(default_factory=list)
    returned: tuple[tuple[Fragment, ...], ContextAudit] | None = None
    answer: Any = None
    system_calls: list[dict[str, Any]] = field(default_factory=list)


class LogSegment:
    """Events and failures recorded while captured, to be put back into the log later."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []

    def replay_into(self, log: CallLog) -> None:
        for row in self.events:
            log.events.append({**row, "seq": len(log.events)})
        for row in self.failures:
            log.failures.append({**row, "seq": len(log.failures)})


@contextmanager
def captured(log: CallLog):
    """Record into a fresh segment instead of the log (the log's lists are swapped, then restored)."""
    segment = LogSegment()
    events, failures = log.events, log.failures
    log.events, log.failures = segment.events, segment.failures
    try:
        yield segment
    finally:
        log.events, log.failures = events, failures


class Deferred:
    """One checkpoint's asked probes, concluded later, and what the log records meanwhile."""

    def __init__(self, log: CallLog, conclude: Callable[[Any, Asked], None]) -> None:
        self.log, self.conclude = log, conclude
        self._held: tuple[Any, list[tuple[Asked, LogSegment, LogSegment]]] | None = None
        self._after = LogSegment()
        self._saved: tuple[list, list] | None = None

    def hold(self, step: Any, asked: list[tuple[Asked, LogSegment, LogSegment]]) -> None:
        """Conclude what was held, hold these, and capture what the log records from now on."""
        self.flush()
        self._held, self._after = (step, asked), LogSegment()
        self._saved = (self.log.events, self.log.failures)
        self.log.events, self.log.failures = self._after.events, self._after.failures

    def flush(self) -> None:
        """Conclude the held probes in plan order, then put back what was logged after them."""
        if self._held is None:
            return
        self.log.events, self.log.failures = self._saved
        (step, asked), self._held, self._saved = self._held, None, None
        for probe, queried, restored in asked:
            queried.replay_into(self.log)
            self.conclude(step, probe)
            restored.replay_into(self.log)
        self._after.replay_into(self.log)


class _Done:
    """A result computed in-line, with the `Future.result()` interface."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def answer_concurrency(answerer: Any) -> int:
    """How many answers may be in flight: the endpoint's declared concurrency, 1 offline."""
    client = getattr(answerer, "client", None)
    spec = getattr(client, "spec", None)
    return max(1, int(getattr(spec, "concurrency", 1) or 1))


class AnswerPool:
    """Runs answer calls in up to `concurrency` threads (in-line at 1); results by future."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future | _Done:
        if self.concurrency <= 1:
            return _Done(fn(*args))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="lsrep-answer")
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
