"""Everything a report reads, pulled from the run store in one place.

The report is built from the store alone: observations with the chosen
judge's labels (token-F1 and exact match always from the deterministic judge),
every judge's labels for agreement, fidelity events with their condition, and
the failure, maintenance and model-call ledgers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from lsrep.errors import LsrepError
from lsrep.store import RunStore

DETERMINISTIC = "deterministic"


def memory_cost_rows(store: RunStore, run_id: str) -> dict[str, list[dict[str, Any]]]:
    """`memory_calls` and `ingests` aggregates for RunData (see `lsrep.reports.cost`)."""
    from lsrep.reports.cost import load_cost_rows

    return load_cost_rows(store, run_id)


@dataclass(frozen=True)
class RunData:
    """One run's rows, as plain dicts."""

    run: dict[str, Any]
    """The `runs` row; `manifest` already parsed."""
    judge: str
    """Judge whose labels the quality sections use."""
    observations: list[dict[str, Any]]
    """Observation rows plus outcome/correct/rubric/judge_status from `judge`, f1/exact from the
    deterministic judge, and `context` (source turn ids in rank order)."""
    judgements: list[dict[str, Any]]
    """Every judge's rows for this run."""
    events: list[dict[str, Any]]
    """Fidelity events with their unit's condition."""
    failures: list[dict[str, Any]]
    maintenance: list[dict[str, Any]]
    units: list[dict[str, Any]]
    checkpoints: list[dict[str, Any]]
    turns: dict[tuple[str, str], dict[str, Any]]
    """(trajectory, turn_id) → turn row."""
    unknown_sources: dict[str, int]
    """Fragments citing a turn id missing from the trajectory, per condition."""
    llm_calls: list[dict[str, Any]]
    """Model calls aggregated by purpose, model and status."""
    memory_calls: list[dict[str, Any]] = field(default_factory=list)
    """Memory-side model calls aggregated by condition, role, kind and phase (`reports.cost`)."""
    ingests: list[dict[str, Any]] = field(default_factory=list)
    """Ingest latency aggregated by condition (`reports.cost`)."""

    @property
    def manifest(self) -> dict[str, Any]:
        return self.run["manifest"]

    @property
    def conditions(self) -> list[str]:
        """Condition names in campaign order (then any others seen in observations)."""
        declared = [c["name"] for c in self.manifest.get("campaign", {}).get("conditions", [])]
        seen = {o["condition"] for o in self.observations}
        return declared + sorted(seen - set(declared))


def judges_with_rows(store: RunStore, run_id: str) -> list[str]:
    return [r["judge"] for r in store.rows(
        "select judge, count(*) n from judgements where run_id = ? group by judge order by judge", [run_id]
    )]


def load_run(store: RunStore, run_id: str, judge: str = DETERMINISTIC) -> RunData:
    """Read one run; raises LsrepError if the judge has no rows for it."""
    run = store.run(run_id)
    run_id = run["run_id"]
    judges = judges_with_rows(store, run_id)
    if judge not in judges and store.rows("select 1 from observations where run_id = ? limit 1", [run_id]):
        known = ", ".join(judges) or "none"
        raise LsrepError(f"judge {judge!r} has no judgements in run {run_id} (judges with rows: {known})")
    observations = store.rows(
        "select o.*, j.outcome as outcome, j.correct as correct, j.rubric as rubric, "
        "j.status as judge_status, d.f1 as f1, d.exact as exact "
        "from observations o "
        "left join judgements j on j.obs_id = o.obs_id and j.judge = ? "
        "left join judgements d on d.obs_id = o.obs_id and d.judge = ? "
        "where o.run_id = ? order by o.condition, o.trajectory, o.repetition, o.checkpoint, o.probe_id",
        [judge, DETERMINISTIC, run_id],
    )
    contexts = _contexts(store, run_id)
    for o in observations:
        if o["judge_status"] not in (None, "ok"):
            # A judge that failed on an observation gave no label; nothing is imputed.
            o["outcome"], o["correct"], o["rubric"] = None, None, None
        o["context"] = contexts.get(o["obs_id"], ())
    unit_condition = {u["unit_id"]: u["condition"] for u in store.rows(
        "select unit_id, condition from units where run_id = ?", [run_id])}
    events = store.rows(
        "select unit_id, step, checkpoint, probe_id, mechanism, stage, reason, count, params, source_turn_ids "
        "from events "
        "where run_id = ? order by unit_id, seq", [run_id])
    for ev in events:
        ev["condition"] = unit_condition.get(ev["unit_id"], ev["unit_id"].split("/")[0])
    maintenance = store.rows("select * from maintenance where run_id = ? order by unit_id, seq", [run_id])
    failures = store.rows("select * from failures where run_id = ? order by unit_id, seq", [run_id])
    for row in maintenance + failures:
        row["condition"] = unit_condition.get(row["unit_id"], row["unit_id"].split("/")[0])
    turns = {(t["trajectory"], t["turn_id"]): t for t in store.rows(
        "select trajectory, idx, turn_id, session_id, timestamp, sim_time, role, speaker, content from turns "
        "where run_id = ?", [run_id])}
    unknown = {r["condition"]: r["n"] for r in store.rows(
        "select o.condition, count(*) n from fragments f join observations o on o.obs_id = f.obs_id "
        "where o.run_id = ? and f.unknown_source = 1 group by o.condition", [run_id])}
    return RunData(
        run=run, judge=judge, observations=observations,
        judgements=store.rows(
            "select obs_id, judge, judge_version, prompt_digest, outcome, correct, rubric, status, agreement "
            "from judgements where run_id = ? order by judge, obs_id", [run_id]),
        events=events, failures=failures, maintenance=maintenance,
        units=store.rows("select * from units where run_id = ? order by unit_id", [run_id]),
        checkpoints=store.rows("select * from checkpoints where run_id = ? order by unit_id, ordinal", [run_id]),
        turns=turns, unknown_sources=unknown,
        llm_calls=store.rows(
            "select purpose, model, status, count(*) calls, sum(cached) cached, "
            "sum(prompt_tokens) prompt_tokens, sum(completion_tokens) completion_tokens, sum(cost) cost, "
            "avg(latency_ms) latency_ms from llm_calls where run_id = ? group by purpose, model, status "
            "order by purpose, model, status", [run_id]),
        **memory_cost_rows(store, run_id),
    )


def apply_judge_of_record(store: RunStore, data: RunData) -> tuple[RunData, dict[str, int]]:
    """Use the campaign's judge of record per observation (human labels where adjudicated)."""
    from dataclasses import replace

    from lsrep.rating import headline_judge

    record = headline_judge(store, data.run["run_id"])
    for o in data.observations:
        label = record.labels.get(o["obs_id"])
        if label is not None:
            o["outcome"], o["correct"], o["label_judge"] = label.outcome, label.correct, label.judge
            o["judge_status"] = "ok"
    name = f"{record.judge_of_record} (judge of record)"
    return replace(data, judge=name), dict(record.by_judge)


def _contexts(store: RunStore, run_id: str) -> dict[str, tuple[str, ...]]:
    """Per observation, the source turn ids of its fragments in rank order."""
    out: dict[str, list[str]] = defaultdict(list)
    for r in store.rows(
        "select f.obs_id, f.source_turn_ids from fragments f join observations o on o.obs_id = f.obs_id "
        "where o.run_id = ? order by f.obs_id, f.rank", [run_id],
    ):
        ids = json.loads(r["source_turn_ids"] or "[]")
        out[r["obs_id"]].append(",".join(ids))
    return {k: tuple(v) for k, v in out.items()}
