"""A campaign whose answerer and model judges are served over real HTTP, with injected faults."""

from __future__ import annotations

import hashlib
import json
import re
import uuid

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.model import build_report

from lsrep.exporting import export_rows
from lsrep.llm.server import Fault, OpenAITestServer
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def scripted_model(request) -> str:
    """A tiny deterministic 'model' that plays answerer and both judges."""
    system = request.messages[0]["content"] if request.messages and request.messages[0]["role"] == "system" else ""
    user = request.last_user
    digest = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if system.startswith("You answer questions"):
        first = re.search(r"^\[1\] (.*)$", user, re.M)
        return first.group(1)[:160] if first else "I don't know"
    if system.startswith("You grade answers"):
        label = ("correct", "wrong", "stale", "abstained")[digest % 4]
        return json.dumps({"label": label, "rubric": 1 + digest % 5, "rationale": "scripted"})
    if system.startswith("You check whether") or user.startswith("I will give you"):  # LongMemEval judges
        return "yes" if digest % 3 else "no"
    return "Reply with the JSON object."  # a repair request: the judge asks again


def _campaign(example, server: OpenAITestServer, key_env: str) -> None:
    endpoint = (f'base_url = "{server.base_url}"\nmodel = "scripted"\napi_key_env = "{key_env}"\n'
                f"max_retries = 8\ntimeout_s = 3.0\nconcurrency = 4\ncontext_window = 200000\n")
    text = example.read_text()
    text = text.replace('''[[conditions]]
name = "full-context"
system = "full-context"
options = { context_limit = 16000 }
''', "")
    text = text.replace('''[answerer]
kind = "extractive"
context_window = 32768
overflow = "fail"''', f'''[answerer]
kind = "llm"
context_window = 32768
overflow = "fail"
[answerer.endpoint]
{endpoint}
[[judges]]
name = "evolving"
kind = "evolving"
[judges.endpoint]
{endpoint}
[[judges]]
name = "lme"
kind = "longmemeval"
[judges.endpoint]
{endpoint}''')
    example.write_text(text)


@pytest.fixture
def planted_key(monkeypatch) -> tuple[str, str]:
    key = f"sk-planted-{uuid.uuid4().hex}"
    monkeypatch.setenv("LSREP_TEST_KEY", key)
    return "LSREP_TEST_KEY", key


def test_campaign_survives_faults_and_reruns_from_cache(example, planted_key, tmp_path):
    env, key = planted_key
    with OpenAITestServer(reply=scripted_model) as server:
        _campaign(example, server, env)
        server.enqueue_faults(Fault.rate_limited(0.0), Fault.http(500), Fault.malformed(),
                              Fault.timeout(hang_s=5.0), Fault.http(503), Fault.disconnect())
        first = run_campaign(example)
        sent = server.request_count
        assert sent > 0 and all(r.bearer == key for r in server.requests)
        store = RunStore(first.store_path)
        calls = store.rows("select * from llm_calls where run_id = ?", [first.run_id])
        by_purpose = {p: [c for c in calls if c["purpose"] == p] for p in ("answer", "judge")}
        assert by_purpose["answer"] and by_purpose["judge"]
        faulted = [c for c in calls if json.loads(c["faults"])]
        # Every injected fault is on record, on a call that was retried and then succeeded.
        assert sorted(f for c in faulted for f in json.loads(c["faults"])) == sorted(
            ["429", "500", "malformed", "timeout", "503", "connection"])
        assert all(c["status"] == "ok" and c["attempts"] > 1 for c in faulted)
        assert store.rows("select count(*) n from observations where run_id = ? and status = 'error'",
                          [first.run_id])[0]["n"] == 0
        judged = {r["judge"]: r["n"] for r in store.rows(
            "select judge, count(*) n from judgements where run_id = ? and status = 'ok' group by judge",
            [first.run_id])}
        assert judged == {"deterministic": 126, "evolving": 126, "lme": 126}

        second = run_campaign(example, fresh=True)
        assert server.request_count == sent, "a re-run must be served from the cache"
        again = store.rows("select cached, count(*) n from llm_calls where run_id = ? group by cached",
                           [second.run_id])
        assert again == [{"cached": 1, "n": len(calls)}]

        # Re-scoring the finished run is free too.
        from lsrep.cli import main

        assert main(["score", first.run_id, "--judge", "evolving", "--store", str(first.store_path)]) == 0
        assert server.request_count == sent

    report = build_report(store, first.run_id)
    judges = next(s for s in report.sections if s.id == "judges")
    pairs = next(b for b in judges.blocks if getattr(b, "caption", "") == "Agreement between judges")
    assert {r["pair"] for r in pairs.rows} == {"deterministic vs evolving", "deterministic vs lme",
                                                "evolving vs lme"}
    # The key is nowhere: store, cache, exports, reports.
    paths = write_reports(store, first.run_id, tmp_path / "report")
    exported = json.dumps(export_rows(store, first.run_id))
    for path in [first.store_path, first.store_path.parent / "llm-cache.sqlite", *paths.values()]:
        assert key.encode() not in path.read_bytes(), path
    for wal in first.store_path.parent.glob("*-wal"):
        assert key.encode() not in wal.read_bytes()
    assert key not in exported


def test_exhausted_retries_become_failure_rows(example, planted_key):
    env, _ = planted_key
    with OpenAITestServer(reply=scripted_model) as server:
        _campaign(example, server, env)
        # One call at a time, so both queued faults hit the same (first) call: no retries left.
        example.write_text(example.read_text().replace("max_retries = 8", "max_retries = 1")
                           .replace("concurrency = 4", "concurrency = 1"))
        server.enqueue_faults(*[Fault.http(500)] * 2)
        out = run_campaign(example)
    store = RunStore(out.store_path)
    failed = store.rows("select * from llm_calls where run_id = ? and status = 'failed'", [out.run_id])
    assert len(failed) == 1 and "retries_exhausted" in failed[0]["error"]
    obs = store.rows("select status, error from observations where obs_id = ?", [failed[0]["obs_id"]])
    judg = store.rows("select judge, status from judgements where obs_id = ? and status != 'ok'",
                      [failed[0]["obs_id"]])
    assert (obs and obs[0]["status"] == "error" and "retries_exhausted" in obs[0]["error"]) or judg


def test_endpoint_concurrency_is_shared_across_worker_processes(example, planted_key):
    from lsrep.executors.local import ProcessPoolExecutor

    env, _ = planted_key
    with OpenAITestServer(reply=scripted_model, latency_s=0.02) as server:
        _campaign(example, server, env)
        text = example.read_text().replace("concurrency = 4", "concurrency = 1")
        # Keep only the answerer's endpoint calls: drop the judges for speed.
        example.write_text(text[: text.index("[[judges]]")])
        out = run_campaign(example, executor=ProcessPoolExecutor(2))
        # The assertion names the failure rows, if any.
        failures = RunStore(out.store_path).rows("select * from failures where run_id = ?", [out.run_id])
        assert out.units_run == 2 and out.failed_units == 0, failures
        # Two workers ran at once, yet the endpoint never saw more than its declared 1 request (the test
        # server stops counting a request when its reply is written: see test_llm_server.py).
        assert server.max_in_flight == 1
