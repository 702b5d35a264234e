"""Overhead of the memory-side gateway per call (issue 24), start-up included.

    python benchmarks/memory_gateway.py [--calls 200] [--repeats 5]

An adapter inside its host process calls its gateway with its own `openai` client, as mem0 or
LangMem do, and times each call there. Cases, each min/median/max per call:

1. direct:   the same `openai` client in this process straight to the local test server (the floor);
2. gateway → endpoint: in the host, gateway → host wire → harness relay → LSREP's client → the
   same server (no cache: every call goes upstream);
3. gateway → offline: in the host, gateway → host wire → the offline responder (no server).

The gateway's overhead is case 2 minus case 1 (medians). Start-up: a host started, the adapter
(and its gateway) built, one call made, closed — min/median/max over `--repeats`. The machine's
1-minute load average is printed before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from lsrep.contract import Fragment, MemoryAdapter, QueryResult

NOW = datetime(2026, 3, 2, tzinfo=UTC)


class TimedGatewayAdapter(MemoryAdapter):
    """`query("chat N")` / `query("embed N")`: N distinct calls through the gateway, each timed here."""

    name = "timed-gateway"

    def __init__(self, setup) -> None:
        super().__init__(setup)
        import openai

        self.client = openai.OpenAI(base_url=setup.memory_llm.base_url, api_key=setup.memory_llm.api_key,
                                    max_retries=0)

    def reset(self, *, conversation_id, now) -> None:
        self.round = getattr(self, "round", 0) + 1

    def ingest(self, turn, *, now) -> None:
        pass

    def query(self, question, *, now) -> QueryResult:
        kind, n = question.split()
        return QueryResult(fragments=(Fragment(text=json.dumps(timed(self.client, kind, int(n), self.round))),))


def timed(client, kind: str, n: int, tag: object) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        if kind == "chat":
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q {tag} {i}"}])
        else:
            client.embeddings.create(model="e", input=[f"text {tag} {i}"])
        out.append((time.perf_counter() - start) * 1000)
    return out


def spread(values: list[float]) -> str:
    return f"min {min(values):7.2f}  median {statistics.median(values):7.2f}  max {max(values):7.2f} ms"


def hosted(cls, relay):
    from lsrep.embed.hashing import HashingEmbedder
    from lsrep.host.client import open_hosted

    return open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=HashingEmbedder(), llm=None, seed=0,
                       memory=relay)


def relay_for(kind: str, url: str | None):
    from lsrep.memory_model.accounting import CallBook
    from lsrep.memory_model.relay import MemoryRelay
    from lsrep.protocol.campaign import MemoryModelSpec

    spec = (MemoryModelSpec(kind="offline", dimensions=64) if kind == "offline"
            else MemoryModelSpec(base_url=url, model="m", api_key_env=""))
    return MemoryRelay(CallBook("bench", "bench", "bench"), llm=spec, embedder=spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import openai
    from memory_gateway import TimedGatewayAdapter  # importable by the host under this name

    from lsrep.llm.server import OpenAITestServer

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.calls} calls per case")
    with OpenAITestServer(embed_dim=64) as srv:
        direct = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        timed(direct, "chat", 10, "warm")
        for kind in ("chat", "embed"):
            print(f"{kind:5} direct             {spread(timed(direct, kind, args.calls, 'direct'))}")
            for upstream in ("endpoint", "offline"):
                adapter = hosted(TimedGatewayAdapter, relay_for(upstream, srv.base_url))
                adapter.reset(conversation_id="c", now=NOW)
                adapter.query(f"{kind} 10", now=NOW)  # warm-up
                adapter.reset(conversation_id="c", now=NOW)
                result = adapter.query(f"{kind} {args.calls}", now=NOW)
                adapter.close()
                print(f"{kind:5} gateway → {upstream:8} {spread(json.loads(result.fragments[0].text))}")
        starts = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            adapter = hosted(TimedGatewayAdapter, relay_for("endpoint", srv.base_url))
            adapter.reset(conversation_id="c", now=NOW)
            adapter.query("chat 1", now=NOW)
            adapter.close()
            starts.append((time.perf_counter() - start) * 1000)
        print(f"start-up (host + gateway + 1 call) {spread(starts)}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
