"""Running checks and building the report."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsrep.conformance.driving import (
    CHECKS,
    Check,
    CheckResult,
    ConformanceReport,
    Subject,
)
from lsrep.errors import ConfigError


# -- running ----------------------------------------------------------------------------------------
def run_checks(subject: Subject, names: Iterable[str] | None = None) -> tuple[CheckResult, ...]:
    """Run the named checks (default: all) in order; an exception fails its check."""
    out = []
    for c in select_checks(names):
        try:
            status, reason = c.run(subject)
        except Exception as exc:  # noqa: BLE001 - an adapter failure is a verdict, not a crash
            text = " ".join(str(exc).split())[:300] or type(exc).__name__
            status, reason = "failed", f"raised {type(exc).__name__}: {text}"
        out.append(CheckResult(name=c.name, status=status, reason=one_line(reason)))
    return tuple(out)


def one_line(text: str, limit: int = 600) -> str:
    """A reason safe to print anywhere: one line, control characters and lone surrogates escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    text = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in " ".join(text.split()))
    return text[:limit]


def select_checks(names: Iterable[str] | None) -> list[Check]:
    if names is None:
        return list(CHECKS.values())
    picked = []
    for name in names:
        if name not in CHECKS:
            import difflib

            close = difflib.get_close_matches(name, list(CHECKS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown conformance check {name!r}{hint} (known: {', '.join(CHECKS)})")
        picked.append(CHECKS[name])
    return picked


def run_conformance(system: str, options: dict[str, Any] | None = None,
                    checks: Iterable[str] | None = None, adapter_host: str = "process",
                    memory: Any = None, simulated_clock: bool = True) -> ConformanceReport:
    """Check one adapter (registered name or `module:Class`) with the given options.

    The adapter runs in an adapter host process, as in a campaign (`adapter_host="in-process"`
    builds it in this process instead, for debugging). `memory` is the memory-model relay the
    adapter's `setup.memory_llm` / `setup.memory_embedder` reach (None: it gets none).
    `simulated_clock=False` leaves the host's wall clock unpatched (lsrep.host.clock), to show what
    a system that reads it does.
    """
    selected = [c.name for c in select_checks(checks)]
    subject = Subject(system, options, adapter_host, memory=memory, simulated_clock=simulated_clock)
    try:
        results = run_checks(subject, selected)
    finally:
        subject.close()
    cls = subject.cls
    return ConformanceReport(system=system, adapter=f"{cls.__module__}:{cls.__qualname__}",
                             options=subject.validated.model_dump(mode="json"), results=results,
                             adapter_host=subject.adapter_host,
                             memory_calls=len(memory.book.rows) if memory is not None else 0,
                             simulated_clock=simulated_clock)
