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


def test_gold_labels_never_reach_an_adapter(shared, tmp_path, monkeypatch):
    from lsrep.host.sandbox import WRITABLE_ENV

    (tmp_path / "host-log").mkdir()
    monkeypatch.setenv(WRITABLE_ENV, str(tmp_path / "host-log"))  # the recorder in its host writes here
    log = tmp_path / "host-log" / "calls.jsonl"
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


def test_bundled_campaign_validates_runs_offline_and_names_its_command(repo, shared, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LSREP_LME_JUDGE_BASE_URL", raising=False)
    campaign = repo / "campaigns" / "longmemeval.toml"
    assert main(["validate", str(campaign)]) == 0
    out = capsys.readouterr().out
    assert "LongMemEval campaign 'longmemeval': 6 condition(s)" in out and "lsrep longmemeval --campaign" in out
    assert main(["run", str(campaign)]) != 0
    assert "run it with `lsrep longmemeval --campaign" in capsys.readouterr().err
    store = tmp_path / "b.sqlite"
    assert main(["longmemeval", "--campaign", str(campaign), "--data", str(_fragment(shared)), "--store",
                 str(store), "--report", str(tmp_path / "rep"), "--export", str(tmp_path / "exp")]) == 0
    out = capsys.readouterr().out
    assert "not LongMemEval's official judge" in out
    rs = RunStore(store)
    run_id = rs.latest_run()
    turns = {(r["trajectory"], r["session_id"]) for r in rs.rows("select trajectory, session_id from turns")}
    single = {t for t, s in turns if t.endswith("-single")}
    assert single and all((t, "s1") in turns for t in single)  # one conversation for that condition
    assert {s for t, s in turns if not t.endswith("-single")} >= {"s001", "s002"}  # sessions kept elsewhere
    assert rs.rows("select count(*) n from turns where content is not null")[0]["n"] == 0  # text stays in the input
    report = build_report(rs, run_id)
    for section in report.sections:  # no empty section, no over-time views of one checkpoint
        assert section.blocks, section.id
        for block in section.blocks:
            caption = getattr(block, "caption", "")
            assert "over checkpoints" not in caption and not caption.startswith("Stale and future"), caption
            if hasattr(block, "rows") and section.id not in ("failures", "examples"):  # "none" is news there
                assert block.rows, (section.id, caption)
    assert (tmp_path / "exp" / "ice" / "retrieval.jsonl").exists()
    # The same files later, from the store alone (texts read back from the input file).
    assert main(["export", "--store", str(store), "--format", "longmemeval", "-o", str(tmp_path / "again")]) == 0
    for name in ("hypotheses.jsonl", "retrieval.jsonl", "metrics.json"):
        assert (tmp_path / "again" / "ice" / name).read_bytes() == (tmp_path / "exp" / "ice" / name).read_bytes()
    entry = json.loads((tmp_path / "again" / "ice" / "retrieval.jsonl").read_text().splitlines()[0])
    assert entry["retrieval_results"]["ranked_items"][0]["corpus_id"].startswith(("answer_", "noans_"))


def test_official_judge_joins_when_its_endpoint_is_configured(repo, shared, monkeypatch):
    from lsrep.longmemeval import load_longmemeval_spec

    campaign = repo / "campaigns" / "longmemeval.toml"
    monkeypatch.delenv("LSREP_LME_JUDGE_BASE_URL", raising=False)
    spec, _ = load_longmemeval_spec(campaign, _fragment(shared))
    assert spec.judges == ()
    monkeypatch.setenv("LSREP_LME_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    spec, _ = load_longmemeval_spec(campaign, _fragment(shared))
    (judge,) = spec.judges
    assert (judge.kind, judge.name, judge.endpoint.model) == ("longmemeval", "gpt-4o", "gpt-4o-2024-08-06")


def test_or_answers_become_aliases_the_deterministic_judge_accepts(shared, tmp_path):
    from lsrep.probes.longmemeval import iter_longmemeval

    from lsrep.judge.deterministic import judge_deterministic
    from lsrep.judge.verdict import JudgeCase, VersionView

    item = next(i for i in iter_longmemeval(_fragment(shared)) if i.question_id == "6a1eabeb")
    (version,) = item.probe.references
    assert version.answer == "25 minutes and 50 seconds (or 25:50)"  # the official judge sees it whole
    assert version.aliases == ("25 minutes and 50 seconds", "25:50")
    view = VersionView(answer=version.answer, aliases=version.aliases, valid_from=version.valid_from)
    case = JudgeCase(question=item.probe.question, answer="My best time is 25:50.", kind="current",
                     expect_abstain=False, in_force=(view,))
    assert judge_deterministic(case).correct


def test_worker_processes_give_the_same_official_files(tmp_path):
    from lsrep.executors import make_executor
    from lsrep.longmemeval_export import export_longmemeval

    data = generate_longmemeval_file(tmp_path / "g.json", n_questions=6, sessions_per_question=4, seed=2,
                                     turns_per_session=4, turn_tokens=30)
    out = {}
    for workers in (1, 2):
        spec = spec_from_systems(["vector-rag", "null"], data, store=tmp_path / f"w{workers}.sqlite")
        outcome = run_longmemeval(spec, executor=make_executor("auto", workers))
        export_longmemeval(RunStore(outcome.store_path), outcome.run_id, tmp_path / f"exp{workers}")
        out[workers] = {p.relative_to(tmp_path / f"exp{workers}"): p.read_bytes()
                        for p in sorted((tmp_path / f"exp{workers}").rglob("*")) if p.is_file()}
    assert out[1] == out[2] and len(out[1]) == 6


def test_the_reader_memo_is_emptied_after_each_question(tmp_path, monkeypatch):
    """Questions have their own haystacks: the driver empties the offline reader's memo after each
    unit, so its memory is one question's entries, not the bounds filled by hundreds of them."""
    from lsrep import longmemeval
    from lsrep.answer import memo

    data = generate_longmemeval_file(tmp_path / "gen.json", n_questions=4, sessions_per_question=3, seed=5,
                                     turns_per_session=4, turn_tokens=30)
    memo.clear()
    seen = []
    real_clear = memo.clear

    def clear():
        seen.append(memo.held())
        real_clear()

    monkeypatch.setattr(longmemeval.answer_memo, "clear", clear)
    outcome = run_longmemeval(spec_from_systems(["full-context"], data, store=tmp_path / "m.sqlite"))
    assert outcome.units_run == 4 and len(seen) == 4
    assert all(n > 0 for n in seen)  # each question filled it, and it was emptied after each
    assert memo.held() == 0
