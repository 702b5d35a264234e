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
