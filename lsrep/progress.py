"""Progress of a campaign run, drawn by the driver alone (workers never write to the terminal).

One overall line: units done of the total, observations stored, failed units,
model tokens and cost so far (uncached calls only: a cache hit spends nothing),
elapsed time and ETA. In a terminal it is a tqdm bar; otherwise (CI logs, a
pipe) plain log lines on stderr, at most one every `log_every` seconds plus the
first and the last, so a long run is never silent.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Literal

Mode = Literal["bar", "log", "none"]


def resolve_mode(progress: bool | str, stream=None) -> Mode:
    """`True`/`auto`: a bar in a terminal, log lines otherwise; `False`/`none`: nothing."""
    stream = stream or sys.stderr
    if progress is False or progress == "none":
        return "none"
    if progress is True or progress == "auto":
        return "bar" if stream.isatty() else "log"
    if progress in ("bar", "log"):
        return progress  # type: ignore[return-value]
    raise ValueError(f"unknown progress mode {progress!r} (auto, bar, log, none)")


class RunProgress:
    """Counts what finished units brought in and shows it."""

    def __init__(self, *, total: int | None, done: int = 0, mode: bool | str = "auto", log_every: float = 10.0,
                 stream=None) -> None:
        self.stream = stream or sys.stderr
        self.mode = resolve_mode(mode, self.stream)
        self.total, self.done, self.start_done = total, done, done
        self.observations = self.failed = self.tokens = 0
        self.cost: float | None = None
        self.log_every = log_every
        self.started = time.monotonic()
        self._last_log = float("-inf")
        self._bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit="unit", desc="lsrep", file=self.stream,
                             dynamic_ncols=True)
            self._bar.set_postfix_str(self._counts())
        elif self.mode == "log":
            stored = f" ({done} already stored)" if done else ""
            todo = "units" if total is None else f"{total - done} unit(s)"
            print(f"lsrep: {todo} to replay{stored}", file=self.stream, flush=True)

    def unit_done(self, result: Any) -> None:
        """Account for one finished unit (an executor's UnitResult)."""
        self.done += 1
        tables = result.tables
        self.observations += len(tables.get("observations", ()))
        self.failed += result.unit.get("status") == "failed"
        for call in tables.get("llm_calls", ()):
            if call.get("cached"):
                continue
            self.tokens += (call.get("prompt_tokens") or 0) + (call.get("completion_tokens") or 0)
            if call.get("cost") is not None:
                self.cost = (self.cost or 0.0) + call["cost"]
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(self._counts(), refresh=True)
        elif self.mode == "log":
            now = time.monotonic()
            if now - self._last_log >= self.log_every or (self.total is not None and self.done >= self.total):
                self._last_log = now
                print(f"lsrep: {self.line()}", file=self.stream, flush=True)

    def _counts(self) -> str:
        parts = [f"{self.observations} obs"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.tokens or self.cost is not None:
            parts.append(f"{self.tokens:,} tokens")
            parts.append("cost n/a" if self.cost is None else f"${self.cost:.4f}")
        return ", ".join(parts)

    def eta_s(self) -> float | None:
        """Seconds left at the pace of the units finished in this process (None before the first)."""
        new = self.done - self.start_done
        if new <= 0 or self.total is None:
            return None
        return (time.monotonic() - self.started) / new * (self.total - self.done)

    def line(self) -> str:
        """`units 3/12 (25%), 42 obs, ... elapsed 12s, ETA 36s`."""
        eta = self.eta_s()
        if self.total is None:
            units = f"units {self.done}"
        else:
            units = f"units {self.done}/{self.total} ({100 * self.done / self.total if self.total else 100.0:.0f}%)"
        return (f"{units}, {self._counts()}, "
                f"elapsed {_seconds(time.monotonic() - self.started)}, "
                f"ETA {'?' if eta is None else _seconds(eta)}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _seconds(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"
