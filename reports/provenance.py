"""Report blocks for content provenance, campaign-level checks and reader-free evidence metrics.

    condition_metrics(ctx)   # {condition: {"evidence": {...}, "integrity": {...}}} for report.json
    integrity_blocks(ctx)    # callout + table for the fidelity section
    evidence_blocks(ctx)     # table for the evidence section

Counts and rates come from `lsrep.integrity`, which reads the run store (see docs/integrity.md).
"""

from __future__ import annotations

from typing import Any

from lsrep.reports.common import Context
from lsrep.reports.tree import Callout, Column, Table

from lsrep.integrity import (
    INTEGRITY_KEYS,
    evidence_records,
    integrity_records,
    nondeterministic_checkpoints,
)

_WHAT = {
    "proven_leaks": "observations whose context holds text first said after the checkpoint (or cites such a turn)",
    "unsourced": "fragments, not declared derived, whose text matches no replayed turn",
    "misattributed": "fragments whose text does not match the turns they cite",
    "duplicate_citations": "fragments repeating an earlier fragment of the same context (same text, turns and kind)",
    "nondeterministic_checkpoints": "checkpoints where repetitions differ in state digest or returned context",
    "budget_violations": "observations over the retrieval budget from a system declaring honours_budget",
}


def _records(ctx: Context) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]]]:
    if ctx.store is None:
        return {}, {}
    run_id = ctx.data.run["run_id"]
    return integrity_records(ctx.store, run_id), evidence_records(ctx.store, run_id)


def condition_metrics(ctx: Context) -> dict[str, dict[str, Any]]:
    """Per condition, the `integrity` and `evidence` records of report.json."""
    integrity, evidence = _records(ctx)
    from lsrep.reports.adapter_logs import adapter_log_rows

    logs = adapter_log_rows(ctx.store, ctx.data.run["run_id"]) if ctx.store is not None else []
    out = {}
    for cond in ctx.conditions:
        ev = evidence.get(cond) or {}
        mine = [r for r in logs if r["condition"] == cond]
        out[cond] = {
            "adapter_log": {"warnings": sum(r["count"] for r in mine if r["kind"] == "warning"),
                            "log_records": sum(r["count"] for r in mine if r["kind"] == "log"),
                            "distinct": len(mine)},
            "integrity": integrity.get(cond, dict.fromkeys(INTEGRITY_KEYS, 0)),
            "evidence": {k: ev.get(k) for k in ("recall", "answer_in_context", "stale_in_context",
                                                "future_in_context", "citation_precision")} | {"n": ev.get("n")},
        }
    return out


def integrity_blocks(ctx: Context) -> list[Any]:
    integrity, _ = _records(ctx)
    rows = [{"condition": c, **integrity.get(c, dict.fromkeys(INTEGRITY_KEYS, 0))} for c in ctx.conditions]
    blocks: list[Any] = []
    conds = ctx.data.manifest.get("conditions", {})
    # Repetitions of a condition not expected to agree (deterministic = False, or "when-model-is" with
    # a sampled model) are counted, not alarmed.
    expected_to_differ = {c for c, v in conds.items() if v.get("deterministic_expected", v.get("deterministic")) is False}
    flagged = [(r["condition"], k, r[k]) for r in rows for k in INTEGRITY_KEYS
               if r[k] and not (k == "nondeterministic_checkpoints" and r["condition"] in expected_to_differ)]
    if flagged:
        text = "; ".join(f"{c}: {n} {k.replace('_', ' ')}" for c, k, n in flagged)
        blocks.append(Callout("danger", f"{len(flagged)} integrity alarm(s) from the campaign checks", text))
    reps = int(ctx.data.manifest.get("campaign", {}).get("repetitions") or 1)
    notes = tuple(f"{k.replace('_', ' ').capitalize()}: {v}." for k, v in _WHAT.items()) + (
        "Leaks, unsourced and misattributed text are decided from the text (word shingles against the "
        "replayed history), not from the fragments' citations; see docs/integrity.md for thresholds.",
    )
    if reps < 2:
        notes += ("One repetition: determinism was not checked (set repetitions = 2 or more).",)
    else:
        where = nondeterministic_checkpoints(ctx.store, ctx.data.run["run_id"]) if ctx.store is not None else {}
        undeclared = [c for c, v in conds.items() if v.get("deterministic_expected", v.get("deterministic")) is False]
        if where and undeclared:
            notes += (f"Declared nondeterministic (counted, expected to differ): {', '.join(undeclared)}.",)
        conditional = [c for c, v in conds.items() if v.get("deterministic") == "when-model-is"]
        if conditional:
            notes += ("Declared deterministic when its model is (expected to agree only with deterministic "
                      "models, i.e. offline or temperature 0): " + ", ".join(
                          f"{c} ({'expected to agree' if conds[c].get('deterministic_expected') else 'may differ'})"
                          for c in conditional) + ".",)
    columns = (Column("condition", "Condition", "condition"),) + tuple(
        Column(k, k.replace("_", " ").capitalize(), "int") for k in INTEGRITY_KEYS)
    blocks.append(Table(columns, tuple(rows), caption="Content provenance and campaign checks", notes=notes))
    return blocks


def evidence_blocks(ctx: Context) -> list[Any]:
    _, evidence = _records(ctx)
    rows = []
    for cond in ctx.conditions:
        ev = evidence.get(cond) or {}
        n = ev.get("n") or {}
        rows.append({"condition": cond, "n": n.get("recall", 0), "recall": ev.get("recall"),
                     "answer": ev.get("answer_in_context"), "stale": ev.get("stale_in_context"),
                     "n_stale": n.get("stale_in_context", 0), "future": ev.get("future_in_context"),
                     "n_future": n.get("future_in_context", 0), "precision": ev.get("citation_precision"),
                     "n_precision": n.get("citation_precision", 0)})
    columns = (
        Column("condition", "Condition", "condition"), Column("n", "Obs. with evidence", "int"),
        Column("recall", "Evidence in context", "rate", "by content"),
        Column("answer", "Answer in context", "rate"),
        Column("stale", "Stale answer in context", "rate"), Column("n_stale", "Obs. with a superseded version", "int"),
        Column("future", "Future answer in context", "rate"), Column("n_future", "Obs. with a later version", "int"),
        Column("precision", "Citation precision", "rate", "by content"),
        Column("n_precision", "Obs. citing turns", "int"),
    )
    return [Table(columns, tuple(rows), caption="Reader-free memory metrics", notes=(
        "Computed from the context each system returned, whoever answers: evidence in context = share of the "
        "in-force version's evidence turns whose text is in the context (half their shingles, or one whole "
        "sentence of 4+ content words) — citations do not count, so over-citing cannot raise it; answer in "
        "context = the normalised reference (or an alias) occurs; stale / future = a superseded / not yet "
        "true version's answer occurs (answers that also occur inside a correct one are not counted); citation "
        "precision = share of the turns each fragment cites whose content the fragment carries (2+ shared "
        "distinctive content words, verbatim or derived text alike), so naming extra turns lowers it.",
    ))]
