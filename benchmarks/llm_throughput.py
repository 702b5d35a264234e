"""LLM throughput against the in-process server at fixed latency: the client alone, then a campaign.

    python benchmarks/llm_throughput.py [--latency 0.2] [--levels 8 32] [--repeats 3]
                                        [--system null] [--judge] [--client-only | --campaign-only]

Client: calls per second of LLMClient.complete_many for distinct, uncached requests (one untimed
warm-up round per level) and the ratio to the ideal (concurrency / latency).

Campaign: a real campaign run (`lsrep.runner.run_campaign`: preflight, store, adapter host,
replay, judges, all included) of LoCoMo conv-26 (shared/datasets; 19 session-end checkpoints,
1,932 probes) into one system, answered by an LLM answerer whose endpoint has the level's
concurrency, each run in a fresh store (no cached replies). It prints model calls per second over
the whole run and the ratio to the ideal; `--judge` adds a model judge on the same endpoint
(calls then count answers and judgements). min / median / max over `--repeats` runs, and the
load average before each level.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from lsrep.llm.client import LLMClient
from lsrep.llm.config import EndpointSpec
from lsrep.llm.records import ChatRequest
from lsrep.llm.server import OpenAITestServer

REPO = Path(__file__).resolve().parent.parent
LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev7.json"
# 20 full waves per level, so the last partial wave does not dominate the steady-state rate.
DEFAULT_CALLS = {1: 20, 8: 160, 32: 640}


def measure_client(srv: OpenAITestServer, concurrency: int, calls: int) -> tuple[float, int]:
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


def reply(request) -> str:
    system = request.messages[0]["content"] if request.messages else ""
    if system.startswith("You grade answers"):
        return '{"label": "correct", "rubric": 5, "rationale": "bench"}'
    return "I don't know"


def campaign_text(folder: Path, base_url: str, concurrency: int, system: str, judge: bool) -> Path:
    endpoint = (f'base_url = "{base_url}"\nmodel = "bench"\napi_key_env = "LSREP_BENCH_KEY"\n'
                f"max_retries = 0\ntimeout_s = 30.0\nconcurrency = {concurrency}\ncontext_window = 200000\n")
    judges = f'[[judges]]\nname = "evolving"\nkind = "evolving"\n[judges.endpoint]\n{endpoint}' if judge else ""
    path = folder / "throughput.toml"
    path.write_text(f'''name = "llm-throughput"
seed = 7
store = "{folder / 'store.sqlite'}"
schedule = "{REPO / 'schedules' / 'session-end.toml'}"

[[trajectories]]
id = "conv-26"
locomo = "{LOCOMO}"

[[conditions]]
name = "{system}"
system = "{system}"

[answerer]
kind = "llm"
context_window = 200000
[answerer.endpoint]
{endpoint}
{judges}''')
    return path


def measure_campaign(srv: OpenAITestServer, concurrency: int, system: str, judge: bool) -> tuple[float, int, int]:
    """(seconds, model calls, failed calls) for one fresh run of the campaign."""
    from lsrep.runner import run_campaign
    from lsrep.store import RunStore

    with tempfile.TemporaryDirectory(prefix="lsrep-llm-bench-") as tmp:
        path = campaign_text(Path(tmp), srv.base_url, concurrency, system, judge)
        started = time.perf_counter()
        out = run_campaign(path)
        elapsed = time.perf_counter() - started
        row = RunStore(out.store_path).rows(
            "select count(*) as n, sum(status != 'ok') as failed from llm_calls where run_id = ?", [out.run_id])[0]
    return elapsed, row["n"], row["failed"] or 0


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return "/".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server latency (s)")
    parser.add_argument("--levels", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--calls", type=int, default=None, help="client: calls per level")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--system", default="null", help="campaign: the system replayed")
    parser.add_argument("--judge", action="store_true", help="campaign: add a model judge")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--client-only", action="store_true")
    only.add_argument("--campaign-only", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("LSREP_BENCH_KEY", "sk-bench-dummy")

    print(f"server latency {args.latency * 1000:.0f} ms; values are min/median/max over {args.repeats} runs")
    with OpenAITestServer(reply=reply, latency_s=args.latency) as srv:
        if not args.campaign_only:
            print("client alone (LLMClient.complete_many)")
            print(f"{'concurrency':>11} {'calls':>6} {'calls/s':>20} {'ideal':>7} {'ratio':>20} {'load':>5}")
            for level in args.levels:
                load = os.getloadavg()[0]
                calls = args.calls or DEFAULT_CALLS.get(level, 20 * level)
                rates = []
                for _ in range(args.repeats):
                    elapsed, failed = measure_client(srv, level, calls)
                    if failed:
                        raise SystemExit(f"{failed} client calls failed at {level}")
                    rates.append(calls / elapsed)
                ideal = level / args.latency
                print(f"{level:>11} {calls:>6} {spread(rates, '{:.1f}'):>20} {ideal:>7.1f} "
                      f"{spread([r / ideal for r in rates], '{:.1%}'):>20} {load:>5.1f}")
                if srv.max_in_flight > level:
                    raise SystemExit(f"bound broken: {srv.max_in_flight} in flight at {level}")
                srv.reset_counters()
        if args.client_only:
            return
        if not LOCOMO.exists():
            raise SystemExit(f"campaign: LoCoMo data not found at {LOCOMO}")
        print(f"campaign (run_campaign, LoCoMo conv-26, system {args.system}, "
              f"{'answerer + judge' if args.judge else 'answerer'})")
        print(f"{'concurrency':>11} {'calls':>6} {'seconds':>20} {'calls/s':>20} {'ideal':>7} {'ratio':>20} "
              f"{'in flight':>9} {'load':>5}")
        for level in args.levels:
            load = os.getloadavg()[0]
            secs, rates, calls = [], [], 0
            for _ in range(args.repeats):
                elapsed, calls, failed = measure_campaign(srv, level, args.system, args.judge)
                if failed:
                    raise SystemExit(f"{failed} model calls failed at {level}")
                secs.append(elapsed)
                rates.append(calls / elapsed)
            ideal = level / args.latency
            print(f"{level:>11} {calls:>6} {spread(secs):>20} {spread(rates, '{:.1f}'):>20} {ideal:>7.1f} "
                  f"{spread([r / ideal for r in rates], '{:.1%}'):>20} {srv.max_in_flight:>9} {load:>5.1f}")
            if srv.max_in_flight > level:
                raise SystemExit(f"bound broken: {srv.max_in_flight} in flight at {level}")
            srv.reset_counters()


if __name__ == "__main__":
    main()
