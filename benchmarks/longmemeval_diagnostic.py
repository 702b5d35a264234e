"""LongMemEval diagnostic at S scale: wall time and peak memory (issue 5's benchmark).

    python benchmarks/longmemeval_diagnostic.py [--questions 500] [--sessions 50] [--file PATH]

Generates a LongMemEval-schema file at S scale (or uses --file), then measures in
separate processes (so peaks do not mix): the streaming loader alone, and the whole
diagnostic with `vector-rag` and the offline answerer and judge. Prints wall time,
peak RSS, and peak RSS as a multiple of the file size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, data, store = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
start = time.perf_counter()
if mode == "loader":
    from lsrep.probes.longmemeval import iter_longmemeval
    n = sum(1 for _ in iter_longmemeval(data))
    extra = {"questions": n}
else:
    from lsrep.longmemeval import run_longmemeval, spec_from_systems
    out = run_longmemeval(spec_from_systems(["vector-rag"], data, store=store))
    extra = {"questions": out.questions, "units": out.units_run, "failed": out.failed_units}
wall = time.perf_counter() - start
print(json.dumps({"wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))
"""


def measure(mode: str, data: Path, store: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(data), str(store)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--file", type=Path, help="an existing LongMemEval file instead of a generated one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.file
        if data is None:
            from lsrep.probes.generator import generate_longmemeval_file

            data = generate_longmemeval_file(Path(tmp) / "lme_s.json", n_questions=args.questions,
                                             sessions_per_question=args.sessions, seed=7)
        size_mb = data.stat().st_size / 2**20
        print(f"file: {data.name}, {size_mb:.0f} MiB")
        for mode in ("loader", "diagnostic"):
            r = measure(mode, data, Path(tmp) / "store.sqlite")
            extra = ", ".join(f"{k} {v}" for k, v in r.items() if k not in ("wall_s", "peak_rss_mb"))
            print(f"{mode:<11} wall {r['wall_s']:7.1f} s   peak RSS {r['peak_rss_mb']:6.0f} MB "
                  f"({r['peak_rss_mb'] / size_mb:.2f}x the file)   {extra}")


if __name__ == "__main__":
    main()
