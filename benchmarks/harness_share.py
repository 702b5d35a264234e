"""Where a campaign's CPU goes: the adapter's own calls vs each harness phase (no profiler).

    python benchmarks/harness_share.py [campaigns/locomo.toml] [--conditions vector-rag null]
                                       [--repeats 3] [--trajectories conv-26]

Runs the campaign (a fresh store in a scratch folder) with the adapter in this process
(`--adapter-host in-process`), so one clock sees everything, and charges the CPU time of this
thread to phases by wrapping the functions that implement them (self time: a phase nested in
another is charged to the inner one). Phases:

- adapter: every call into the adapter (`Guarded.call`: ingest, maintenance, query, snapshot...),
  including the events it emits;
- unit set-up: building the replay (`_Replay.__init__`: the provenance index of the trajectory,
  the adapter's construction);
- context audit: provenance and leak checks of each returned context (`audit_context`);
- answer: the answerer (`AnswerPool.submit`; the offline answerer runs in-line);
- fragment rows / judge: per-fragment rows and in-prompt events, the deterministic judge;
- store write: the unit's transaction (`RunStore.write_unit`);
- preflight: loading, validation and planning (`prepare_run`);
- other: the rest of the run (driver, summaries, integrity checks, engine loop).

It prints, per condition, CPU seconds by phase (median over repeats) with min/median/max of the
total and of the harness share (everything but `adapter`), with and without the `answer` phase
(the offline reader), then the null / condition CPU ratio. The cyclic garbage collector's CPU time
(this thread) is printed beside the phases: it is charged to whichever phase it interrupted.
The default out-of-process host adds the wire (encoding each call and its events) on top: compare
with `benchmarks/replay_scaling.py`, which counts the host process too.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class PhaseClock:
    """Self CPU time (this thread) per phase, with nesting."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[tuple[str, float]] = []
        self._restore: list[tuple[object, str, object]] = []

    def wrap(self, owner, attr: str, phase: str) -> None:
        original = getattr(owner, attr)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            now = time.thread_time()
            if self._stack:
                outer, started = self._stack[-1]
                self.totals[outer] += now - started
            self._stack.append((phase, now))
            try:
                return original(*args, **kwargs)
            finally:
                end = time.thread_time()
                name, started = self._stack.pop()
                self.totals[name] += end - started
                if self._stack:
                    self._stack[-1] = (self._stack[-1][0], end)

        setattr(owner, attr, timed)
        self._restore.append((owner, attr, original))

    def unwrap(self) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        self._restore.clear()


def measure(campaign: Path, condition: str, trajectories: list[str] | None) -> dict[str, float]:
    import lsrep.engine as engine
    import lsrep.preflight as preflight
    import lsrep.runner as runner
    from lsrep.answering import AnswerPool
    from lsrep.harness import Guarded
    from lsrep.store import RunStore

    clock = PhaseClock()
    clock.wrap(Guarded, "call", "adapter")
    clock.wrap(engine._Replay, "__init__", "unit set-up")
    clock.wrap(engine, "audit_context", "context audit")
    clock.wrap(AnswerPool, "submit", "answer")
    clock.wrap(engine._Replay, "_record_fragments", "fragment rows")
    clock.wrap(engine, "deterministic_judgement", "judge")
    clock.wrap(RunStore, "write_unit", "store write")
    clock.wrap(preflight, "prepare_run", "preflight")
    collecting = _GcClock()
    try:
        with tempfile.TemporaryDirectory(prefix="lsrep-share-") as tmp, collecting:
            started = time.thread_time()
            runner.run_campaign(campaign, fresh=True, store_path=Path(tmp) / "store.sqlite",
                                conditions=[condition], trajectories=trajectories, adapter_host="in-process")
            total = time.thread_time() - started
    finally:
        clock.unwrap()
    phases = dict(clock.totals)
    phases["other"] = total - sum(phases.values())
    phases["total"] = total
    phases["gc"] = collecting.total
    return phases


class _GcClock:
    """CPU time of this thread in the cyclic garbage collector (charged to the phases it interrupts;
    reported beside them, not as a phase)."""

    def __init__(self) -> None:
        self.total, self._start, self._thread = 0.0, None, threading.get_ident()

    def __call__(self, phase: str, info: dict) -> None:
        if threading.get_ident() != self._thread:
            return
        if phase == "start":
            self._start = time.thread_time()
        elif self._start is not None:
            self.total += time.thread_time() - self._start
            self._start = None

    def __enter__(self) -> _GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)


def spread(values: list[float], fmt: str) -> str:
    return "/".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


PHASES = ("adapter", "unit set-up", "context audit", "answer", "fragment rows", "judge", "store write",
          "preflight", "other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", default=str(REPO / "campaigns" / "locomo.toml"))
    parser.add_argument("--conditions", nargs="+", default=["vector-rag", "null"])
    parser.add_argument("--trajectories", nargs="+", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    campaign = Path(args.campaign).resolve()
    print(f"{campaign.name}, adapter in-process, {args.repeats} repetitions; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU s of the driving thread, median by phase")
    totals: dict[str, list[float]] = {}
    for cond in args.conditions:
        runs = [measure(campaign, cond, args.trajectories) for _ in range(args.repeats)]
        totals[cond] = [r["total"] for r in runs]
        shares = [1 - r["adapter"] / r["total"] for r in runs]
        # The offline reader (the extractive answerer) is part of the instrument, but its cost is
        # a property of the reader, not of the harness's plumbing: shown both ways.
        readerless = [1 - r["adapter"] / (r["total"] - r["answer"]) for r in runs]
        print(f"-- {cond}: total {spread(totals[cond], '{:.2f}')} s, harness share "
              f"{spread(shares, '{:.1%}')} (min/median/max); without the answer phase "
              f"{spread(readerless, '{:.1%}')}")
        for phase in PHASES:
            med = statistics.median(r.get(phase, 0.0) for r in runs)
            share = statistics.median(r.get(phase, 0.0) / r["total"] for r in runs)
            print(f"   {phase:<14} {med:8.2f} s  {share:6.1%}")
        print(f"   (cyclic garbage collection, charged to the phases above: "
              f"{statistics.median(r['gc'] for r in runs):.2f} s)")
    if "null" in totals:
        for cond in args.conditions:
            if cond != "null":
                ratio = statistics.median(totals["null"]) / statistics.median(totals[cond])
                print(f"null / {cond} CPU: {ratio:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
