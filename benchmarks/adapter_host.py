"""Cost of the out-of-process adapter host: in-process vs host, start-up included (issue 17).

    python benchmarks/adapter_host.py [--repeats 3] [--calls 300] [--no-locomo]

1. Host start-up: a HostProcess started and one adapter built in it, then closed (min/median/max).
2. Per call: the round trip of one `query` to the `null` adapter in its host, and one ingest inside
   a batch (min/median/max over batches).
3. Whole runs: the quickstart campaign (null, full-context, vector-rag) and one LoCoMo conversation
   (conv-26; null, full-context, vector-rag, thalia) run end to end with `--adapter-host in-process`
   and with the default host, each `--repeats` times, in-process executor, fresh store each time.
Machine load (1-minute load average) is printed before and after; the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from lsrep.contract import ReplayTurn
from lsrep.embed.hashing import HashingEmbedder
from lsrep.executors.local import InProcessExecutor
from lsrep.harness import validate_condition
from lsrep.host.client import open_hosted
from lsrep.host.launch import isolation
from lsrep.runner import run_campaign

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent.parent / "shared" / "datasets" / "locomo" / "locomo-dev7.json"
if not LOCOMO.exists():
    LOCOMO = Path("/work/shared/datasets/locomo/locomo-dev7.json")
NOW = datetime(2026, 3, 2, tzinfo=UTC)


def spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return f"min {min(v):8.2f} {unit}  median {statistics.median(v):8.2f} {unit}  max {max(v):8.2f} {unit}"


def startup(repeats: int) -> list[float]:
    cls, _ = validate_condition("vector-rag", {}, (), "bench")
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=HashingEmbedder(), llm=None,
                              seed=0)
        adapter.reset(conversation_id="c", now=NOW)
        out.append(time.perf_counter() - start)
        adapter.close()
    return out


def per_call(calls: int) -> tuple[list[float], list[float]]:
    cls, _ = validate_condition("null", {}, (), "bench")
    adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
    adapter.reset(conversation_id="c", now=NOW)
    queries = []
    for _ in range(calls):
        start = time.perf_counter()
        adapter.query("what?", now=NOW)
        queries.append(time.perf_counter() - start)
    ingests = []
    for b in range(20):
        turns = [ReplayTurn(turn_id=f"t{b}-{i}", session_id="s", conversation_id="c", index=i, timestamp=NOW,
                            role="user", content="a plain sentence of about twelve words said in the journal")
                 for i in range(50)]
        start = time.perf_counter()
        adapter.prefetch([("ingest", (t,), {"now": NOW}) for t in turns])
        for t in turns:
            adapter.ingest(t, now=NOW)
        ingests.append((time.perf_counter() - start) / len(turns))
    adapter.close()
    return queries, ingests


def locomo_campaign(folder: Path) -> Path:
    path = folder / "locomo-one.toml"
    conditions = "".join(f'[[conditions]]\nname = "{n}"\nsystem = "{n}"\n\n'
                         for n in ("null", "full-context", "vector-rag", "thalia"))
    path.write_text(f'name = "locomo-one"\nseed = 7\nschedule = "{REPO / "schedules" / "nightly.toml"}"\n\n'
                    f'[[trajectories]]\nid = "conv-26"\nlocomo = "{LOCOMO}"\n\n{conditions}'
                    '[answerer]\nkind = "extractive"\ncontext_window = 32768\n', encoding="utf-8")
    return path


def whole_runs(campaign: Path, repeats: int, folder: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"in-process": [], "process": []}
    for r in range(repeats):
        for mode in times:  # interleaved, so drifting machine load hits both modes alike
            store = folder / f"{campaign.stem}-{mode}-{r}.sqlite"
            start = time.perf_counter()
            run_campaign(campaign, executor=InProcessExecutor(), fresh=True, store_path=store, adapter_host=mode)
            times[mode].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args()
    print(f"isolation: {isolation()}  cpus: {os.cpu_count()}  load before: {os.getloadavg()[0]:.2f}")
    print(f"host start-up + build + reset   {spread(startup(max(5, args.repeats)), 'ms', 1000)}")
    queries, ingests = per_call(args.calls)
    print(f"query round trip (null)         {spread(queries, 'ms', 1000)}")
    print(f"ingest inside a batch (null)    {spread(ingests, 'ms', 1000)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        campaigns = [("quickstart", REPO / "campaigns" / "quickstart.toml")]
        if not args.no_locomo and LOCOMO.exists():
            campaigns.append(("locomo conv-26", locomo_campaign(folder)))
        for label, campaign in campaigns:
            times = whole_runs(campaign, args.repeats, folder)
            base, hosted = statistics.median(times["in-process"]), statistics.median(times["process"])
            print(f"{label:<15} in-process {spread(times['in-process'], 's')}")
            print(f"{label:<15} host       {spread(times['process'], 's')}")
            print(f"{label:<15} overhead   {hosted - base:+.2f} s median ({(hosted - base) / base:+.1%})")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
