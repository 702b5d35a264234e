"""Executor speed-up: in-process vs process pool (1 and 2 workers) vs Ray (issue 10's benchmark).

    python benchmarks/executors.py [--questions 80] [--sessions 12]

Runs the LongMemEval diagnostic over a generated LongMemEval-schema file (many small
independent trajectories) with `vector-rag` and `full-context`, the offline answerer and
judge, once per executor, and prints wall time, speed-up over in-process, and Ray's
overhead per unit.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from lsrep.probes.generator import generate_longmemeval_file

from lsrep.executors.local import InProcessExecutor, ProcessPoolExecutor
from lsrep.longmemeval import run_longmemeval, spec_from_systems


def timed(spec, executor) -> tuple[float, int]:
    start = time.perf_counter()
    out = run_longmemeval(spec, executor=executor, fresh=True)
    return time.perf_counter() - start, out.units_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = generate_longmemeval_file(Path(tmp) / "lme.json", n_questions=args.questions,
                                         sessions_per_question=args.sessions, seed=1)
        print(f"data: {args.questions} questions x {args.sessions} sessions, {data.stat().st_size / 2**20:.1f} MiB")
        results = {}
        runs = [("in-process", InProcessExecutor()), ("process x1", ProcessPoolExecutor(1)),
                ("process x2", ProcessPoolExecutor(2))]
        ray_executor = None
        if not args.no_ray:
            try:
                from lsrep.executors.ray_cluster import RayExecutor

                ray_executor = RayExecutor(workers=2)
                ray_executor._ensure()  # start Ray before timing: startup is a one-off, not per unit
                runs.append(("ray x2", ray_executor))
            except Exception as exc:  # noqa: BLE001 - Ray is optional
                print(f"ray: skipped ({exc})")
        for name, executor in runs:
            spec = spec_from_systems(["vector-rag", "full-context"], data, store=Path(tmp) / f"{name}.sqlite")
            seconds, units = timed(spec, executor)
            results[name] = (seconds, units)
            base = results["in-process"][0]
            print(f"{name:<11} {seconds:7.2f} s  {units} units  {units / seconds:6.1f} units/s  "
                  f"speed-up {base / seconds:4.2f}x")
        if ray_executor is not None:
            ray_s, units = results["ray x2"]
            pool_s, _ = results["process x2"]
            print(f"ray overhead per unit vs process x2: {(ray_s - pool_s) / units * 1000:+.1f} ms")
            ray_executor.shutdown()


if __name__ == "__main__":
    main()
