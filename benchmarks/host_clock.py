"""Cost of the simulated clock in the adapter host (issue 24): per call, clock patched vs not.

    python benchmarks/host_clock.py [--repeats 5] [--calls 500]

One host per mode runs the `null` adapter; each repeat times `--calls` query round trips (each a
message to the host and back, the clock hook entered and left around the call) and reports the
per-call time (min/median/max over repeats) with and without `lsrep.host.clock.simulated`.
Start-up is excluded here (it is the same in both modes; benchmarks/adapter_host.py measures it).
Machine load (1-minute load average) is printed before and after; the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime, timedelta

from lsrep.harness import validate_condition
from lsrep.host.client import open_hosted
from lsrep.host.clock import hooks

NOW = datetime(2023, 5, 8, tzinfo=UTC)


def per_call_us(simulated: bool, calls: int, repeats: int) -> list[float]:
    cls, _ = validate_condition("null", {}, (), "bench")
    adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0,
                          hooks=hooks(simulated))
    try:
        adapter.reset(conversation_id="c", now=NOW)
        out = []
        for _ in range(repeats):
            start = time.perf_counter()
            for i in range(calls):
                adapter.query("q", now=NOW + timedelta(seconds=i))
            out.append((time.perf_counter() - start) / calls * 1e6)
        return out
    finally:
        adapter.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=500)
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    for simulated in (False, True):
        v = per_call_us(simulated, args.calls, args.repeats)
        print(f"clock {'simulated' if simulated else 'wall     '}: per query round trip "
              f"min {min(v):7.1f} us  median {statistics.median(v):7.1f} us  max {max(v):7.1f} us")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
