"""The fidelity audit on a real replay: ICE's defective procedural leg and its never-eligible legs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from lsrep.reports.load import load_run

from lsrep.audit import audit_run
from lsrep.runner import run_campaign
from lsrep.store import RunStore

LINES = [
    ("user", "Always answer in bullet points, please."),
    ("assistant", "Understood, bullet points from now on."),
    ("user", "I live in Lisbon near the river."),
    ("assistant", "Lisbon is lovely."),
    ("user", "I moved to Porto last week."),
    ("assistant", "Welcome to Porto."),
]


def _write(tmp_path):
    t0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
    turns = [{"turn_id": f"t{i}", "session_id": f"s{i // 2}", "timestamp": (t0 + timedelta(days=i // 2, minutes=i)).isoformat(),
              "role": role, "content": text} for i, (role, text) in enumerate(LINES)]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    probes = [
        {"probe_id": "format", "question": "How should you format answers?", "kind": "current",
         "references": [{"answer": "bullet points", "valid_from": "t0", "evidence": ["t0"]}]},
        {"probe_id": "city", "question": "Where do I live?", "kind": "current",
         "references": [{"answer": "Lisbon", "valid_from": "t2", "valid_until": "t4", "evidence": ["t2"]},
                        {"answer": "Porto", "valid_from": "t4", "evidence": ["t4"]}]},
    ]
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(p) for p in probes) + "\n")
    campaign = tmp_path / "c.toml"
    campaign.write_text('''name = "audit"
store = "s.sqlite"
[[trajectories]]
id = "procedures"
trajectory = "t.jsonl"
probes = "p.jsonl"
[[conditions]]
name = "ice"
system = "ice"
[[conditions]]
name = "ice-defect"
system = "ice"
options = { seed_defects = { procedural_leg = true } }
''')
    return campaign


def test_audit_classifies_defective_and_never_eligible_mechanisms(tmp_path):
    out = run_campaign(_write(tmp_path))
    data = load_run(RunStore(out.store_path), out.run_id, "deterministic")
    audit = audit_run(data.events, data.manifest["conditions"], data.observations)
    status = {(m.condition, m.mechanism): m.status for m in audit.mechanisms}
    assert status[("ice", "ice.leg.procedural")] == "reached_prompt"
    assert status[("ice-defect", "ice.leg.procedural")] == "executed_no_output"
    for cond in ("ice", "ice-defect"):
        # No documents were loaded and the history is far too short for summaries.
        assert status[(cond, "ice.leg.document")] == "never_eligible"
        assert status[(cond, "ice.leg.summary")] == "never_eligible"


def test_graph_leg_contribution_comes_from_an_ablation_not_execution(example):
    """Seed case I-3: the graph leg executes, but only the paired contrast can say it contributes."""
    example.write_text(example.read_text().replace("[answerer]", '''[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "ice-no-graph"
system = "ice"
disable = ["ice.leg.graph"]

[answerer]'''))
    out = run_campaign(example)
    data = load_run(RunStore(out.store_path), out.run_id, "deterministic")
    audit = audit_run(data.events, data.manifest["conditions"], data.observations)
    graph = next(m for m in audit.mechanisms if (m.condition, m.mechanism) == ("ice", "ice.leg.graph"))
    assert graph.counts.executed > 0
    effect = graph.ablation
    assert effect is not None and effect.ablation == "ice-no-graph"
    assert effect.pairs == 63 and effect.comparison.difference.clusters == 11
    lo, hi = effect.comparison.difference.interval
    assert lo <= effect.comparison.difference.value <= hi
    assert effect.contributing == (effect.comparison.randomization.p_value < 0.05 and not lo <= 0 <= hi)
    off = next(m for m in audit.mechanisms if (m.condition, m.mechanism) == ("ice-no-graph", "ice.leg.graph"))
    assert off.status == "disabled"
