"""Protocol fit: reset names the owner and speakers, asyncio adapters run in the host, the manifest
records LSREP's revision and the distributions an adapter wraps."""

from __future__ import annotations

import subprocess
from pathlib import Path

import lsrep
from lsrep.conformance import run_conformance
from lsrep.contract import MemoryAdapter, Participants, ReplayTurn, accepts_participants
from lsrep.executors.local import InProcessExecutor
from lsrep.runner import run_campaign
from lsrep.store import RunStore

HERE = "tests.host.host_adapters"


def _only(example, system: str, *, extra: str = "") -> None:
    text = example.read_text()
    head, _, rest = text.partition("[[conditions]]")
    tail = "[answerer]" + rest.split("[answerer]", 1)[1]
    example.write_text(head + f'[[conditions]]\nname = "c"\nsystem = "{system}"\n\n' + tail + extra)


def _texts(out) -> list[str]:
    return [r["t"] for r in RunStore(out.store_path).rows(
        "select coalesce(t.text, f.text) as t from fragments f left join fragment_texts t on t.sha256 = f.text_sha256")]


def test_participants_of_a_conversation():
    turns = [ReplayTurn(turn_id=f"t{i}", conversation_id="c", index=i, session_id="s", role=role, speaker=name,
                        content="x", timestamp="2026-01-01T00:00:00+00:00")
             for i, (role, name) in enumerate([("assistant", "Bot"), ("user", "Ana"), ("user", None)])]
    p = Participants.of_turns(turns)
    assert p.owner == "Ana"
    assert [(s.name, s.role) for s in p.speakers] == [("Bot", "assistant"), ("Ana", "user"), ("user", "user")]


def test_only_an_adapter_asking_for_participants_gets_them():
    from tests.host.host_adapters import ClockReadingAdapter, OwnerAwareAdapter

    assert accepts_participants(OwnerAwareAdapter)
    assert not accepts_participants(ClockReadingAdapter)
    assert not accepts_participants(MemoryAdapter)


def test_a_hosted_adapter_is_told_the_owner_and_speakers_in_a_campaign(example):
    _only(example, f"{HERE}:OwnerAwareAdapter")
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    texts = set(_texts(out))
    assert texts == {"memories of Maya among Maya/user, Journal/assistant"}, texts


def test_an_asyncio_adapter_runs_in_the_host(example):
    _only(example, f"{HERE}:AsyncAdapter")
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    store = RunStore(out.store_path)
    assert not store.rows("select * from failures where run_id = ?", [out.run_id])
    assert any("Lisbon" in t for t in _texts(out))
    report = run_conformance(f"{HERE}:AsyncAdapter", checks=["determinism", "reset_empties_state", "ingest_order"])
    assert report.ok, report.results


def test_the_manifest_records_lsreps_revision_and_the_adapters_distributions(example):
    _only(example, f"{HERE}:DistributionsAdapter")
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    manifest = RunStore(out.store_path).run(out.run_id)["manifest"]
    cond = manifest["conditions"]["c"]
    assert cond["distributions"]["pydantic"] == manifest["packages"]["pydantic"] != "not installed"
    assert cond["distributions"]["no-such-distribution-lsrep"] == "not installed"
    source = Path(lsrep.__file__).resolve().parent
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True)
    if head.returncode == 0:
        assert manifest["git_revision"].startswith(head.stdout.strip())
    else:
        assert manifest["git_revision"] is None
    # The campaign's folder (here a temporary one, outside any repository) is recorded apart.
    assert manifest["campaign_git_revision"] is None


def test_warnings_and_log_records_are_captured_per_condition_and_reported(example):
    import json

    from lsrep.reports.build import write_report
    from lsrep.reports.model import build_report
    from lsrep.reports.render import render_markdown

    _only(example, f"{HERE}:ChattyAdapter")
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    store = RunStore(out.store_path)
    rows = {(r["kind"], r["message"]): r for r in store.rows(
        "select * from adapter_logs where run_id = ? and condition = 'c'", [out.run_id])}
    n_turns = len((example.parent / "quickstart" / "trajectory.jsonl").read_text().splitlines())
    warned = rows[("warning", "BM25 lane disabled: fastembed model not available offline")]
    assert warned["count"] == 1 and warned["method"] == "build" and warned["source"].startswith("UserWarning at ")
    logged = rows[("log", "entity extraction skipped for turn")]
    assert logged["count"] == n_turns and logged["source"] == "chatty.store" and logged["level"] == "warning"
    assert not any("below WARNING" in m for _, m in rows)
    report = build_report(store, out.run_id)
    assert "entity extraction skipped for turn" in render_markdown(report)
    data = json.loads(write_report(report, "json", example.parent / "r.json").read_text())
    want = {"distinct": 2, "log_records": n_turns, "warnings": 1}
    assert f'"adapter_log": {json.dumps(want, sort_keys=True)}' in json.dumps(data, sort_keys=True)
