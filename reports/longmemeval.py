"""The report of a LongMemEval diagnostic: LongMemEval's own tables, and no over-time views.

A LongMemEval question is asked once, at its date: there is one checkpoint per
question, so the over-time chart says nothing and is dropped, the outcome mix is
shown as a table alone, and the evidence table (probe versions name no evidence
turns in LongMemEval) is dropped when it has no rows, and so is the consolidation section when
no maintenance ran (its recall latency would count from the haystack's first turn). The official QA and
retrieval tables (:mod:`lsrep.longmemeval_export`) come right after the headline,
with the same numbers `lsrep longmemeval` prints and `metrics.json` holds.
"""

from __future__ import annotations

from dataclasses import replace

from lsrep.reports.common import Context
from lsrep.reports.tree import Callout, Column, Figure, Section, Table

from lsrep.longmemeval_export import metrics_by_condition, qa_judge_note
from lsrep.longmemeval_metrics import OFFICIAL_TYPES, SESSION_SHOWN, TURN_SHOWN, fmt


def is_diagnostic(manifest: dict) -> bool:
    return manifest.get("diagnostic") == "longmemeval"


def diagnostic_sections(ctx: Context, sections: tuple[Section, ...]) -> tuple[Section, ...]:
    """The ordinary sections, reshaped for one checkpoint per question, plus the official tables."""
    one_checkpoint = len({o["checkpoint"] for o in ctx.data.observations}) <= 1
    out: list[Section] = []
    for section in sections:
        if section.id == "over-time" and one_checkpoint:
            continue
        if section.id == "outcome-mix" and one_checkpoint:
            section = replace(section, title="Outcome mix",
                              lead="What the non-correct answers were (one checkpoint per question: no time axis).",
                              blocks=tuple(b for b in section.blocks if not isinstance(b, Figure)))
        if section.id == "evidence" and not any(o["evidence_recall"] is not None for o in ctx.data.observations):
            continue
        if section.id == "categories" and one_checkpoint:
            section = replace(section, blocks=tuple(
                b for b in section.blocks if getattr(b, "caption", "") != "Accuracy by category over checkpoints"))
        if section.id == "examples":
            # LongMemEval references have one version: no answer can be stale or from the future.
            section = replace(section, blocks=tuple(
                b for b in section.blocks
                if not (getattr(b, "caption", "").startswith("Stale and future answers") and not b.rows)))
        if section.id == "manifest":
            section = replace(section, blocks=tuple(
                _plans(ctx) if getattr(b, "caption", "") == "Replay plans" else b for b in section.blocks))
        if section.id == "consolidation" and not ctx.data.maintenance:
            # No maintenance ran, and recall latency would count from the haystack's first turn
            # (LongMemEval gives no turn where an answer became true): nothing to show.
            continue
        out.append(section)
        if section.id == "headline" and ctx.store is not None:
            out.append(official_section(ctx))
    return tuple(out)


def _plans(ctx: Context) -> Table:
    """Replay plans are per question here (one per unit, in the units table): counted per condition."""
    by: dict[str, list[dict]] = {}
    for unit in ctx.data.units:
        by.setdefault(unit["condition"], []).append(unit)
    rows = tuple({"condition": c, "units": len(by.get(c, [])),
                  "plans": len({u["plan_digest"] for u in by.get(c, [])})} for c in ctx.conditions)
    return Table((Column("condition", "Condition", "condition"), Column("units", "Units (questions)", "int"),
                  Column("plans", "Distinct plan digests", "int")), rows, caption="Replay plans",
                 notes=("One replay plan per question; each unit's plan digest is in the store's `units` table.",))


def official_section(ctx: Context) -> Section:
    metrics = metrics_by_condition(ctx.store, ctx.data.run["run_id"])
    if not metrics:
        return Section("longmemeval", "LongMemEval metrics", "No LongMemEval rows in this run.",
                       (Callout("warn", "No LongMemEval metrics",
                                "This store was written before LongMemEval metrics were recorded."),))
    judge = next(iter(metrics.values()))["qa_judge"]
    qa_cols = (Column("condition", "Condition", "condition"),) + tuple(
        Column(t, t, "text") for t in OFFICIAL_TYPES) + (
        Column("task", "Task-averaged", "text"), Column("overall", "Overall", "text"),
        Column("abstention", "Abstention", "text"))
    qa_rows = []
    for cond, m in metrics.items():
        row = {"condition": cond, "task": fmt(m["task_averaged"]), "overall": fmt(m["overall"]),
               "abstention": f"{fmt(m['abstention']['accuracy'])} ({m['abstention']['n']})"}
        for t in OFFICIAL_TYPES:
            row[t] = f"{fmt(m['per_type'][t]['accuracy'])} ({m['per_type'][t]['n']})"
        qa_rows.append(row)
    names = [("session", x) for x in SESSION_SHOWN] + [("turn", x) for x in TURN_SHOWN]
    rt_cols = (Column("condition", "Condition", "condition"), Column("n", "Questions", "int")) + tuple(
        Column(f"{level}:{x}", f"{level} {x}", "text") for level, x in names)
    rt_rows = []
    for cond, m in metrics.items():
        r = m["retrieval"]
        rt_rows.append({"condition": cond, "n": r["n"],
                        **{f"{level}:{x}": fmt(r[level].get(x)) for level, x in names}})
    tone = "warn" if judge == "deterministic" else "info"
    return Section(
        "longmemeval", "LongMemEval metrics (official definitions)",
        "Accuracy per question type with counts, task-averaged, overall and abstention accuracy, and retrieval "
        "recall_all@k / ndcg_any@k, computed as LongMemEval's own scripts compute them (`lsrep longmemeval "
        "--export DIR` writes the files those scripts read).",
        (Callout(tone, "Which judge labelled these answers", qa_judge_note(judge)),
         Table(qa_cols, tuple(qa_rows), caption="QA accuracy (official definitions)", notes=(
             "Each cell: accuracy rounded to 4 places as the official script prints it, and (questions). "
             "_abs questions count in their type and in abstention; task-averaged is the mean of the six types.",)),
         Table(rt_cols, tuple(rt_rows), caption="Retrieval (official definitions)", notes=(
             "Ranking = the order in which each system returned its context (each fragment's user turns, "
             "first mention wins); turns it did not return are unranked. Corpus = the haystack's user turns "
             "with official ids; _abs questions are left out. Session level follows the official "
             "turn-to-session conversion. A question whose answer sits only in assistant turns has no correct "
             "user turn: the official recall_all counts it as 1.0 and ndcg_any as 0 (print_retrieval_metrics.py keeps "
             "such questions, as here; run_retrieval.py's own summary leaves them out: metrics.json "
             "`retrieval_user_target`).",))),
    )
