"""THALIA ingest and query cost per turn at 1k and 10k turns of history.

    python benchmarks/thalia_bench.py [--turns 10000] [--queries 50]

Runs the adapter the harness runs (replay-append ingest, read-only query, extractive
responder, hashing embedder) on a generated conversation. Ingest cost is the mean over the
1,000 turns that end at each mark; query cost is the mean over `--queries` probes asked at
the mark; an isolated probe is snapshot + query + restore. Per-turn ingest stays flat because the transcript index, the SQLite store and the
FTS index grow incrementally; query cost grows with the matches grep finds, never with a
rebuild.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsrep.adapters.thalia import Options, ThaliaAdapter  # noqa: E402

from lsrep.contract import AdapterSetup, ReplayTurn  # noqa: E402

WORDS = ("garden budget trip museum recipe guitar marathon invoice puppy kitchen novel laptop "
         "concert flight dentist cousin painting hiking coffee bakery report meeting tennis "
         "camera violin project holiday bicycle apartment lecture festival river market").split()
FILLER = "the a my our and then with about for really just also today maybe".split()
QUESTIONS = [
    "What did I say about the {w}?", "When was the {w} mentioned?",
    "How many times did we talk about my {w} and {v}?", "Do I still like the {w}?",
]


def make_turn(rng: random.Random, i: int, start: datetime) -> ReplayTurn:
    words = [rng.choice(WORDS if rng.random() < 0.4 else FILLER) for _ in range(rng.randint(10, 30))]
    if i % 97 == 0:
        words += ["remember", "that", "my", "code", "is", f"k{i}"]
    return ReplayTurn(turn_id=f"t{i}", session_id=f"s{i // 20}", conversation_id="bench", index=i,
                      timestamp=start + timedelta(minutes=7 * i),
                      role="user" if i % 2 == 0 else "assistant", content=" ".join(words))


def bench(turns: int, queries: int, marks: list[int]) -> list[dict]:
    rng = random.Random(7)
    start = datetime(2024, 1, 1, 9)
    with tempfile.TemporaryDirectory(prefix="thalia-bench-") as tmp:
        adapter = ThaliaAdapter(AdapterSetup(options=Options(), state_dir=Path(tmp) / "state"))
        adapter.reset(conversation_id="bench", now=start)
        rows, i = [], 0
        for mark in marks:
            window_start = max(0, mark - 1000)
            while i < window_start:
                adapter.ingest(make_turn(rng, i, start), now=start)
                i += 1
            t0 = time.perf_counter()
            measured = 0
            while i < mark:
                turn = make_turn(rng, i, start)
                adapter.ingest(turn, now=turn.timestamp)
                if (i + 1) % 20 == 0:
                    adapter.end_session(turn.session_id, now=turn.timestamp)
                i += 1
                measured += 1
            ingest_ms = (time.perf_counter() - t0) * 1000 / max(1, measured)
            now = start + timedelta(minutes=7 * mark)
            t0 = time.perf_counter()
            for q in range(queries):
                template = QUESTIONS[q % len(QUESTIONS)]
                adapter.query(template.format(w=rng.choice(WORDS), v=rng.choice(WORDS)), now=now)
            query_ms = (time.perf_counter() - t0) * 1000 / queries
            t0 = time.perf_counter()
            snap = adapter.snapshot()
            adapter.query("What did I say about the garden?", now=now)
            adapter.restore(snap)  # a read-only probe: nothing to copy back
            probe_ms = (time.perf_counter() - t0) * 1000
            probe = make_turn(rng, i, start)
            adapter.ingest(probe, now=probe.timestamp)
            t0 = time.perf_counter()
            adapter.restore(snap)  # the state changed: copy back and reopen
            restore_ms = (time.perf_counter() - t0) * 1000
            rows.append({"history": mark, "ingest_ms_per_turn": ingest_ms,
                         "query_ms_per_query": query_ms, "isolated_probe_ms": probe_ms,
                         "full_restore_ms": restore_ms,
                         "lines": len(adapter.thalia.transcript)})  # type: ignore[union-attr]
        adapter.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    marks = sorted({m for m in (1000, args.turns) if m <= args.turns})
    t0 = time.perf_counter()
    rows = bench(args.turns, args.queries, marks)
    print(f"{'history':>8} {'lines':>7} {'ingest ms/turn':>15} {'query ms/query':>15} "
          f"{'isolated probe ms':>18} {'full restore ms':>16}")
    for r in rows:
        print(f"{r['history']:>8} {r['lines']:>7} {r['ingest_ms_per_turn']:>15.3f} "
              f"{r['query_ms_per_query']:>15.2f} {r['isolated_probe_ms']:>18.1f} "
              f"{r['full_restore_ms']:>16.1f}")
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
