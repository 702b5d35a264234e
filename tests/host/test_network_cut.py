"""The network cut: an adapter in its host cannot reach a server the harness's machine runs (on
loopback or on the machine's own address), while loopback inside the host works (a model gateway
there serves on 127.0.0.1). In-process the same adapter reaches the server: the test proves the cut."""

from __future__ import annotations

import json
import socket
import threading
from datetime import UTC, datetime

import pytest

from lsrep.harness import validate_condition
from lsrep.host import open_adapter
from lsrep.host.launch import isolation

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)
GREETING = "harness-side server"


def _own_addresses() -> list[str]:
    addresses = ["127.0.0.1"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: this picks the outward address
            addresses.append(probe.getsockname()[0])
        except OSError:
            pass
    return list(dict.fromkeys(addresses))


@pytest.fixture
def server():
    sock = socket.create_server(("0.0.0.0", 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(GREETING.encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join(5)
    sock.close()


def _reached(mode: str, port: int, tmp_path) -> dict[str, str]:
    options = {"port": port, "addresses": _own_addresses()}
    cls, opts = validate_condition("tests.host.host_adapters:NetworkReachingAdapter", options, (), "c")
    adapter = open_adapter(mode, cls, opts, options, disable=(), state_dir=tmp_path, retrieval_budget=None,
                           embedder=None, llm=None, seed=0)
    try:
        adapter.reset(conversation_id="c", now=NOW)
        return json.loads(adapter.query("anyone there?", now=NOW).fragments[0].text)
    finally:
        adapter.close()


def test_in_process_the_adapter_reaches_the_harness_side_server(server, tmp_path):
    reached = _reached("in-process", server, tmp_path)
    assert reached["127.0.0.1"] == GREETING and reached["own"] == "own loopback"


def test_in_its_host_the_adapter_reaches_only_its_own_loopback(server, tmp_path):
    if isolation() != "sandbox":
        pytest.skip("no network namespace on this machine (the manifest records the isolation level)")
    reached = _reached("process", server, tmp_path)
    assert reached.pop("own") == "own loopback"
    assert len(reached) >= 1 and all(v.startswith("unreachable") for v in reached.values()), reached
