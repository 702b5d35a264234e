"""Cost and alarms of the context audit (content provenance + evidence metrics), replayed offline.

    python benchmarks/provenance_cost.py STORE [--run RUN_ID] [--condition NAME] [--repeats 3]

Reads every observation's stored context from a run store, rebuilds the trajectory's turn
index and audits each context again exactly as the engine does (`lsrep.context_audit`),
with fresh caches on every repeat. Prints per condition the alarm counts (the threshold
tuning view of docs/integrity.md) and the audit's wall time (min / median / max over the
repeats, index building included) next to the run's own unit time, so the added cost is a
share of a real replay. The machine load is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict

from lsrep.context_audit import audit_context
from lsrep.contract import Fragment
from lsrep.protocol.models import Turn
from lsrep.provenance import TurnIndex
from lsrep.references import Expected
from lsrep.store import RunStore


def load(store: RunStore, run_id: str, condition: str | None):
    turns: dict[str, list[Turn]] = defaultdict(list)
    for r in store.rows("select * from turns where run_id = ? order by trajectory, idx", [run_id]):
        turns[r["trajectory"]].append(Turn(turn_id=r["turn_id"], session_id=r["session_id"],
                                           timestamp=r["timestamp"], role=r["role"], speaker=r["speaker"],
                                           content=r["content"]))
    frags: dict[str, list[Fragment]] = defaultdict(list)
    for r in store.rows("select f.*, coalesce(t.text, f.text) as text from fragments f join observations o on o.obs_id = f.obs_id "
                        "left join fragment_texts t on t.sha256 = f.text_sha256 "
                        "where o.run_id = ? order by f.obs_id, f.rank", [run_id]):
        frags[r["obs_id"]].append(Fragment(text=r["text"], source_turn_ids=tuple(json.loads(r["source_turn_ids"])),
                                           kind=r["kind"]))
    sql = "select obs_id, unit_id, condition, trajectory, prefix_len, expected from observations where run_id = ?"
    params = [run_id]
    if condition:
        sql += " and condition = ?"
        params.append(condition)
    obs = store.rows(sql + " order by unit_id, checkpoint, probe_id", params)
    return turns, frags, obs


def audit_all(turns, frags, obs):
    indexes: dict[tuple[str, str], tuple[TurnIndex, dict[str, int]]] = {}
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for o in obs:
        key = (o["unit_id"], o["trajectory"])
        if key not in indexes:  # the engine builds one index per unit
            ts = turns[o["trajectory"]]
            indexes[key] = (TurnIndex.of_turns(ts), {t.turn_id: i for i, t in enumerate(ts)})
        index, where = indexes[key]
        audit = audit_context(frags.get(o["obs_id"], []), o["prefix_len"],
                              Expected.model_validate_json(o["expected"]), index, where)
        t = totals[o["condition"]]
        for k in ("content_leaks", "unsourced", "misattributed", "duplicate_citations"):
            t[k] += audit.row[k]
        t["observations"] += 1
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("--run")
    ap.add_argument("--condition")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    store = RunStore(args.store)
    run_id = store.run(args.run)["run_id"] if args.run else store.latest_run()
    turns, frags, obs = load(store, run_id, args.condition)
    times, totals = [], None
    for _ in range(args.repeats):
        start = time.perf_counter()
        totals = audit_all(turns, frags, obs)
        times.append(time.perf_counter() - start)
    unit_s = defaultdict(float)
    for u in store.rows("select condition, elapsed_s from units where run_id = ?", [run_id]):
        unit_s[u["condition"]] += u["elapsed_s"]
    print(f"run {run_id}: {len(obs)} observations, {sum(len(v) for v in frags.values())} fragments; "
          f"load average {os.getloadavg()[0]:.2f}")
    for cond, t in sorted(totals.items()):
        print(f"  {cond:<20} obs {t['observations']:>6}  leaks {t['content_leaks']:>5}  unsourced {t['unsourced']:>6}  "
              f"misattributed {t['misattributed']:>5}  duplicates {t['duplicate_citations']:>5}  "
              f"units {unit_s[cond]:.1f}s")
    print(f"audit wall time over {args.repeats} repeats: min {min(times):.2f}s  median {statistics.median(times):.2f}s"
          f"  max {max(times):.2f}s")
    if args.condition:
        share = statistics.median(times) / unit_s[args.condition] if unit_s[args.condition] else float("nan")
        print(f"audit / unit time for {args.condition}: {share:.1%}")


if __name__ == "__main__":
    main()
