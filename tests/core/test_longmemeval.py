"""LongMemEval matched diagnostics: end to end on the genuine fragment and on generated files."""

from __future__ import annotations

import json
from pathlib import Path

from lsrep.probes.generator import generate_longmemeval_file
from lsrep.reports.model import build_report

from lsrep.cli import main
from lsrep.longmemeval import LongMemEvalSpec, run_longmemeval, spec_from_systems
from lsrep.protocol.campaign import ConditionSpec
from lsrep.store import RunStore


def _fragment(shared: Path) -> Path:
    return shared / "datasets" / "longmemeval_oracle_fragment" / "longmemeval_sample.json"


def test_cli_runs_the_fragment_with_retrieval_recall_and_report(shared, tmp_path, capsys):
    store = tmp_path / "lme.sqlite"
    code = main(["longmemeval", "--data", str(_fragment(shared)), "--systems", "null,vector-rag,thalia",
                 "--store", str(store), "--report", str(tmp_path / "report")])
    assert code == 0
    out = capsys.readouterr().out
    assert "2 question(s), 6 unit(s) replayed" in out
    assert "from the DETERMINISTIC judge — not LongMemEval's official judge" in out
    assert "retrieval (official definitions" in out and "; 1 non-_abs questions" in out
    rs = RunStore(store)
    run_id = rs.latest_run()
    obs = rs.rows("select condition, kind, category from observations where run_id = ?", [run_id])
    assert len(obs) == 6
    assert {o["category"] for o in obs} == {"knowledge-update", "temporal-reasoning"}
    assert sum(o["kind"] == "abstention" for o in obs) == 3  # the `_abs` question, once per system
    from lsrep.longmemeval_export import metrics_by_condition

    metrics = metrics_by_condition(rs, run_id)
    # The knowledge-update question's answer turn is a user turn: null ranks nothing, vector-rag finds it.
    assert metrics["null"]["retrieval"]["turn"]["recall_any@50"] == 0.0
    assert metrics["vector-rag"]["retrieval"]["session"]["recall_all@5"] == 1.0
    assert metrics["null"]["abstention"]["n"] == 1 and metrics["null"]["n"] == 2
    report = build_report(rs, run_id)
    ids = [s.id for s in report.sections]
    # One checkpoint per question: no over-time chart, no empty evidence table; the official tables instead.
    assert "over-time" not in ids and "evidence" not in ids and ids[:2] == ["headline", "longmemeval"]
    mix = report.section("outcome-mix")
    assert mix.title == "Outcome mix" and all(type(b).__name__ != "Figure" for b in mix.blocks)
    tables = [b for b in report.section("longmemeval").blocks if type(b).__name__ == "Table"]
    assert [t.caption for t in tables] == ["QA accuracy (official definitions)", "Retrieval (official definitions)"]
    assert (tmp_path / "report" / "report.html").exists()


def test_gold_labels_never_reach_an_adapter(shared, tmp_path):
    log = tmp_path / "calls.jsonl"
    data = _fragment(shared)
    spec = LongMemEvalSpec(data=data, store=tmp_path / "s.sqlite", conditions=(ConditionSpec(
        name="recorder", system="tests.conformance.recording_adapter:RecordingAdapter",
        options={"log": str(log)}),))
    run_longmemeval(spec)
    seen = log.read_text()
    records = json.loads(data.read_text())
    for record in records:
        assert record["question_id"] not in seen
        for session_id in record["answer_session_ids"]:
            assert session_id not in seen
        assert record["answer"] not in seen or record["answer"] in json.dumps(record["haystack_sessions"])
    assert "has_answer" not in seen and "answer_session" not in seen


def test_generated_file_runs_and_resumes(tmp_path):
    data = generate_longmemeval_file(tmp_path / "gen.json", n_questions=6, sessions_per_question=4, seed=2,
                                     turns_per_session=4, turn_tokens=30)
    spec = spec_from_systems(["vector-rag", "full-context"], data, store=tmp_path / "g.sqlite")
    first = run_longmemeval(spec)
    assert first.questions == 6 and first.units_run == 12 and first.failed_units == 0
    again = run_longmemeval(spec)  # the run finished: a new invocation is a new run
    assert not again.resumed and again.units_run == 12
    rs = RunStore(first.store_path)
    assert rs.rows("select count(*) n from observations where run_id = ?", [first.run_id])[0]["n"] == 12
