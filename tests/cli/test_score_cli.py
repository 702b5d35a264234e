"""`lsrep score` through the CLI against the real in-process OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3

import pytest

from lsrep.llm.server import Fault, OpenAITestServer
from lsrep.store import RunStore

GOOD = json.dumps({"label": "correct", "rubric": 5, "rationale": "ok"})


@pytest.fixture
def small_run(example, cli):
    code, out, err = cli("run", example, "--quiet", "--conditions", "full-context", "--limit", "2")
    assert code == 0, err
    store = example.parent.parent / "runs" / "lsrep.sqlite"
    return store, out.split()[2].rstrip(":")


def _score(cli, server, store, *extra):
    return cli("score", "latest", "--store", store, "--judge", "ev", "--kind", "evolving", "--base-url",
               server.base_url, "--model", "m", "--api-key-env", "LSREP_SCORE_KEY", *extra)


def _cached(store) -> int:
    with sqlite3.connect(store.parent / "llm-cache.sqlite") as conn:
        return conn.execute("select count(*) from responses").fetchone()[0]


def test_score_without_a_key_fails_fast_and_sends_nothing(small_run, cli, monkeypatch):
    store, run_id = small_run
    monkeypatch.delenv("LSREP_SCORE_KEY", raising=False)
    with OpenAITestServer(reply=GOOD) as server:
        code, out, err = _score(cli, server, store)
        assert server.request_count == 0
    assert code == 2 and out == ""
    assert err.strip() == ("lsrep: error: judge 'ev' reads its API key from the environment variable "
                           "LSREP_SCORE_KEY, which is not set; nothing was sent or stored")
    assert RunStore(store).rows("select count(*) n from judgements where judge = 'ev'")[0]["n"] == 0


def test_unparseable_replies_fail_loudly_and_are_never_cached(small_run, cli, monkeypatch):
    store, _ = small_run
    monkeypatch.setenv("LSREP_SCORE_KEY", "sk-test")
    with OpenAITestServer(reply="this is not JSON") as server:
        code, out, err = _score(cli, server, store)
        n_obs = int(out.split(" of ")[1].split()[0])
        assert code == 1
        assert err.splitlines()[0] == f"lsrep: 0 unit(s) failed, 0 failure record(s), {n_obs} judgement(s) failed"
        assert "judge ev: unparseable_judge_output" in err
        # 3 attempts per observation (1 + 2 repairs), all sent; nothing kept in the cache.
        assert f"{3 * n_obs} model call(s): {3 * n_obs} sent to the endpoint, 0 from the cache" in out
        assert _cached(store) == 0

        # The model recovers: the same requests go to the endpoint again, not a cached bad reply.
        server.reply = GOOD
        server.reset_counters()
        code, out, err = _score(cli, server, store)
        assert code == 0, err
        assert server.request_count == n_obs
        assert f"{n_obs} model call(s): {n_obs} sent to the endpoint, 0 from the cache" in out

        # Good replies are cached; --refresh-cache asks the endpoint again anyway.
        code, out, _ = _score(cli, server, store)
        assert code == 0 and f"0 sent to the endpoint, {n_obs} from the cache" in out
        assert server.request_count == n_obs
        code, out, _ = _score(cli, server, store, "--refresh-cache")
        assert code == 0 and f"{n_obs} sent to the endpoint, 0 from the cache" in out
        assert server.request_count == 2 * n_obs
        assert _cached(store) == n_obs


def test_failed_calls_are_counted_as_failed_not_judged(small_run, cli, monkeypatch):
    store, _ = small_run
    monkeypatch.setenv("LSREP_SCORE_KEY", "sk-test")
    with OpenAITestServer(reply=GOOD, faults=[Fault.http(400)] * 500) as server:
        # Every request is rejected (400: not retried): sent, failed, never cached.
        code, out, err = _score(cli, server, store)
        n = server.request_count
    assert code == 1
    assert f"judged 0 of {n} observation(s)" in out
    assert f"{n} model call(s): {n} sent to the endpoint, 0 from the cache, 0 never sent; {n} call(s) failed" in out
    assert "judge ev: judge_call_failed" in err
    assert _cached(store) == 0
