"""The machine-readable metrics record of a run, apart from the presentation tree.

    metrics = compute_metrics(ctx)            # scores, calibration, LoCoMo metric
    record = metrics_record(ctx, metrics)     # {"conditions": [...], "calibration": ..., ...}

`report.json` carries this record at its top level (`conditions`, `calibration`, ...) and the
presentation tree under `report` (docs/scores.md documents both). Each per-condition block is one
entry of CONDITION_BLOCKS: a key and a function (ctx, metrics, condition) -> value or None (None
leaves the key out), so adding `evidence`, `integrity`, `fidelity` or `cost` is one added line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsrep.reports.common import Context

from lsrep import stats
from lsrep.calibration import Calibration
from lsrep.headline import HEADLINE_DEFINITION, HEADLINE_METRIC, ConditionScore, condition_scores
from lsrep.judge import locomo_f1

METRICS_SCHEMA = 1


@dataclass(frozen=True)
class Metrics:
    scores: tuple[ConditionScore, ...]
    """Real conditions, in campaign order, ranked by headline."""
    calibration: Calibration | None
    calibration_note: str
    """Why calibration is missing, or how it was computed."""
    locomo: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Condition → the official LoCoMo metric over its LoCoMo trajectories (empty when none)."""

    def score(self, condition: str) -> ConditionScore:
        return next(s for s in self.scores if s.condition == condition)


def _systems(ctx: Context) -> dict[str, str]:
    return {c["name"]: c.get("system") for c in ctx.data.manifest.get("campaign", {}).get("conditions", [])}


def compute_metrics(ctx: Context) -> Metrics:
    scores = condition_scores(ctx.data.observations, ctx.conditions, seed=ctx.settings.seed,
                              systems=_systems(ctx), boot=ctx.settings.boot, level=ctx.settings.level)
    cal, note = _calibration(ctx)
    return Metrics(tuple(scores), cal, note, _locomo(ctx))


def _calibration(ctx: Context) -> tuple[Calibration | None, str]:
    """Calibration oracles on this run's own (probe, checkpoint) cases, when that costs no model call."""
    from lsrep.answer import make_answerer
    from lsrep.calibration import calibrate, cases_from_observations
    from lsrep.protocol.campaign import AnswererSpec

    camp = ctx.data.manifest.get("campaign", {})
    if camp.get("answer_mode", "context") == "system":
        return None, "system mode: each system answered itself, so the harness answerer's ceiling does not apply."
    spec = AnswererSpec.model_validate(camp.get("answerer") or {"kind": "extractive"})
    if spec.kind != "extractive":
        return None, ("the answerer is a model: run `lsrep calibrate CAMPAIGN` to measure the ceiling "
                      "(the report makes no model calls).")
    if not ctx.data.observations:
        return None, "no observations."
    if ctx.data.manifest.get("diagnostic") == "longmemeval":
        return None, ("a LongMemEval diagnostic stores no turn text (it is read back from the input file), "
                      "so the calibration systems are not run here.")
    cases, turns = cases_from_observations(ctx.data.observations, ctx.data.turns)
    cal = calibrate(cases, turns, make_answerer(spec), seed=ctx.settings.seed, boot=ctx.settings.boot)
    return cal, (f"Calibration systems answered this run's {len(cases)} (probe, checkpoint) cases with the run's "
                 f"offline answerer ({cal.answerer}) and the deterministic judge.")


def _locomo(ctx: Context) -> dict[str, dict[str, Any]]:
    return locomo_metric(ctx.data.observations, ctx.conditions, ctx.data.manifest)


def _locomo_trajectories(observations: list[dict[str, Any]], manifest: dict[str, Any]) -> set[str]:
    declared = {t["id"] for t in manifest.get("campaign", {}).get("trajectories", []) if t.get("locomo")}
    cats: dict[str, set[str]] = {}
    for o in observations:
        cats.setdefault(o["trajectory"], set()).add(str(o["category"] or ""))
    converted = {t for t, c in cats.items() if c and c <= set(locomo_f1.CATEGORY_NUMBERS)}
    return declared | converted


def locomo_metric(observations: list[dict[str, Any]], conditions: list[str],
                  manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Official LoCoMo F1 per condition, on each question's last checkpoint (the whole conversation
    replayed, as published tables score it). Observations as `reports.load.load_run` gives them."""
    trajectories = _locomo_trajectories(observations, manifest)
    if not trajectories:
        return {}
    last: dict[tuple, dict[str, Any]] = {}
    for o in observations:
        if o["trajectory"] not in trajectories or locomo_f1.category_number(o["category"]) is None:
            continue
        key = (o["condition"], o["trajectory"], o["probe_id"], o["repetition"])
        if key not in last or o["checkpoint"] > last[key]["checkpoint"]:
            last[key] = o
    out: dict[str, dict[str, Any]] = {}
    for cond in conditions:
        rows = [o for k, o in sorted(last.items(), key=lambda kv: kv[0][1:]) if k[0] == cond]
        if not rows:
            continue
        per: dict[str, list[float]] = {}
        recalls = []
        for o in rows:
            exp = json.loads(o["expected"] or "{}")
            versions = exp.get("in_force") or exp.get("later") or exp.get("superseded") or []
            reference = versions[0]["answer"] if versions else ""
            per.setdefault(o["category"], []).append(locomo_f1.score(o["answer"], reference, o["category"]))
            evidence = [e for v in versions for e in v.get("evidence", ())]
            if evidence:  # questions the conversion left without evidence are left out (not counted 1)
                context_ids = [t for frag in o["context"] for t in frag.split(",") if t]
                recalls.append(locomo_f1.evidence_recall(evidence, context_ids))
        scores = [s for v in per.values() for s in v]
        no_adv = [s for c, v in per.items() if c != "adversarial" for s in v]
        out[cond] = {
            "f1": _num(sum(scores) / len(scores)),
            "f1_excluding_adversarial": _num(sum(no_adv) / len(no_adv)) if no_adv else None,
            "n": len(scores),
            "per_category": {c: {"f1": _num(sum(v) / len(v)), "n": len(v)}
                             for c, v in sorted(per.items(), key=lambda kv: locomo_f1.CATEGORY_NUMBERS[kv[0]])},
            "evidence_recall": _num(sum(recalls) / len(recalls)) if recalls else None,
            "evidence_n": len(recalls),
        }
    return out


# -- the record ----------------------------------------------------------------------------------
def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)


def _ci(e: stats.Estimate) -> list[float | None]:
    return [_num(e.interval[0]), _num(e.interval[1])]


def _headline(ctx, m: Metrics, cond: str):
    s = m.score(cond)
    return {"metric": HEADLINE_METRIC, "value": _num(s.headline.value), "ci": _ci(s.headline),
            "strata": {name: {"n": n, "correct": c, "accuracy": _num(c / n)} for name, n, c in s.strata}}


def _answerable(ctx, m: Metrics, cond: str):
    s = m.score(cond)
    return {"n": s.answerable.n, "correct": s.answerable_correct, "accuracy": _num(s.answerable.value),
            "ci": _ci(s.answerable), "clusters": s.answerable.clusters}


def _abstention(ctx, m: Metrics, cond: str):
    s = m.score(cond)
    return {"n": s.abstention_n, "correct": s.abstention_correct, "accuracy": _num(s.abstention_accuracy)}


def _headroom(ctx, m: Metrics, cond: str):
    if m.calibration is None:
        return None
    return {"value": _num(m.calibration.headroom(m.score(cond).headline.value)),
            "floor": _num(m.calibration.floor.headline.value), "ceiling": _num(m.calibration.ceiling.headline.value),
            "metric": HEADLINE_METRIC}


def _cost(ctx, cond: str):
    from lsrep.reports.cost import cost_block

    return cost_block(ctx.data, cond)


CONDITION_BLOCKS: tuple[tuple[str, Callable[[Context, Metrics, str], Any]], ...] = (
    ("headline", _headline),
    ("answerable", _answerable),
    ("abstention", _abstention),
    ("labels", lambda ctx, m, cond: dict(m.score(cond).labels)),
    ("headroom", _headroom),
    ("locomo", lambda ctx, m, cond: m.locomo.get(cond)),
    ("cost", lambda ctx, m, cond: _cost(ctx, cond)),
)
"""Per-condition blocks of the record, in order; a block returning None is left out."""


def metrics_record(ctx: Context, m: Metrics) -> dict[str, Any]:
    from lsrep.calibration import calibration_json

    conditions = []
    for s in m.scores:
        row: dict[str, Any] = {"name": s.condition, "system": s.system, "calibration": s.calibration,
                               "rank": s.rank, "observations": s.observations, "unjudged": s.unjudged}
        for key, block in CONDITION_BLOCKS:
            value = block(ctx, m, s.condition)
            if value is not None:
                row[key] = value
        conditions.append(row)
    return {
        "metrics_schema": METRICS_SCHEMA,
        "headline_metric": {"name": HEADLINE_METRIC, "definition": HEADLINE_DEFINITION,
                            "resampling_unit": stats.PROBE_UNIT, "level": ctx.settings.level,
                            "bootstrap_b": ctx.settings.boot, "judge": ctx.data.judge},
        "conditions": conditions,
        "calibration": calibration_json(m.calibration) if m.calibration else None,
        "calibration_note": m.calibration_note,
    }
