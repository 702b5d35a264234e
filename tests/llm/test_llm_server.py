"""The test server itself: wire format, counters, latency, scripting order."""

from __future__ import annotations

import time

import openai

from lsrep.llm.server import Fault, OpenAITestServer, Reply


def _sdk(srv: OpenAITestServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=5)


def test_sdk_round_trip_and_usage():
    with OpenAITestServer(reply=lambda r: Reply("pong", finish_reason="length")) as srv:
        out = _sdk(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "ping"}])
        assert out.choices[0].message.content == "pong"
        assert out.choices[0].finish_reason == "length"
        assert out.usage.prompt_tokens == 1 and out.usage.completion_tokens == 1
        emb = _sdk(srv).embeddings.create(model="e", input=["a", "b"])
        assert [d.index for d in emb.data] == [0, 1] and len(emb.data[0].embedding) == 16
        assert [m.id for m in _sdk(srv).models.list()] == ["test-model"]
        assert srv.request_count == 2  # GET /models is not counted
        assert srv.base_url.startswith("http://127.0.0.1:")


def test_queues_take_precedence_in_order():
    with OpenAITestServer(reply="fallback", replies=["first"]) as srv:
        srv.enqueue_faults(Fault.http(503))
        sdk = _sdk(srv)
        msg = [{"role": "user", "content": "x"}]
        try:
            sdk.chat.completions.create(model="m", messages=msg)
        except openai.InternalServerError as exc:
            assert exc.status_code == 503
        assert sdk.chat.completions.create(model="m", messages=msg).choices[0].message.content == "first"
        assert sdk.chat.completions.create(model="m", messages=msg).choices[0].message.content == "fallback"


def test_rate_limit_fault_sends_retry_after():
    with OpenAITestServer(faults=[Fault.rate_limited(retry_after=2)]) as srv:
        try:
            _sdk(srv).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        except openai.RateLimitError as exc:
            assert exc.response.headers["retry-after"] == "2"
        else:
            raise AssertionError("expected a 429")


def test_latency_is_applied():
    with OpenAITestServer(latency_s=0.1) as srv:
        sdk = _sdk(srv)
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "warm"}])
        started = time.monotonic()
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert 0.1 <= time.monotonic() - started < 0.3


def test_reply_function_errors_surface_as_500():
    def broken(request):
        raise ValueError("script bug")

    with OpenAITestServer(reply=broken) as srv:
        try:
            _sdk(srv).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        except openai.InternalServerError as exc:
            assert "script bug" in str(exc)
        else:
            raise AssertionError("expected a 500")


def test_a_request_stops_counting_in_flight_before_its_reply_is_written(monkeypatch):
    # A client holding the only slot of a one-request endpoint may send its next request as soon as the
    # reply's bytes arrive, before the handler thread runs again; counted until after the write, that
    # next request read as two in flight on a loaded machine. The count must be zero at the write.
    import socketserver

    seen: list[int] = []
    original = socketserver._SocketWriter.write

    def write(self, data):
        seen.append(srv._in_flight)
        return original(self, data)

    monkeypatch.setattr(socketserver._SocketWriter, "write", write)
    with OpenAITestServer() as srv:
        sdk = _sdk(srv)
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "ping"}])
        sdk.embeddings.create(model="e", input=["a"])
        srv.enqueue_faults(Fault.rate_limited(retry_after=0))
        try:
            sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
        except openai.RateLimitError:
            pass
    assert seen and all(n == 0 for n in seen), seen
    assert srv._in_flight == 0 and srv.max_in_flight == 1
