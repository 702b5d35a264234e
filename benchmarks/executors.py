"""Executor speed-up, start-up included: in-process, `lsrep run`'s default, overlapped, process pool (1, 2), sharded (this process and a worker), Ray (issue 20).

    python benchmarks/executors.py [--questions 80] [--sessions 12] [--repeat 3] [--no-ray]

Runs the LongMemEval diagnostic over a generated LongMemEval-schema file (many small
independent units) with `vector-rag` and `full-context`, the offline answerer and judge,
once per executor per repetition (executors interleaved, so each sees the same load), and
prints wall and CPU time with min / median / max, the speed-up over in-process, and the
1-minute load average at the start of each run. Every timing includes the executor's
start-up: the workers' fork server started and its imports, workers forked, Ray started
(`ray.init`) and shut down. CPU is this process plus its waited-for children; adapter hosts are
reaped by their fork server, so their CPU is not in it. "Busy" is the whole machine's busy CPU
over the run (from /proc/stat, hosts included, and anything else running): on an idle machine it
is the run's total CPU, and busy / wall the cores it kept busy. Compare wall times on an idle
machine, and say which.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from lsrep.probes.generator import generate_longmemeval_file

from lsrep.executors.auto import AutoExecutor
from lsrep.executors.local import InProcessExecutor, ProcessPoolExecutor
from lsrep.executors.overlap import OverlappedExecutor
from lsrep.executors.shard import ShardedExecutor
from lsrep.longmemeval import run_longmemeval, spec_from_systems


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _busy() -> float:
    """CPU seconds the whole machine has spent busy (not idle or waiting for I/O); NaN without /proc."""
    try:
        with open("/proc/stat") as fh:
            ticks = [int(v) for v in fh.readline().split()[1:]]
    except OSError:
        return float("nan")
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _ray(workers: int):
    from lsrep.executors.ray_cluster import RayExecutor

    return RayExecutor(workers=workers)


EXECUTORS = {
    "in-process": InProcessExecutor,
    "auto (lsrep run)": AutoExecutor,
    "overlapped x2": lambda: OverlappedExecutor(2),
    "process x1": lambda: ProcessPoolExecutor(1),
    "process x2": lambda: ProcessPoolExecutor(2),
    "sharded x2": lambda: ShardedExecutor(2),
    "ray x2": lambda: _ray(2),
}


def timed(spec, make) -> tuple[float, float, int, float, float]:
    load = os.getloadavg()[0]
    start, cpu, busy = time.perf_counter(), _cpu(), _busy()
    executor = make()  # start-up is part of the figure
    out = run_longmemeval(spec, executor=executor, fresh=True)
    if hasattr(executor, "shutdown"):
        executor.shutdown()
    return time.perf_counter() - start, _cpu() - cpu, out.units_run, load, _busy() - busy


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return "min {} / median {} / max {}".format(*(fmt.format(v) for v in
                                                 (min(values), statistics.median(values), max(values))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--only", help="comma-separated executor names (default: all)")
    args = parser.parse_args()
    names = [n for n in EXECUTORS if not (args.no_ray and n.startswith("ray"))]
    if args.only:
        names = [n for n in names if n in {x.strip() for x in args.only.split(",")}]
    if any(n.startswith("ray") for n in names):
        try:
            import ray  # noqa: F401
        except ImportError:
            print("ray: skipped (not installed)")
            names = [n for n in names if not n.startswith("ray")]
    with tempfile.TemporaryDirectory() as tmp:
        data = generate_longmemeval_file(Path(tmp) / "lme.json", n_questions=args.questions,
                                         sessions_per_question=args.sessions, seed=1)
        print(f"data: {args.questions} questions x {args.sessions} sessions, {data.stat().st_size / 2**20:.1f} MiB; "
              f"{os.cpu_count()} cores")
        results: dict[str, list[tuple[float, float, int, float, float]]] = {n: [] for n in names}
        for rep in range(args.repeat):
            for name in names:
                spec = spec_from_systems(["vector-rag", "full-context"], data, store=Path(tmp) / f"{rep}-{name}.sqlite")
                results[name].append(timed(spec, EXECUTORS[name]))
        base = statistics.median(r[0] for r in results.get("in-process", [(float("nan"),)]))
        for name, runs in results.items():
            walls = [r[0] for r in runs]
            units = runs[0][2]
            print(f"{name:<17} wall {spread(walls)} s  CPU {spread([r[1] for r in runs])} s  "
                  f"busy {spread([r[4] for r in runs])} s ({statistics.median(r[4] / r[0] for r in runs):.2f} cores)  "
                  f"{units} units  speed-up (median) {base / statistics.median(walls):4.2f}x  "
                  f"load at start {spread([r[3] for r in runs], '{:.1f}')}")


if __name__ == "__main__":
    main()
