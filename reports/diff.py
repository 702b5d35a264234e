"""`lsrep diff RUN_A RUN_B`: where two runs of a campaign differ, per condition and checkpoint.

Units are matched by (condition, trajectory, repetition), checkpoints by ordinal, observations by
probe. For each checkpoint it reports which of these differ: the state digest (before and after the
checkpoint's probes), and, per probe, the returned context (`context_sha256`: fragment texts and
citations in rank order), the answer, and the label of the chosen judge (deterministic by default).
A checkpoint or probe present in one run only is reported as missing from the other, and a
condition whose replay plans differ is said to (a different schedule or input, not nondeterminism).

Exit status as `diff(1)`: 0 when the runs agree everywhere compared, 1 when they differ. Registered
through the `lsrep.commands` entry-point group (pyproject.toml)."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from lsrep.errors import LsrepError

DEFAULT_STORE = Path("runs/lsrep.sqlite")
ASPECTS = ("state digest", "context", "answer", "label")
"""What is compared; a differing checkpoint lists the aspects that differ."""

_Key = tuple[str, str, int, int]
"""(condition, trajectory, repetition, checkpoint ordinal)."""


def _resolve(store: Any, run: str) -> str:
    return store.latest_run() if run == "latest" else store.run(run)["run_id"]


def _snapshot(store: Any, run_id: str, judge: str) -> dict[str, Any]:
    """What a run observed, keyed for matching: checkpoints, probes and the plan digests."""
    units = {u["unit_id"]: (u["condition"], u["trajectory"], int(u["repetition"])) for u in store.rows(
        "select unit_id, condition, trajectory, repetition from units where run_id = ?", [run_id])}
    checkpoints: dict[_Key, tuple[Any, Any]] = {}
    for c in store.rows("select unit_id, ordinal, state_digest, state_digest_after from checkpoints "
                        "where run_id = ?", [run_id]):
        if c["unit_id"] in units:
            checkpoints[(*units[c["unit_id"]], int(c["ordinal"]))] = (c["state_digest"], c["state_digest_after"])
    probes: dict[_Key, dict[str, dict[str, Any]]] = defaultdict(dict)
    for o in store.rows(
        "select o.condition, o.trajectory, o.repetition, o.checkpoint, o.probe_id, o.context_sha256, o.answer, "
        "o.status, j.outcome from observations o left join judgements j on j.obs_id = o.obs_id and j.judge = ? "
        "where o.run_id = ?", [judge, run_id],
    ):
        key = (o["condition"], o["trajectory"], int(o["repetition"]), int(o["checkpoint"]))
        probes[key][o["probe_id"]] = {"context": (o["status"], o["context_sha256"]), "answer": o["answer"],
                                      "label": o["outcome"]}
    plans = store.run(run_id)["manifest"].get("plans", {})
    return {"checkpoints": checkpoints, "probes": dict(probes), "plans": plans,
            "conditions": sorted({k[0] for k in checkpoints} | {k[0] for k in probes})}


def diff_runs(store_a: Any, run_a: str, store_b: Any, run_b: str, *, judge: str = "deterministic") -> dict[str, Any]:
    """The differences between two runs, per condition (see the module docstring); JSON-ready."""
    a, b = _snapshot(store_a, run_a, judge), _snapshot(store_b, run_b, judge)
    out: dict[str, Any] = {"run_a": run_a, "run_b": run_b, "judge": judge, "conditions": {}}
    for cond in sorted(set(a["conditions"]) | set(b["conditions"])):
        entry: dict[str, Any] = {"checkpoints": [], "compared": 0}
        if cond not in a["conditions"] or cond not in b["conditions"]:
            entry["only_in"] = "a" if cond in a["conditions"] else "b"
        plans = sorted({p.partition("/")[2] for p in set(a["plans"]) | set(b["plans"])
                        if p.partition("/")[0] == cond and a["plans"].get(p) != b["plans"].get(p)})
        if plans and "only_in" not in entry:
            entry["plans_differ"] = plans
        keys = sorted({k for k in [*a["checkpoints"], *a["probes"], *b["checkpoints"], *b["probes"]] if k[0] == cond})
        for key in keys:
            entry["compared"] += 1
            found = _checkpoint_diff(key, a, b)
            if found:
                entry["checkpoints"].append(found)
        out["conditions"][cond] = entry
    out["identical"] = not any(e["checkpoints"] or "only_in" in e or "plans_differ" in e
                               for e in out["conditions"].values())
    return out


def _checkpoint_diff(key: _Key, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    _, trajectory, repetition, ordinal = key
    differs: list[str] = []
    missing = [side for side, snap in (("a", a), ("b", b)) if key not in snap["checkpoints"] and key not in snap["probes"]]
    if not missing and a["checkpoints"].get(key) != b["checkpoints"].get(key):
        differs.append("state digest")
    pa, pb = a["probes"].get(key, {}), b["probes"].get(key, {})
    probes: dict[str, list[str]] = {}
    for probe in sorted(set(pa) | set(pb)):
        if probe not in pa or probe not in pb:
            probes[probe] = [f"missing from {'a' if probe not in pa else 'b'}"]
            continue
        aspects = [name for name in ("context", "answer", "label") if pa[probe][name] != pb[probe][name]]
        if aspects:
            probes[probe] = aspects
    for name in ("context", "answer", "label"):
        if any(name in v for v in probes.values()):
            differs.append(name)
    if any(v[0].startswith("missing") for v in probes.values()):
        differs.append("probes missing")
    if not (differs or missing):
        return None
    row: dict[str, Any] = {"trajectory": trajectory, "repetition": repetition, "checkpoint": ordinal,
                           "differs": differs, "probes": probes}
    if missing:
        row["missing_from"] = missing[0]
    return row


def format_diff(result: dict[str, Any]) -> str:
    """The differences as text: one line per differing checkpoint, grouped by condition."""
    lines = [f"diff {result['run_a']} (a) {result['run_b']} (b), labels of judge {result['judge']}"]
    for cond, entry in result["conditions"].items():
        if "only_in" in entry:
            lines.append(f"{cond}: only in run {entry['only_in']}")
            continue
        head = f"{cond}: {len(entry['checkpoints'])} of {entry['compared']} checkpoint(s) differ"
        if entry.get("plans_differ"):
            head += f" (replay plans differ for {', '.join(entry['plans_differ'])})"
        lines.append(head)
        for row in entry["checkpoints"]:
            where = f"  {row['trajectory']} r{row['repetition']} checkpoint {row['checkpoint']}"
            if "missing_from" in row:
                lines.append(f"{where}: missing from run {row['missing_from']}")
                continue
            per = defaultdict(list)
            for probe, aspects in row["probes"].items():
                for aspect in aspects:
                    per[aspect].append(probe)
            parts = [d for d in row["differs"] if d == "state digest"] + [
                f"{aspect} of {len(ps)} probe(s) ({', '.join(ps[:3])}{', ...' if len(ps) > 3 else ''})"
                for aspect, ps in per.items()]
            lines.append(f"{where}: {'; '.join(parts)}")
    lines.append("identical" if result["identical"] else "the runs differ")
    return "\n".join(lines)


def register(sub, command) -> None:
    sp = sub.add_parser(
        "diff", help="compare two runs: per condition, the checkpoints whose state, contexts, answers or labels differ",
        description="Match two runs unit by unit (condition, trajectory, repetition) and checkpoint by checkpoint; "
                    "report where state digests, returned contexts, answers or labels differ. Exit 0 when "
                    "identical, 1 when they differ.",
    )
    sp.add_argument("run_a", help="run id, unique prefix, or 'latest'")
    sp.add_argument("run_b", help="run id, unique prefix, or 'latest' (of --store-b when given)")
    sp.add_argument("--store", default=str(DEFAULT_STORE), help="run store of RUN_A (default: %(default)s)")
    sp.add_argument("--store-b", default=None, help="run store of RUN_B (default: the same as --store)")
    sp.add_argument("--judge", default="deterministic", help="judge whose labels are compared (default: %(default)s)")
    sp.add_argument("--json", action="store_true", help="print the differences as JSON")

    @command("diff")
    def cmd_diff(args: argparse.Namespace) -> int:
        from lsrep.store import RunStore

        stores = []
        for path in (Path(args.store), Path(args.store_b or args.store)):
            if not path.exists():
                raise LsrepError(f"no run store at {path} (pass --store / --store-b PATH)")
            stores.append(RunStore(path))
        run_a, run_b = _resolve(stores[0], args.run_a), _resolve(stores[1], args.run_b)
        result = diff_runs(stores[0], run_a, stores[1], run_b, judge=args.judge)
        print(json.dumps(result, indent=2, sort_keys=True) if args.json else format_diff(result))
        return 0 if result["identical"] else 1
