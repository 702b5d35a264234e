"""LLMClient against the real in-process server: retries, faults, cache, bounds, accounting."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.limits import FileLockLimit
from lsrep.llm.records import ChatRequest, LLMCallError
from lsrep.llm.server import Fault, OpenAITestServer, Reply

HELLO = [{"role": "user", "content": "hello"}]


def test_ok_call_records_usage_and_cost(server, spec_for):
    server.reply = lambda req: Reply("hi there", usage={"prompt_tokens": 1000,
                                                         "completion_tokens": 500,
                                                         "total_tokens": 1500})
    client = LLMClient(spec_for(server, price_prompt_per_1k=0.01, price_completion_per_1k=0.03))
    text, rec = client.complete(HELLO, purpose="judge")
    assert text == "hi there"
    assert rec.ok and rec.attempts == 1 and rec.faults == () and not rec.cached
    assert rec.purpose == "judge" and rec.model == "test-model"
    assert rec.base_url == server.base_url
    assert rec.usage.prompt_tokens == 1000 and rec.usage.completion_tokens == 500
    assert rec.usage.estimated_prompt_tokens == 2  # "hello" -> ceil(5 / 4)
    assert rec.cost_usd == pytest.approx(0.01 + 0.015)
    assert len(rec.request_digest) == 64
    totals = client.ledger.totals()
    assert totals["judge"].calls == 1 and totals["judge"].cost_usd == pytest.approx(0.025)
    assert totals["answer"].calls == 0


@pytest.mark.parametrize(
    ("fault", "label"),
    [
        (Fault.rate_limited(retry_after=0.0), "429"),
        (Fault.http(500), "500"),
        (Fault.http(503), "503"),
        (Fault.timeout(hang_s=1.0), "timeout"),
        (Fault.malformed(), "malformed"),
        (Fault.disconnect(), "connection"),
    ],
)
def test_each_retryable_fault_is_retried_and_recorded(server, spec_for, fault, label):
    server.enqueue_faults(fault, fault)
    client = LLMClient(spec_for(server, timeout_s=0.3))
    text, rec = client.complete(HELLO)
    assert text == "echo: hello"
    assert rec.ok and rec.attempts == 3
    assert rec.faults == (label, label)
    assert len(rec.backoff_s) == 2
    assert server.request_count == 3


def test_mixed_faults_in_order(server, spec_for):
    server.enqueue_faults(Fault.rate_limited(0.0), Fault.http(500), Fault.timeout(hang_s=1.0))
    rec = LLMClient(spec_for(server, timeout_s=0.3)).complete(HELLO)[1]
    assert rec.ok and rec.faults == ("429", "500", "timeout") and rec.attempts == 4


def test_retry_after_is_honoured(server, spec_for):
    server.enqueue_faults(Fault.rate_limited(retry_after=0.15))
    started = time.monotonic()
    rec = LLMClient(spec_for(server, backoff_base_s=0.001)).complete(HELLO)[1]
    assert rec.ok and rec.faults == ("429",)
    assert rec.backoff_s[0] >= 0.15
    assert time.monotonic() - started >= 0.15


def test_failure_after_max_retries(server, spec_for):
    server.enqueue_faults(*[Fault.http(500)] * 3)
    text, rec = LLMClient(spec_for(server, max_retries=2)).complete(HELLO)
    assert text is None
    assert rec.status == "failed" and rec.reason == "retries_exhausted"
    assert rec.attempts == 3 and rec.faults == ("500", "500", "500")
    assert len(rec.backoff_s) == 2 and "500" in (rec.error or "")
    assert server.request_count == 3


def test_client_errors_are_not_retried(server, spec_for):
    server.enqueue_faults(Fault.http(400))
    text, rec = LLMClient(spec_for(server)).complete(HELLO)
    assert text is None and rec.reason == "request_rejected"
    assert rec.attempts == 1 and rec.faults == ("400",)


def test_backoff_is_exponential_and_seeded(server, spec_for):
    def run() -> tuple[float, ...]:
        server.enqueue_faults(*[Fault.http(500)] * 3)
        spec = spec_for(server, backoff_base_s=0.01, backoff_max_s=1.0, max_retries=3)
        return LLMClient(spec, rng_seed=7).complete(HELLO)[1].backoff_s

    first, second = run(), run()
    assert first == second  # same seed, same jitter
    for k, delay in enumerate(first):
        assert 0.01 * 2**k * 0.5 <= delay <= 0.01 * 2**k


def test_cache_hit_makes_no_request(server, spec_for, tmp_path):
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        client = LLMClient(spec_for(server), cache=cache)
        first = client.complete(HELLO)
        assert server.request_count == 1
        server.reset_counters()
        text, rec = client.complete(HELLO)
        assert server.request_count == 0
        assert text == first[0] and rec.cached and rec.attempts == 0
        assert rec.request_digest == first[1].request_digest
        assert rec.usage == first[1].usage
        # a new client over the same file hits too
        again = LLMClient(spec_for(server), cache=cache).complete(HELLO)[1]
        assert again.cached and server.request_count == 0


def test_failures_are_not_cached(server, spec_for, tmp_path):
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        client = LLMClient(spec_for(server, max_retries=0), cache=cache)
        server.enqueue_faults(Fault.http(500))
        assert client.complete(HELLO)[1].reason == "retries_exhausted"
        assert cache.count() == 0
        assert client.complete(HELLO)[1].ok and cache.count() == 1


def test_repetitions_share_greedy_and_split_sampled_cache(server, spec_for, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        greedy = LLMClient(spec_for(server, temperature=0.0, seed=5), cache=cache)
        r0, r1 = (greedy.complete(HELLO, repetition=k)[1] for k in (0, 1))
        assert r1.cached and r0.request_digest == r1.request_digest and r1.seed == 5
        sampled = LLMClient(spec_for(server, temperature=0.7, seed=5), cache=cache)
        s0, s1 = (sampled.complete(HELLO, repetition=k)[1] for k in (0, 1))
        assert not s1.cached and s0.request_digest != s1.request_digest
        assert (s0.seed, s1.seed) == (5, 6)
        assert [r.body.get("seed") for r in server.requests] == [5, 5, 6]
        unseeded = LLMClient(spec_for(server, temperature=0.7, seed=None), cache=cache)
        u0, u1 = (unseeded.complete(HELLO, repetition=k)[1] for k in (0, 1))
        assert not u1.cached and u0.request_digest != u1.request_digest
        assert "seed" not in server.requests[-1].body


def test_complete_many_keeps_order_within_the_bound(spec_for):
    with OpenAITestServer(latency_s=0.1) as srv:
        client = LLMClient(spec_for(srv, concurrency=4))
        requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},))
                    for i in range(24)]
        results = client.complete_many(requests)
        assert srv.max_in_flight == 4
        assert [text for text, _ in results] == [f"echo: q{i}" for i in range(24)]
        assert all(rec.ok for _, rec in results)


def test_concurrency_bound_holds_for_any_number_of_callers(spec_for):
    with OpenAITestServer(latency_s=0.1) as srv:
        client = LLMClient(spec_for(srv, concurrency=3))
        with ThreadPoolExecutor(max_workers=12) as pool:
            records = list(pool.map(
                lambda i: client.complete([{"role": "user", "content": f"q{i}"}])[1], range(24)))
        assert all(r.ok for r in records)
        assert srv.max_in_flight == 3


def test_retries_do_not_hold_a_slot_while_sleeping(spec_for):
    # One slot: a request sleeping in backoff must let another one through.
    with OpenAITestServer(latency_s=0.0) as srv:
        srv.enqueue_faults(Fault.rate_limited(retry_after=0.3))
        client = LLMClient(spec_for(srv, concurrency=1, backoff_max_s=1.0))
        requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},))
                    for i in range(2)]
        results = client.complete_many(requests)
        # The second request completed while the first waited out Retry-After.
        done_order = sorted(results, key=lambda r: r[1].latency_s)
        assert done_order[0][1].attempts == 1 and done_order[0][1].latency_s < 0.3


def test_file_lock_limit_shared_across_processes(tmp_path, spec_for):
    worker = textwrap.dedent(
        """
        import sys
        from lsrep.llm.client import LLMClient
        from lsrep.llm.config import EndpointSpec
        from lsrep.llm.limits import FileLockLimit
        from lsrep.llm.records import ChatRequest
        spec = EndpointSpec(base_url=sys.argv[1], model="m", concurrency=8)
        client = LLMClient(spec, limit=FileLockLimit(sys.argv[2], 3))
        reqs = [ChatRequest(messages=({"role": "user", "content": str(i)},)) for i in range(12)]
        assert all(rec.ok for _, rec in client.complete_many(reqs))
        """
    )
    with OpenAITestServer(latency_s=0.05) as srv:
        procs = [subprocess.Popen([sys.executable, "-c", worker, srv.base_url,
                                   str(tmp_path / "slots")]) for _ in range(2)]
        # and threads of this process take the same slots
        client = LLMClient(spec_for(srv, concurrency=8), limit=FileLockLimit(tmp_path / "slots", 3))
        client.complete_many([ChatRequest(messages=({"role": "user", "content": f"p{i}"},))
                              for i in range(12)])
        assert all(p.wait(timeout=60) == 0 for p in procs)
        assert srv.request_count == 36
        assert srv.max_in_flight <= 3


def test_missing_key_fails_without_request(server, spec_for, monkeypatch):
    monkeypatch.delenv("LSREP_TEST_ABSENT_KEY", raising=False)
    text, rec = LLMClient(spec_for(server, api_key_env="LSREP_TEST_ABSENT_KEY")).complete(HELLO)
    assert text is None and rec.reason == "missing_api_key" and rec.attempts == 0
    assert "LSREP_TEST_ABSENT_KEY" in (rec.error or "")
    assert server.request_count == 0


def test_key_is_read_at_call_time(server, spec_for, monkeypatch):
    monkeypatch.setenv("LSREP_TEST_KEY", "sk-first")
    client = LLMClient(spec_for(server, api_key_env="LSREP_TEST_KEY"))
    client.complete(HELLO)
    monkeypatch.setenv("LSREP_TEST_KEY", "sk-second")
    client.complete([{"role": "user", "content": "again"}])
    assert [r.bearer for r in server.requests] == ["sk-first", "sk-second"]


def test_system_language_model_adapter(server, spec_for):
    client = LLMClient(spec_for(server, max_retries=0))
    model = client.as_language_model()
    assert model.complete(HELLO) == "echo: hello"
    server.enqueue_faults(Fault.http(502))
    with pytest.raises(LLMCallError) as err:
        model.complete(HELLO)
    assert err.value.record.faults == ("502",)
    drained = model.drain()
    assert [r.purpose for r in drained] == ["system", "system"]
    assert [r.status for r in drained] == ["ok", "failed"]
    assert model.drain() == []
    assert client.ledger.totals()["system"].failed == 1


def test_records_reach_sinks(server, spec_for):
    seen = []
    client = LLMClient(spec_for(server), on_record=seen.append)
    client.complete(HELLO, purpose="answer", prompt_digest="abc")
    assert len(seen) == 1 and seen[0].prompt_digest == "abc"
