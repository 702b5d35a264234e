"""Recall latency: when facts first reach the context relative to when they were said."""

from __future__ import annotations

from datetime import UTC, datetime

from lsrep.reports.load import load_run

from lsrep.latency import fact_latencies, summarise_latency
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def _obs(checkpoint: int, hour: int, context: list[str], condition: str = "c") -> dict:
    expected = {"in_force": [{"answer": "Porto", "valid_from": "t2", "evidence": ["t2"]}]}
    return {"status": "ok", "expected": expected, "context": context, "condition": condition,
            "trajectory": "x", "repetition": 0, "probe_id": "p", "checkpoint": checkpoint,
            "sim_time": datetime(2026, 1, 1, hour, tzinfo=UTC).isoformat()}


TURNS = {("x", "t2"): {"sim_time": datetime(2026, 1, 1, 1, tzinfo=UTC).isoformat()}}


def test_latency_counts_missed_checkpoints_and_censors():
    rows = fact_latencies([_obs(0, 2, []), _obs(1, 5, ["t9"]), _obs(2, 9, ["t2"]),
                           _obs(0, 2, [], "never"), _obs(1, 5, [], "never")], TURNS)
    by = {r.condition: r for r in rows}
    assert by["c"].first_recall_checkpoint == 2 and by["c"].waited_checkpoints == 2
    assert by["c"].latency_hours == 8.0
    assert by["never"].first_recall_checkpoint is None and by["never"].observed == 2
    summary = {s["condition"]: s for s in summarise_latency(rows)}
    assert summary["never"]["censored"] == 1 and summary["never"]["median_hours"] is None
    assert summary["c"]["at_first_checkpoint"] == 0.0


def test_nightly_consolidation_delays_recall(example):
    text = example.read_text().replace("session-end.toml", "nightly-only.toml").replace("[answerer]", '''
[[conditions]]
name = "exia-nightly"
system = "exia-seed"
options = { phase = 2, tools = "off", auto_consolidate = false }

[answerer]''')
    example.write_text(text)
    out = run_campaign(example)
    data = load_run(RunStore(out.store_path), out.run_id, "deterministic")
    summary = {s["condition"]: s for s in summarise_latency(fact_latencies(data.observations, data.turns))}
    # The raw transcript is recallable at once; EXIA's pages only after the next night.
    assert summary["full-context"]["at_first_checkpoint"] == 1.0
    assert summary["exia-nightly"]["recalled"] > 0
    assert summary["exia-nightly"]["median_waited"] >= 1
    assert summary["exia-nightly"]["median_hours"] > 24
