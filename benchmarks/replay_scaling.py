"""Replay cost as history grows, harness overhead, and peak memory (issue 2's benchmark).

    python benchmarks/replay_scaling.py [--turns 1000 10000] [--checkpoints 10]

Builds synthetic trajectories (sessions of 20 turns, facts that change), asks the same
probes at the same number of evenly spaced checkpoints, and replays them with `null`
and `vector-rag` through the real engine and store. Prints wall time per size, the
10k/1k ratio (near 10 means linear), null vs vector-rag time, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lsrep.runner import run_campaign

WORDS = ("garden river station coffee budget meeting report ticket window orange violin harbour "
         "project museum bicycle lantern market kitchen office library").split()


def write_inputs(folder: Path, n_turns: int, n_checkpoints: int) -> Path:
    t0 = datetime(2025, 1, 1, 9, tzinfo=UTC)
    cities = ["Lisbon", "Porto", "Braga", "Faro", "Coimbra"]
    turns, probes = [], []
    for i in range(n_turns):
        session = i // 20
        text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(18))
        if i % 997 == 5:
            text = f"I moved to {cities[(i // 997) % len(cities)]} this week. " + text
        turns.append({"turn_id": f"t{i:06d}", "session_id": f"s{session:05d}",
                      "timestamp": (t0 + timedelta(days=session, minutes=i % 20)).isoformat(),
                      "role": "user" if i % 2 == 0 else "assistant", "content": text})
    moves = [i for i in range(n_turns) if i % 997 == 5]
    versions = []
    for k, i in enumerate(moves):
        v = {"answer": cities[(i // 997) % len(cities)], "valid_from": f"t{i:06d}", "evidence": [f"t{i:06d}"]}
        if k + 1 < len(moves):
            v["valid_until"] = f"t{moves[k + 1]:06d}"
        versions.append(v)
    probes.append({"probe_id": "city", "question": "Which city did I move to?", "kind": "current",
                   "references": versions})
    for j in range(9):
        probes.append({"probe_id": f"topic-{j}", "question": f"What did I say about the {WORDS[j]} and the {WORDS[j + 5]}?",
                       "kind": "abstention"})
    step = n_turns // n_checkpoints
    cp_ids = [f"t{min(n_turns - 1, (k + 1) * step - 1):06d}" for k in range(n_checkpoints)]
    (folder / "trajectory.jsonl").write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    (folder / "probes.jsonl").write_text("\n".join(json.dumps(p) for p in probes) + "\n")
    campaign = folder / "campaign.toml"
    campaign.write_text(f'''name = "scaling-{n_turns}"
store = "store.sqlite"
[schedule]
name = "fixed-checkpoints"
[schedule.checkpoints]
at = ["turn_ids"]
turn_ids = {json.dumps(cp_ids)}
[[trajectories]]
id = "synthetic"
trajectory = "trajectory.jsonl"
probes = "probes.jsonl"
[[conditions]]
name = "{{system}}"
system = "{{system}}"
''')
    return campaign


def timed_run(campaign: Path, system: str) -> float:
    text = campaign.read_text().replace("{system}", system)
    path = campaign.with_name(f"campaign-{system}.toml")
    path.write_text(text)
    start = time.perf_counter()
    run_campaign(path, fresh=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--checkpoints", type=int, default=10)
    args = parser.parse_args()
    results: dict[str, dict[int, float]] = {"null": {}, "vector-rag": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.turns:
            folder = Path(tmp) / str(n)
            folder.mkdir()
            campaign = write_inputs(folder, n, args.checkpoints)
            for system in results:
                results[system][n] = timed_run(campaign, system)
                print(f"{system:<11} {n:>6} turns, {args.checkpoints} checkpoints x 10 probes: "
                      f"{results[system][n]:7.2f} s")
    lo, hi = min(args.turns), max(args.turns)
    for system, times in results.items():
        print(f"{system:<11} {hi}/{lo} time ratio: {times[hi] / times[lo]:.2f} (linear = {hi / lo:.0f})")
    for n in args.turns:
        print(f"harness overhead at {n} turns: null / vector-rag time = "
              f"{results['null'][n] / results['vector-rag'][n]:.2f}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
