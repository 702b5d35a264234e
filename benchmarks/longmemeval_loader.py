"""Benchmark the streaming LongMemEval loader on an S-scale file.

Generates a LongMemEval-schema file (500 questions x 50 sessions by default,
about the size of ``longmemeval_s``) in a temporary folder, or takes a real
file with ``--file``, then iterates every item twice: once for wall time, once
under tracemalloc for the Python-heap peak. ``ru_maxrss`` is the loader
process's resident-set peak; the file is generated in a child process so its
memory is not counted.

    python benchmarks/longmemeval_loader.py [--questions 500] [--sessions 50] [--file PATH]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from lsrep.probes.generator import generate_longmemeval_file
from lsrep.probes.longmemeval import iter_longmemeval


def _mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _load(path: Path) -> tuple[int, int, int]:
    items = turns = abstentions = 0
    for item in iter_longmemeval(path):
        items += 1
        turns += len(item.trajectory)
        abstentions += item.probe.kind == "abstention"
    return items, turns, abstentions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--file", type=Path, help="benchmark this LongMemEval file instead")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / "longmemeval_s_synthetic.json"
            started = time.perf_counter()
            child = multiprocessing.get_context("fork").Process(
                target=generate_longmemeval_file,
                args=(path, args.questions, args.sessions, args.seed),
            )
            child.start()
            child.join()
            if child.exitcode != 0:
                print("generation failed", file=sys.stderr)
                return 1
            print(f"generated {args.questions} questions x {args.sessions} sessions "
                  f"in {time.perf_counter() - started:.1f} s")
        print(f"file: {path} ({_mib(path.stat().st_size)}, {path.stat().st_size:,} bytes)")

        started = time.perf_counter()
        items, turns, abstentions = _load(path)
        wall = time.perf_counter() - started
        print(f"loader: {items} items, {turns:,} turns, {abstentions} abstention probes")
        print(f"loader wall time: {wall:.2f} s ({wall / max(items, 1) * 1000:.1f} ms per item)")

        started = time.perf_counter()
        tracemalloc.start()
        _load(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak Python heap while loading (tracemalloc): {_mib(peak)} "
              f"(traced pass {time.perf_counter() - started:.1f} s)")
        # ru_maxrss is KiB on Linux.
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"peak resident set of the loader process (ru_maxrss): {_mib(rss)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
