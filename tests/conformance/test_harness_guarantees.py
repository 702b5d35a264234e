"""What the harness guarantees by construction, shown on real replays with a recording adapter.

No adapter ever receives reference answers, evidence labels or anything of a probe beyond its
question; every system in a campaign gets the same retrieval budget.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from lsrep.contract import AdapterSetup, MemoryAdapter, ReplayTurn
from lsrep.host.sandbox import WRITABLE_ENV
from lsrep.runner import run_campaign

RECORDER = "tests.conformance.recording_adapter:RecordingAdapter"
BUDGET_RECORDER = "tests.conformance.recording_adapter:BudgetRecordingAdapter"
CANARY_PROBES = [
    {"probe_id": "canary-probe-id-4b2", "question": "Which city does Maya live in now?", "kind": "current",
     "category": "canary-category-5e1", "before_first": "abstain",
     "references": [{"answer": "Zanzibar-canary-7f3a", "aliases": ["alias-canary-91c"], "valid_from": "t0001",
                     "valid_until": "t0014", "evidence": ["t0001"]},
                    {"answer": "Ulaanbaatar-canary-0d5", "valid_from": "t0014", "evidence": ["t0014", "t0015"]}]},
    {"probe_id": "canary-abstain-77e", "question": "What is the name of Maya's cat?", "kind": "abstention",
     "category": "canary-category-5e1"},
]


def write_campaign(example: Path, conditions: str, *, header: str = "") -> Path:
    """The bundled example's data and schedule, with only the given conditions."""
    path = example.parent / "guarantees.toml"
    path.write_text(f'''name = "guarantees"
{header}store = "../runs/lsrep.sqlite"
schedule = "../schedules/session-end.toml"

[[trajectories]]
id = "maya-journal"
trajectory = "quickstart/trajectory.jsonl"
probes = "quickstart/probes.jsonl"

{conditions}''')
    return path


def recorder_block(name: str, system: str, log: Path) -> str:
    return f'[[conditions]]\nname = "{name}"\nsystem = "{system}"\noptions = {{ log = "{log}" }}\n'


def host_log(tmp_path: Path, monkeypatch) -> Path:
    """A log file in a folder of its own that adapter hosts may write (the recorder runs there)."""
    folder = tmp_path / "host-log"
    folder.mkdir()
    monkeypatch.setenv(WRITABLE_ENV, str(folder))
    return folder / "calls.jsonl"


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_contract_surface_carries_no_reference_fields():
    assert set(ReplayTurn.model_fields) == {
        "turn_id", "session_id", "conversation_id", "index", "timestamp", "role", "speaker", "content"}
    assert set(AdapterSetup.__dataclass_fields__) == {
        "options", "disabled", "state_dir", "retrieval_budget", "embedder", "embedding_text", "llm", "seed",
        "memory_llm", "memory_embedder"}
    shapes = {name: list(inspect.signature(getattr(MemoryAdapter, name)).parameters)
              for name in ("reset", "ingest", "query", "end_session", "maintain")}
    assert shapes == {
        "reset": ["self", "conversation_id", "now"], "ingest": ["self", "turn", "now"],
        "query": ["self", "question", "now"], "end_session": ["self", "session_id", "now"],
        "maintain": ["self", "operation", "now"],
    }


def test_no_reference_answer_or_evidence_label_reaches_an_adapter(example, tmp_path, monkeypatch):
    data = example.parent / "quickstart"
    with (data / "probes.jsonl").open("a", encoding="utf-8") as fh:
        for probe in CANARY_PROBES:
            fh.write(json.dumps(probe) + "\n")
    log = host_log(tmp_path, monkeypatch)
    campaign = write_campaign(example, recorder_block("recorder", RECORDER, log)
                              + recorder_block("recorder-isolated", RECORDER, log)
                              + 'schedule = "../schedules/session-end-isolated.toml"\n')
    out = run_campaign(campaign)
    assert out.failed_units == 0

    calls = read_log(log)
    conversation = " ".join(json.loads(line)["content"] for line in (data / "trajectory.jsonl").read_text().splitlines())
    probes = [json.loads(line) for line in (data / "probes.jsonl").read_text().splitlines()]
    # Every answer, alias, probe id and category not said in the conversation itself is a canary.
    secrets = {p["probe_id"] for p in probes} | {p["category"] for p in probes if p.get("category")}
    for p in probes:
        for ref in p.get("references", []):
            secrets |= {ref["answer"], *ref.get("aliases", [])}
    secrets = {s for s in secrets if s.lower() not in conversation.lower()}
    assert {"Zanzibar-canary-7f3a", "alias-canary-91c", "canary-probe-id-4b2", "canary-category-5e1"} <= secrets
    blob = json.dumps(calls).lower()
    assert [s for s in secrets if s.lower() in blob] == []

    queries = [c for c in calls if c["call"] == "query"]
    assert {q["args"]["question"] for q in queries} == {p["question"] for p in probes}
    turn_ids = [json.loads(line)["turn_id"] for line in (data / "trajectory.jsonl").read_text().splitlines()]
    # A query carries the question and the simulated now: no turn ids, so no evidence labels.
    assert not [q for q in queries if any(t in json.dumps(q["args"]) for t in turn_ids)]
    ingested = [c["args"]["turn"]["turn_id"] for c in calls if c["call"] == "ingest"]
    assert ingested == turn_ids * 2  # each condition saw the trajectory once, in order
    assert any(c["call"] == "restore" for c in calls)  # the isolated condition really snapshotted


def test_every_system_in_a_campaign_gets_the_same_budget(example, tmp_path, monkeypatch):
    log = host_log(tmp_path, monkeypatch)
    campaign = write_campaign(example, recorder_block("plain", RECORDER, log)
                              + recorder_block("honours", BUDGET_RECORDER, log), header="retrieval_budget = 321\n")
    out = run_campaign(campaign)
    assert out.failed_units == 0
    setups = [c for c in read_log(log) if c["call"] == "setup"]
    assert {c["adapter"] for c in setups} == {"RecordingAdapter", "BudgetRecordingAdapter"}
    assert {c["args"]["retrieval_budget"] for c in setups} == {321}


def test_without_a_declared_budget_no_system_gets_one(example, tmp_path, monkeypatch):
    log = host_log(tmp_path, monkeypatch)
    run_campaign(write_campaign(example, recorder_block("plain", RECORDER, log)
                                + recorder_block("honours", BUDGET_RECORDER, log)))
    assert {c["args"]["retrieval_budget"] for c in read_log(log) if c["call"] == "setup"} == {None}
