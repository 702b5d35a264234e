"""`FrameReader` (the harness's reads of a host's replies, many per system call) gives the messages
`recv` gives, in order, whatever the read sizes; it waits, times out and sees the end of the pipe
as `recv` does."""

from __future__ import annotations

import json
import os
import threading
from multiprocessing.connection import Connection

import pytest

from lsrep.host.wire import FrameReader, HostDied, HostTimeout, recv, send


def _pipe() -> tuple[Connection, Connection]:
    r, w = os.pipe()
    return Connection(r, writable=False), Connection(w, readable=False)


MESSAGES = [{"partial": {"ok": None, "ms": i * 0.5, "events": [], "text": "é☃\udc80" * (i % 7)}} for i in range(300)]
MESSAGES.append({"ok": "x" * 70_000})  # above Connection's 16 KiB single-write size: header and body apart
MESSAGES.append({})


@pytest.mark.parametrize("chunk", [1, 3, 4, 5, 13, 1 << 20])
def test_messages_equal_recv_at_any_read_size(chunk, monkeypatch):
    monkeypatch.setattr(FrameReader, "CHUNK", chunk)
    rx, tx = _pipe()
    writer = threading.Thread(target=lambda: [send(tx, m) for m in MESSAGES])
    writer.start()
    reader = FrameReader(rx)
    got = [reader.recv(5.0) for _ in MESSAGES]
    writer.join()
    rx2, tx2 = _pipe()
    writer = threading.Thread(target=lambda: [send(tx2, m) for m in MESSAGES])
    writer.start()
    want = [recv(rx2, 5.0) for _ in MESSAGES]
    writer.join()
    assert got == want == json.loads(json.dumps(MESSAGES))
    for c in (rx, tx, rx2, tx2):
        c.close()


def test_long_length_header_is_read():
    body = json.dumps({"ok": 1}).encode()
    reader = FrameReader(_pipe()[0])
    reader.buf = bytearray((-1).to_bytes(4, "big", signed=True) + len(body).to_bytes(8, "big") + body)
    assert reader.recv(0.1) == {"ok": 1}


def test_timeout_and_end_of_pipe_are_recv_s():
    rx, tx = _pipe()
    reader = FrameReader(rx)
    with pytest.raises(HostTimeout):
        reader.recv(0.05)
    tx.send_bytes(b'{"a": 1}')
    tx.send_bytes(b'{"a": 2}')
    assert reader.recv(1.0) == {"a": 1}
    tx.close()
    assert reader.recv(1.0) == {"a": 2}  # buffered before the end: still handed out
    with pytest.raises(HostDied):
        reader.recv(1.0)


@pytest.mark.parametrize("chunk", [4096, 1 << 20])
def test_lingering_reads_give_the_same_messages(chunk, monkeypatch):
    monkeypatch.setattr(FrameReader, "CHUNK", chunk)
    rx, tx = _pipe()
    writer = threading.Thread(target=lambda: [send(tx, m) for m in MESSAGES])
    writer.start()
    reader = FrameReader(rx)
    got = [reader.recv(5.0, linger=0.001) for _ in MESSAGES]
    writer.join()
    assert got == json.loads(json.dumps(MESSAGES))


def test_a_lingering_reader_wakes_once_per_linger_not_once_per_message(monkeypatch):
    """Replies written one by one, 0.5 ms apart: a reader that lingers 20 ms after each wait reads
    them in at most one read per 20 ms elapsed (plus the first), where one without lingering
    reads nearly each alone. Its timeout still counts from the wait, not the linger."""
    import time

    reads = []
    real_read = os.read
    monkeypatch.setattr("lsrep.host.wire.os.read", lambda fd, n: reads.append(n) or real_read(fd, n))

    def paced(tx, count):
        for i in range(count):
            send(tx, {"partial": {"ms": i}})
            time.sleep(0.0005)

    def run(linger: float) -> tuple[int, float]:
        rx, tx = _pipe()
        reads.clear()
        writer = threading.Thread(target=paced, args=(tx, 100))
        start = time.perf_counter()
        writer.start()
        reader = FrameReader(rx)
        assert [reader.recv(5.0, linger) for _ in range(100)] == [{"partial": {"ms": i}} for i in range(100)]
        elapsed = time.perf_counter() - start
        writer.join()
        return len(reads), elapsed

    lingering, elapsed = run(0.02)
    assert lingering <= elapsed / 0.02 + 1
    eager, _ = run(0.0)
    assert eager > 3 * lingering
    rx, _tx = _pipe()
    start = time.perf_counter()
    with pytest.raises(HostTimeout):
        FrameReader(rx).recv(0.05, linger=5.0)  # nothing came: no linger, the timeout as without one
    assert time.perf_counter() - start < 2.0


def test_a_batch_lingers_until_the_host_makes_a_model_call_and_then_answers_at_once(monkeypatch):
    """`HostProcess.exchange`: a batch (`prefetch`) reads with `BATCH_LINGER_S`; from the host's
    first model call on, every read is immediate (a model call waits on the harness's answer)."""
    from lsrep.host import client

    script = [{"partial": {"ok": None}}, {"partial": {"ok": None}}, {"cb": "llm", "messages": []},
              {"partial": {"ok": None}}, {"cb": "llm", "messages": []}, {"ok": 3}]
    lingers = []

    class Replies:
        def recv(self, timeout, linger=0.0):
            lingers.append(linger)
            return script.pop(0)

    host = client.HostProcess.__new__(client.HostProcess)
    rx, host.tx = _pipe()
    host.dead, host.release, host.timeout, host.replies = None, [], 5.0, Replies()
    served = []
    monkeypatch.setattr(host, "_serve_callback", lambda request: served.append(request) or {"cb_ok": "x"})
    partials = []
    assert host.exchange({"op": "batch"}, on_partial=partials.append, linger=0.25) == {"ok": 3}
    assert lingers == [0.25, 0.25, 0.25, 0.0, 0.0, 0.0] and len(served) == 2 and len(partials) == 3
    script.append({"ok": 4})
    assert host.exchange({"op": "call"}) == {"ok": 4} and lingers[-1] == 0.0  # any other message: no linger


def test_prefetch_reads_its_batch_lingering(monkeypatch):
    from lsrep.contract import ReplayTurn
    from lsrep.harness import validate_condition
    from lsrep.host import client
    from lsrep.host.clock import hooks

    seen = []
    real = client.HostProcess.exchange
    monkeypatch.setattr(client.HostProcess, "exchange",
                        lambda self, message, on_partial=None, linger=0.0: seen.append((message["op"], linger))
                        or real(self, message, on_partial, linger))
    cls, _ = validate_condition("tests.host.host_adapters:ClockTraceAdapter", {}, (), "c")
    adapter = client.open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0,
                                 hooks=hooks(True))
    from datetime import UTC, datetime

    now = datetime(2023, 5, 8, tzinfo=UTC)
    turns = [ReplayTurn(turn_id=f"t{i}", conversation_id="c", index=i, session_id="s", role="user", content="x",
                        timestamp=now) for i in range(3)]
    try:
        adapter.reset(conversation_id="c", now=now)
        adapter.prefetch([("ingest", (t,), {"now": now}) for t in turns])
        for t in turns:
            adapter.ingest(t, now=now)
        assert len(adapter.query("q", now=now).fragments) == 3
    finally:
        adapter.close()
    assert ("batch", client.BATCH_LINGER_S) in seen and client.BATCH_LINGER_S > 0
    assert all(linger == 0.0 for op, linger in seen if op != "batch")
