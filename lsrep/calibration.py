"""Calibration systems: what the instrument itself can score, before any memory system is asked.

Four reference systems answer every (probe, checkpoint) a campaign asks, under the campaign's
answerer and judge (`campaign_judge`: the judge of record when it is a model judge, else the
campaign's first model judge, else the deterministic one):

- `oracle`: context = exactly the evidence turns of the version(s) in force at the checkpoint;
- `oracle-stale`: the evidence of the superseded version(s);
- `oracle-future`: the evidence of versions not yet said (turns after the checkpoint);
- `null`: no context at all.

They read nothing but the trajectory's turns and the evidence turn ids of the probe's reference
versions as the harness resolves them at the checkpoint — never the reference answers. That is why
they live in the harness, not behind the adapter contract: adapters never see evidence ids. They
are calibration systems: reported apart, never ranked, never a campaign's system
(`lsrep.headline.CALIBRATION_SYSTEMS`).

From them: the ceiling (oracle answerable accuracy: what the answerer and judge can score when memory
is perfect), the floor (null), and whether the judge's `stale` and `future` labels fire when a context
holds only superseded or only future evidence (detection rates).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lsrep import stats
from lsrep.headline import ConditionScore, condition_scores

CALIBRATION_ORDER: tuple[str, ...] = ("oracle", "oracle-stale", "oracle-future", "null")
"""Calibration systems in report order (`null` is the floor; it is also a real built-in system)."""
LOW_CEILING = 0.6
"""Below this oracle answerable accuracy the answerer, not memory, limits the comparison."""


@dataclass(frozen=True)
class CalibrationCase:
    """One (probe, checkpoint) as the harness resolved it."""

    trajectory: str
    probe_id: str
    kind: str
    category: str | None
    checkpoint: int
    prefix_len: int
    now: str
    """ISO time of the checkpoint."""
    question: str
    expected: str
    """The resolved expectation as JSON (the observation row's `expected`)."""


@dataclass(frozen=True)
class TurnLine:
    turn_id: str
    idx: int
    text: str


@dataclass(frozen=True)
class Detection:
    """How often a label fired on the cases built to provoke it."""

    n: int
    detected: int
    detail: tuple[tuple[str, int], ...] = ()

    @property
    def rate(self) -> float:
        return self.detected / self.n if self.n else math.nan


@dataclass(frozen=True)
class Calibration:
    scores: tuple[ConditionScore, ...]
    """Scores of the calibration systems, in CALIBRATION_ORDER."""
    stale: Detection
    """oracle-stale answers labelled `stale`, over cases with a superseded version."""
    future: Detection
    """oracle-future answers labelled `future` or carrying a proven leak, over cases with a later version."""
    judge_agreement: dict[str, Any] | None
    judge_agreement_reason: str | None
    answerer: str
    judge: str = "deterministic"

    def score(self, name: str) -> ConditionScore:
        return next(s for s in self.scores if s.condition == name)

    @property
    def ceiling(self) -> ConditionScore:
        return self.score("oracle")

    @property
    def floor(self) -> ConditionScore:
        return self.score("null")

    @property
    def low_ceiling(self) -> bool:
        value = self.ceiling.answerable.value
        return math.isnan(value) or value < LOW_CEILING

    def headroom(self, headline: float) -> float:
        """Where a headline sits between floor (0) and ceiling (1), on the headline metric."""
        lo, hi = self.floor.headline.value, self.ceiling.headline.value
        if math.isnan(headline) or math.isnan(lo) or math.isnan(hi) or hi - lo <= 1e-12:
            return math.nan
        return (headline - lo) / (hi - lo)


def turn_line(speaker: str | None, role: str, timestamp: str, content: str) -> str:
    """The same one-line rendering the bundled adapters use (`adapters/formatting.py`)."""
    who = f"{speaker} ({role})" if speaker else role
    stamp = datetime.fromisoformat(str(timestamp)).strftime("%Y-%m-%d %H:%M")
    return f"[{stamp}] {who}: {' '.join(content.split())}"


def evidence_for(system: str, expected: Mapping[str, Any]) -> list[str]:
    """Turn ids a calibration system puts in context, from the expectation's evidence ids only."""
    key = {"oracle": "in_force", "oracle-stale": "superseded", "oracle-future": "later", "null": None}[system]
    if key is None or (system == "oracle" and expected.get("expect_abstain")):
        return []
    ids: list[str] = []
    for version in expected.get(key, ()):
        ids.extend(t for t in version.get("evidence", ()) if t not in ids)
    return ids


def observe(cases: Iterable[CalibrationCase], turns: Mapping[tuple[str, str], TurnLine], answerer,
            judge: ModelJudge | None = None) -> list[dict]:
    """Observation rows (judged) of every calibration system on every case.

    With `judge` (a model judge), its labels replace the deterministic judge's; a case it could
    not label is `error` (not correct), never guessed."""
    from lsrep.contract import Fragment
    from lsrep.engine import deterministic_judgement

    rows = []
    for case in cases:
        expected = json.loads(case.expected)
        now = datetime.fromisoformat(case.now)
        for system in CALIBRATION_ORDER:
            lines = sorted((turns[(case.trajectory, t)] for t in evidence_for(system, expected)
                            if (case.trajectory, t) in turns), key=lambda line: line.idx)
            fragments = [Fragment(text=line.text, source_turn_ids=(line.turn_id,), kind="calibration")
                         for line in lines]
            index = {line.turn_id: line.idx for line in lines}
            outcome = answerer.answer(case.question, now, fragments, index)
            row = {
                "obs_id": f"calibration:{system}:{case.trajectory}:{case.checkpoint}:{case.probe_id}",
                "run_id": "calibration", "condition": system, "trajectory": case.trajectory,
                "probe_id": case.probe_id, "kind": case.kind, "category": case.category,
                "checkpoint": case.checkpoint, "question": case.question, "expected": case.expected,
                "sim_time": case.now, "answer": outcome.text, "status": "error" if outcome.error else "ok",
                "proven_leak": int(any(line.idx >= case.prefix_len for line in lines)),
            }
            judged = deterministic_judgement(row)
            row.update(outcome=judged["outcome"], correct=judged["correct"])
            rows.append(row)
    if judge is not None:
        from lsrep.judge.campaign import judge_observations

        labels, _ = judge_observations(judge.name, judge.judge, rows, workers=judge.workers)
        for row, label in zip(rows, labels, strict=True):
            ok = label["status"] == "ok"
            row.update(outcome=label["outcome"] if ok else "error", correct=int(bool(label["correct"])) if ok else 0)
    return rows


@dataclass(frozen=True)
class ModelJudge:
    """A campaign's model judge as calibration uses it."""

    name: str
    judge: Any
    """An object with `assess(case) -> Judgement` (lsrep.judge.campaign.build_judge)."""
    workers: int = 1

    def verdict(self, case):
        """The judge's verdict on one agreement-set case (`error` when it could not label it)."""
        from lsrep.judge.model import JudgeError
        from lsrep.judge.verdict import Verdict

        try:
            return self.judge.assess(case).verdict
        except JudgeError:
            return Verdict(outcome="error", correct=False)


def campaign_judge(campaign) -> ModelJudge | None:
    """The campaign's judge for calibration: the judge of record when it is a model judge, else the
    first model judge the campaign configures; None means the deterministic judge."""
    from lsrep.judge.campaign import build_judge

    spec = campaign.spec
    model = [j for j in spec.judges if j.kind != "deterministic"]
    chosen = next((j for j in model if j.name == spec.judge_of_record), model[0] if model else None)
    if chosen is None:
        return None
    judge = build_judge(chosen, campaign.store_path)
    return ModelJudge(chosen.name, judge, chosen.endpoint.concurrency if chosen.endpoint else 1)


def calibrate(cases: Sequence[CalibrationCase], turns: Mapping[tuple[str, str], TurnLine], answerer, *,
              seed: int, boot: int = stats.DEFAULT_B, judge: ModelJudge | None = None) -> Calibration:
    rows = observe(cases, turns, answerer, judge)
    scores = condition_scores(rows, CALIBRATION_ORDER, seed=seed, boot=boot,
                              systems={name: name for name in CALIBRATION_ORDER})
    agreement, reason = judge_agreement(judge.verdict if judge is not None else None)
    return Calibration(
        scores=tuple(scores), stale=_detection(rows, "oracle-stale", "superseded", ("stale",)),
        future=_detection(rows, "oracle-future", "later", ("future",)), judge_agreement=agreement,
        judge_agreement_reason=reason, answerer=f"{answerer.name} v{answerer.version}",
        judge=_judge_label(judge),
    )


def _judge_label(judge: ModelJudge | None) -> str:
    if judge is None:
        return "deterministic"
    return f"{judge.name} ({type(judge.judge).__name__} v{getattr(judge.judge, 'version', '?')})"


def _detection(rows: list[dict], system: str, key: str, labels: tuple[str, ...]) -> Detection:
    """Share of `system`'s answers on cases with `key` versions that got one of `labels` (or, for
    future evidence, a proven leak)."""
    picked = [r for r in rows if r["condition"] == system and json.loads(r["expected"]).get(key)
              and evidence_for(system, json.loads(r["expected"]))]
    label = [r for r in picked if r["outcome"] in labels]
    leak = [r for r in picked if r["proven_leak"]]
    if key == "later":
        hit = [r for r in picked if r["outcome"] in labels or r["proven_leak"]]
        return Detection(len(picked), len(hit), (("labelled", len(label)), ("proven_leak", len(leak))))
    return Detection(len(picked), len(label), (("labelled", len(label)),))


def judge_agreement(verdict=None) -> tuple[dict[str, Any] | None, str | None]:
    """The judge (`verdict(case)`; default the deterministic one) against the labelled agreement set,
    where that set is installed."""
    try:
        from lsrep.judge.agreement_set import measure
    except ImportError as exc:
        return None, f"no labelled agreement set in this installation ({exc})"
    result = measure() if verdict is None else measure(verdict)
    return ({"n": int(result.n), "agreed": int(result.agreed), "rate": float(result.rate),
             "disagreements": len(result.disagreements)}, None)


# -- cases from a campaign file or from a stored run -----------------------------------------------
def cases_from_campaign(campaign, inputs) -> tuple[list[CalibrationCase], dict[tuple[str, str], TurnLine]]:
    """Every (probe, checkpoint) the campaign's first condition's schedule asks, and the turns."""
    from lsrep.plan import CheckpointStep, plan_replay

    schedule = campaign.condition_schedules[campaign.spec.conditions[0].name]
    cases, turns = [], {}
    for tid, (trajectory, probes) in inputs.items():
        for i, t in enumerate(trajectory.turns):
            turns[(tid, t.turn_id)] = TurnLine(t.turn_id, i, turn_line(t.speaker, t.role, t.timestamp.isoformat(),
                                                                    t.content))
        by_id = {p.probe_id: p for p in probes.probes}
        for step in plan_replay(trajectory, schedule, probes).steps:
            if not isinstance(step, CheckpointStep):
                continue
            for ask in step.probes:
                p = by_id[ask.probe_id]
                cases.append(CalibrationCase(tid, p.probe_id, p.kind, p.category, step.ordinal, step.prefix_len,
                                             step.now.isoformat(), p.question, ask.expected.model_dump_json()))
    return cases, turns


def cases_from_observations(observations: Iterable[Mapping[str, Any]],
                            turn_rows: Mapping[tuple[str, str], Mapping[str, Any]],
                            ) -> tuple[list[CalibrationCase], dict[tuple[str, str], TurnLine]]:
    """The distinct (trajectory, probe, checkpoint) of a stored run, and its stored turns."""
    seen: dict[tuple[str, str, int], CalibrationCase] = {}
    for o in observations:
        key = (o["trajectory"], o["probe_id"], o["prefix_len"])
        if key not in seen:
            seen[key] = CalibrationCase(o["trajectory"], o["probe_id"], o["kind"], o["category"], o["checkpoint"],
                                        o["prefix_len"], o["sim_time"], o["question"], o["expected"])
    turns = {k: TurnLine(t["turn_id"], t["idx"], turn_line(t["speaker"], t["role"], t["timestamp"], t["content"]))
             for k, t in turn_rows.items()}
    return sorted(seen.values(), key=lambda c: (c.trajectory, c.checkpoint, c.probe_id)), turns


def calibration_json(cal: Calibration) -> dict[str, Any]:
    """The `lsrep calibrate --json` document (docs/scores.md)."""
    def est(e: stats.Estimate) -> dict[str, Any]:
        return {"value": _num(e.value), "ci": [_num(e.interval[0]), _num(e.interval[1])], "n": e.n,
                "clusters": e.clusters, "unit": e.unit, "method": e.method}

    def det(d: Detection) -> dict[str, Any]:
        return {"rate": _num(d.rate), "n": d.n, "detected": d.detected, **dict(d.detail)}

    return {
        "ceiling": _num(cal.ceiling.answerable.value),
        "floor": _num(cal.floor.answerable.value),
        "judge_agreement": cal.judge_agreement,
        "stale_detection": det(cal.stale),
        "future_detection": det(cal.future),
        "judge_agreement_reason": cal.judge_agreement_reason,
        "low_ceiling": cal.low_ceiling,
        "answerer": cal.answerer, "judge": cal.judge,
        "systems": {s.condition: {
            "calibration": True, "headline": est(s.headline), "answerable": est(s.answerable),
            "answerable_correct": s.answerable_correct,
            "abstention": {"n": s.abstention_n, "correct": s.abstention_correct,
                           "accuracy": _num(s.abstention_accuracy)},
            "per_stratum": {name: {"n": n, "correct": c, "accuracy": c / n if n else None}
                            for name, n, c in s.strata},
            "labels": s.labels,
        } for s in cal.scores},
    }


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)
