"""What the context audit adds to a real replay: LoCoMo through vector-rag, audit on vs off.

    python benchmarks/provenance_overhead.py [--repeats 3] [--system vector-rag]
        [--data ../shared/datasets/locomo/locomo-dev7.json] [--conversations conv-26 conv-30]

Runs the same campaign (the given LoCoMo conversations, one system, the nightly schedule,
offline answerer) through the real engine and store, alternating a normal run with one whose
audit is replaced by a no-op (index building skipped too). Wall time per run includes loading,
replay, answering, judging and writing the store. Prints min / median / max per mode, the
median difference and its share, and the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import lsrep.engine as engine
from lsrep.context_audit import ContextAudit
from lsrep.provenance import FragmentVerdict
from lsrep.runner import run_campaign

REPO = Path(__file__).resolve().parents[1]
_BLANK = FragmentVerdict(0, None, None, 0, False, False, None)


def _no_audit(fragments, prefix_len, expected, index, turn_index):
    return ContextAudit({}, tuple(_BLANK for _ in fragments), tuple(False for _ in fragments))


class _NoIndex:
    @staticmethod
    def of_turns(turns):
        return None


def campaign(folder: Path, data: Path, conversations: list[str], system: str) -> Path:
    trajectories = "\n".join(f'[[trajectories]]\nid = "{c}"\nlocomo = "{data}"\n' for c in conversations)
    path = folder / "campaign.toml"
    path.write_text(f'''name = "provenance-overhead"
store = "store.sqlite"
schedule = "{REPO / 'schedules' / 'nightly.toml'}"
{trajectories}
[[conditions]]
name = "{system}"
system = "{system}"
''')
    return path


def timed(path: Path, audit: bool) -> float:
    saved = engine.audit_context, engine.TurnIndex
    if not audit:
        engine.audit_context, engine.TurnIndex = _no_audit, _NoIndex
    try:
        start = time.perf_counter()
        run_campaign(path, fresh=True)
        return time.perf_counter() - start
    finally:
        engine.audit_context, engine.TurnIndex = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--system", default="vector-rag")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "datasets" / "locomo" / "locomo-dev7.json")
    ap.add_argument("--conversations", nargs="+", default=["conv-26", "conv-30"])
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        path = campaign(Path(tmp), args.data.resolve(), args.conversations, args.system)
        timed(path, True)  # warm-up: imports, dataset parse caches
        for _ in range(args.repeats):
            for audit in (False, True):
                times[audit].append(timed(path, audit))
    on, off = statistics.median(times[True]), statistics.median(times[False])
    print(f"{args.system} on {', '.join(args.conversations)}: {args.repeats} runs per mode; "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    for label, key in (("audit off", False), ("audit on", True)):
        xs = times[key]
        print(f"  {label:<10} min {min(xs):.2f}s  median {statistics.median(xs):.2f}s  max {max(xs):.2f}s")
    print(f"  added: {on - off:+.2f}s median ({(on - off) / off:+.1%} of the run without the audit)")


if __name__ == "__main__":
    main()
