"""Campaign-level integrity and reader-free evidence, per condition, from the run store alone.

    integrity = integrity_records(store, run_id)   # {condition: {proven_leaks, unsourced, ...}}
    evidence = evidence_records(store, run_id)     # {condition: {recall, answer_in_context, ...}}

Integrity counts (each an alarm when non-zero; docs/integrity.md says what each catches):

- `proven_leaks`: observations whose returned context holds a fragment copied from a turn
  not yet replayed (content provenance) or citing such a turn;
- `unsourced`: fragments (not declared derived) whose text matches no replayed turn;
- `misattributed`: fragments whose text does not match the turns they cite;
- `duplicate_citations`: fragments repeating an earlier fragment of the same context;
- `nondeterministic_checkpoints`: (trajectory, checkpoint) pairs where repetitions of a
  condition disagree on the state digest or on any probe's returned context (needs >= 2
  repetitions; a system declaring `deterministic = False` is counted too, and the manifest
  says so);
- `budget_violations`: observations whose returned context exceeds the campaign's retrieval
  budget although the system declares `honours_budget`.

Evidence (means over the observations where each applies; `n` says how many): `recall`
(content-based evidence recall), `answer_in_context`, `stale_in_context`, `future_in_context`, and
`citation_precision` (mean over observations whose context cites turns: the share of citations
whose turn content the citing fragment carries, `lsrep.context_audit`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from lsrep.store import RunStore

INTEGRITY_KEYS: tuple[str, ...] = (
    "proven_leaks", "unsourced", "misattributed", "duplicate_citations", "nondeterministic_checkpoints",
    "budget_violations",
)
EVIDENCE_KEYS: tuple[str, ...] = ("recall", "answer_in_context", "stale_in_context", "future_in_context",
                                  "citation_precision")
_EVIDENCE_COLUMNS = dict(zip(EVIDENCE_KEYS, ("content_recall", "answer_in_context", "stale_in_context",
                                             "future_in_context", "citation_precision"), strict=True))


def _conditions(store: RunStore, run_id: str) -> list[str]:
    declared = [c["name"] for c in store.run(run_id)["manifest"].get("campaign", {}).get("conditions", [])]
    seen = [r["condition"] for r in store.rows(
        "select distinct condition from observations where run_id = ? order by condition", [run_id])]
    return declared + [c for c in seen if c not in declared]


def integrity_records(store: RunStore, run_id: str) -> dict[str, dict[str, int]]:
    """Per condition, the six integrity counts (0 everywhere for an honest, deterministic system)."""
    out = {c: dict.fromkeys(INTEGRITY_KEYS, 0) for c in _conditions(store, run_id)}
    for r in store.rows(
        "select condition, sum(proven_leak > 0) leaks, sum(coalesce(unsourced, 0)) unsourced, "
        "sum(coalesce(misattributed, 0)) misattributed, sum(coalesce(duplicate_citations, 0)) dupes, "
        "sum(coalesce(budget_violation, 0)) budget from observations where run_id = ? group by condition",
        [run_id],
    ):
        out.setdefault(r["condition"], dict.fromkeys(INTEGRITY_KEYS, 0)).update(
            proven_leaks=r["leaks"] or 0, unsourced=r["unsourced"] or 0, misattributed=r["misattributed"] or 0,
            duplicate_citations=r["dupes"] or 0, budget_violations=r["budget"] or 0,
        )
    for cond, n in nondeterministic_checkpoints(store, run_id).items():
        out.setdefault(cond, dict.fromkeys(INTEGRITY_KEYS, 0))["nondeterministic_checkpoints"] = len(n)
    return out


def nondeterministic_checkpoints(store: RunStore, run_id: str) -> dict[str, list[tuple[str, int]]]:
    """Per condition, the (trajectory, checkpoint) pairs where finished repetitions disagree."""
    units = {u["unit_id"]: u for u in store.rows(
        "select unit_id, condition, trajectory, repetition from units where run_id = ? and status = 'finished'",
        [run_id])}
    states: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    reps: dict[tuple[str, str, int], set[int]] = defaultdict(set)
    for c in store.rows("select unit_id, ordinal, state_digest from checkpoints where run_id = ?", [run_id]):
        u = units.get(c["unit_id"])
        if u is None:
            continue
        key = (u["condition"], u["trajectory"], c["ordinal"])
        reps[key].add(u["repetition"])
        if c["state_digest"] is not None:
            states[key].add(c["state_digest"])
    contexts: dict[tuple[str, str, int, str], set[str | None]] = defaultdict(set)
    finished = set(units)
    for o in store.rows(
        "select unit_id, condition, trajectory, checkpoint, probe_id, context_sha256 from observations "
        "where run_id = ?", [run_id],
    ):
        if o["unit_id"] in finished:
            contexts[(o["condition"], o["trajectory"], o["checkpoint"], o["probe_id"])].add(o["context_sha256"])
    bad: dict[tuple[str, str, int], bool] = {}
    for key, seen in reps.items():
        if len(seen) > 1:
            bad[key] = len(states.get(key, ())) > 1
    for (cond, traj, cp, _), digests in contexts.items():
        key = (cond, traj, cp)
        if key in bad and len(digests) > 1:
            bad[key] = True
    out: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (cond, traj, cp), differs in sorted(bad.items()):
        if differs:
            out[cond].append((traj, cp))
    return dict(out)


def evidence_records(store: RunStore, run_id: str) -> dict[str, dict[str, Any]]:
    """Per condition, the reader-free memory metrics (mean over applicable observations) and their n."""
    out: dict[str, dict[str, Any]] = {}
    for cond in _conditions(store, run_id):
        out[cond] = {**dict.fromkeys(EVIDENCE_KEYS), "n": dict.fromkeys(EVIDENCE_KEYS, 0)}
    for r in store.rows(
        "select condition, avg(content_recall) recall, count(content_recall) n_recall, "
        "avg(answer_in_context) answer, count(answer_in_context) n_answer, "
        "avg(stale_in_context) stale, count(stale_in_context) n_stale, "
        "avg(future_in_context) future, count(future_in_context) n_future, "
        "avg(citation_precision) precision, count(citation_precision) n_precision "
        "from observations where run_id = ? group by condition", [run_id],
    ):
        out[r["condition"]] = {
            "recall": r["recall"], "answer_in_context": r["answer"], "stale_in_context": r["stale"],
            "future_in_context": r["future"], "citation_precision": r["precision"],
            "n": {"recall": r["n_recall"], "answer_in_context": r["n_answer"], "stale_in_context": r["n_stale"],
                  "future_in_context": r["n_future"], "citation_precision": r["n_precision"]},
        }
    return out


def alarms(record: dict[str, int]) -> int:
    """Total of an integrity record's counts."""
    return sum(record.get(k, 0) for k in INTEGRITY_KEYS)
