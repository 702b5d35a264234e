"""Presentation of the instrument's own figures: calibration systems, the low-ceiling warning, and
LoCoMo's official metric (the numbers come from `reports.metrics`)."""

from __future__ import annotations

from typing import Any

from lsrep.reports.common import Context
from lsrep.reports.tree import Callout, Column, Table

from lsrep.calibration import LOW_CEILING
from lsrep.judge.locomo_f1 import CATEGORY_NUMBERS


def calibration_banner(ctx: Context) -> tuple[Callout, ...]:
    cal = ctx.metrics.calibration if ctx.metrics else None
    if cal is None or not cal.low_ceiling:
        return ()
    return (Callout(
        "warn", f"Low ceiling: with perfect memory the answerer and judge score {cal.ceiling.answerable.value:.0%} "
                f"on answerable probes",
        f"The `oracle` calibration system, given exactly the evidence turns in force, reaches "
        f"{cal.ceiling.answerable.value:.1%} answerable accuracy (below {LOW_CEILING:.0%}): the answerer, not "
        "memory, limits this comparison. Read differences between conditions as differences in what reached "
        "the context, and prefer the evidence metrics.",
    ),)


def calibration_blocks(ctx: Context) -> list[Any]:
    metrics = ctx.metrics
    cal = metrics.calibration
    if cal is None:
        return [Callout("info", "No calibration figures", metrics.calibration_note)]
    rows = []
    for s in cal.scores:
        rows.append({
            "condition": s.condition, "headline": s.headline, "answerable": s.answerable,
            "answerable_n": f"{s.answerable_correct} / {s.answerable.n}",
            "abstention": s.abstention_accuracy if s.abstention_n else None,
            "stale": s.labels["stale"], "future": s.labels["future"], "leaks": s.labels["proven_leak"],
        })
    columns = (
        Column("condition", "Calibration system", "label"),
        Column("headline", "Headline", "rate_estimate", f"{ctx.settings.ci_label}, stratified cluster bootstrap over probes"),
        Column("answerable", "Answerable accuracy", "rate_estimate", f"{ctx.settings.ci_label}, cluster bootstrap over probes"),
        Column("answerable_n", "Correct / n", "text"),
        Column("abstention", "Abstention accuracy", "rate"),
        Column("stale", "Stale labels", "int"), Column("future", "Future labels", "int"),
        Column("leaks", "Proven leaks", "int"),
    )
    stale = (f"Stale detection: {_rate_text(cal.stale.rate)} of {cal.stale.n} oracle-stale answers on cases with a "
             "superseded version were labelled stale." if cal.stale.n else
             "Stale detection: no case has a superseded version with evidence (nothing to detect).")
    future = (f"Future detection: {_rate_text(cal.future.rate)} of {cal.future.n} oracle-future answers on cases "
              "with a later version were labelled future or carried a proven leak." if cal.future.n else
              "Future detection: no case has a version said only after its checkpoint (nothing to detect).")
    det = f"{stale} {future}"
    agreement = (f"Judge agreement with the labelled set: {cal.judge_agreement['rate']:.1%} "
                 f"({cal.judge_agreement['agreed']}/{cal.judge_agreement['n']})." if cal.judge_agreement else
                 f"Judge agreement: not measured ({cal.judge_agreement_reason}).")
    return [Table(columns, tuple(rows), caption="Instrument calibration (reference systems, never ranked)", notes=(
        "Calibration systems are harness-side references, not memory systems: `oracle` gets exactly the "
        "evidence turns in force at the checkpoint, `oracle-stale` the superseded version's evidence, "
        "`oracle-future` the evidence of versions not yet said, `null` nothing. They read the evidence turn "
        "ids the harness resolves, never the answers; adapters never see those ids.",
        metrics.calibration_note, det, agreement, ctx.settings.boot_note))]


def _rate_text(x: float) -> str:
    return "—" if x != x else f"{x:.0%}"


def locomo_table(ctx: Context) -> Table | None:
    locomo = ctx.metrics.locomo
    if not locomo:
        return None
    cats = sorted({c for rec in locomo.values() for c in rec["per_category"]}, key=lambda c: CATEGORY_NUMBERS[c])
    rows = []
    for cond in ctx.conditions:
        rec = locomo.get(cond)
        if rec is None:
            continue
        row = {"condition": cond, "n": rec["n"], "f1": rec["f1"], "f1_no_adv": rec["f1_excluding_adversarial"],
               "recall": rec["evidence_recall"]}
        for c in cats:
            cell = rec["per_category"].get(c)
            row[f"cat:{c}"] = None if cell is None else cell["f1"]
        rows.append(row)
    columns = (Column("condition", "Condition", "condition"), Column("n", "Questions", "int"),
               Column("f1", "Official F1 (all)", "rate"), Column("f1_no_adv", "F1 (categories 1-4)", "rate"),
               ) + tuple(Column(f"cat:{c}", f"{c} ({CATEGORY_NUMBERS[c]})", "rate") for c in cats) + (
        Column("recall", "Evidence recall", "rate", "official definition"),)
    return Table(columns, tuple(rows), caption="LoCoMo's official metric (beside LSREP's labels)", notes=(
        "This is the official definition of snap-research/LoCoMo task_eval/evaluation.py, re-implemented in "
        "lsrep.judge.locomo_f1: lower-cased, commas and punctuation removed, a/an/the/and removed, Porter-stemmed "
        "token F1; category 3 references cut at the first `;`; category 1 split on `,` (mean over reference "
        "parts of the best prediction part); category 5 scores 1 when the answer contains \"no information "
        "available\" or \"not mentioned\"; evidence recall = share of the question's evidence dialogue ids in "
        "the context.",
        "Scored on each question's last checkpoint (the whole conversation replayed), one answer per question "
        "and repetition, so it can be put beside published LoCoMo tables; LSREP's own labels above score every "
        "checkpoint against the reference in force. No intervals: descriptive.",))
