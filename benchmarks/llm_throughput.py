"""Throughput of LLMClient.complete_many against the in-process server at fixed latency.

    python benchmarks/llm_throughput.py [--latency 0.2] [--levels 1 8 32]

For each concurrency level it prints completed calls per second and the ratio
to the ideal (concurrency / latency). Requests are distinct and uncached; one
untimed warm-up round per level opens the connection pool first.
"""

from __future__ import annotations

import argparse
import time

from lsrep.llm.client import LLMClient
from lsrep.llm.config import EndpointSpec
from lsrep.llm.records import ChatRequest
from lsrep.llm.server import OpenAITestServer

# 20 full waves per level, so the last partial wave does not dominate the steady-state rate.
DEFAULT_CALLS = {1: 20, 8: 160, 32: 640}


def measure(srv: OpenAITestServer, concurrency: int, calls: int) -> tuple[float, int]:
    """(seconds, failed calls) for `calls` distinct requests at one concurrency level."""
    spec = EndpointSpec(base_url=srv.base_url, model="bench", concurrency=concurrency,
                        timeout_s=30, max_retries=0)
    client = LLMClient(spec)
    # Warm-up (untimed): one round at full width opens the pooled connections.
    client.complete_many([ChatRequest(messages=({"role": "user", "content": f"warm-{i}"},))
                          for i in range(concurrency)])
    requests = [ChatRequest(messages=({"role": "user", "content": f"c{concurrency}-q{i}"},))
                for i in range(calls)]
    started = time.perf_counter()
    results = client.complete_many(requests)
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed, sum(not rec.ok for _, rec in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server latency (s)")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--calls", type=int, default=None, help="calls per level")
    args = parser.parse_args()

    print(f"server latency {args.latency * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'ideal':>7} "
          f"{'ratio':>6} {'failed':>6}")
    with OpenAITestServer(latency_s=args.latency) as srv:
        for level in args.levels:
            calls = args.calls or DEFAULT_CALLS.get(level, 20 * level)
            elapsed, failed = measure(srv, level, calls)
            rate = calls / elapsed
            ideal = level / args.latency
            print(f"{level:>11} {calls:>6} {elapsed:>8.2f} {rate:>8.1f} {ideal:>7.1f} "
                  f"{rate / ideal:>6.1%} {failed:>6}")
            if srv.max_in_flight > level:
                raise SystemExit(f"bound broken: {srv.max_in_flight} in flight at {level}")
            srv.reset_counters()


if __name__ == "__main__":
    main()
