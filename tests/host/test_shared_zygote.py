"""One fork server of adapter hosts per run, shared by the run's pool workers (sandbox isolation):
workers attach to it, a worker's connection ending does not end it, the harness's does, and no host
can reach the socket the workers connect to."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from lsrep.host import launch
from lsrep.host.wire import HostDied

sandbox_only = pytest.mark.skipif(launch.isolation() != "sandbox", reason="workers share a fork server only "
                                  "under the sandbox isolation")
NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)


def _kill_nothing(z: launch.Zygote) -> dict:
    return z._ask({"op": "kill", "pid": 2 ** 22 + 12345})  # no such process: answered all the same


@sandbox_only
def test_workers_attach_and_only_the_harness_hanging_up_ends_it():
    z = launch.Zygote()
    try:
        assert z.address is not None and z.address.startswith("\0lsrep-zygote-")
        first = launch.Zygote.attach(z.address, z.isolation)
        second = launch.Zygote.attach(z.address, z.isolation)
        assert first.proc is None and first.isolation == "sandbox"
        assert _kill_nothing(first) == _kill_nothing(second) == {"ok": True}
        first.close()  # a worker gone: the others and the harness are still served
        assert _kill_nothing(second) == {"ok": True}
        assert _kill_nothing(z) == {"ok": True}
        third = launch.Zygote.attach(z.address, z.isolation)
        assert _kill_nothing(third) == {"ok": True}
        assert z.alive() and third.alive()
    finally:
        z.close()
    assert z.proc.returncode is not None  # the harness's connection ended: it exited
    with pytest.raises(OSError):
        launch.Zygote.attach(z.address, "sandbox")
    with pytest.raises((HostDied, OSError)):
        _kill_nothing(third)
    assert not third.alive()


@sandbox_only
def test_a_worker_that_stalls_mid_request_is_dropped_and_the_rest_are_served():
    import socket

    from lsrep.host import zygote

    z = launch.Zygote()
    try:
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stalled.connect(z.address)
        stalled.sendall(b'{"op": "kill", ')  # never finished
        time.sleep(0.2)
        other = launch.Zygote.attach(z.address, z.isolation)
        other.sock.settimeout(zygote.CLIENT_TIMEOUT_S + 5)  # a zygote stuck on the stalled one: a failure, not a hang
        started = time.monotonic()
        assert _kill_nothing(other) == {"ok": True}
        assert time.monotonic() - started < zygote.CLIENT_TIMEOUT_S + 5
        stalled.settimeout(zygote.CLIENT_TIMEOUT_S + 10)
        assert stalled.recv(100) == b""  # dropped
    finally:
        z.close()


@pytest.mark.parametrize("level", ["pid-namespace", "process"])
def test_weaker_isolation_has_no_shared_fork_server(monkeypatch, level):
    """There a host could reach the listening socket: no listener, and each worker starts its own."""
    monkeypatch.setattr(launch, "isolation", lambda: level)
    assert launch.shared_zygote() is None
    if level == "process":
        z = launch.Zygote()
        try:
            assert z.address is None and "--listen" not in z.proc.args
            assert _kill_nothing(z) == {"ok": True}
        finally:
            z.close()


def _zygote_of_this_worker() -> tuple[bool, str | None, int]:
    time.sleep(0.3)  # both workers take one
    z = launch.zygote()
    return z.proc is None, z.address, os.getpid()


@sandbox_only
def test_pool_workers_fork_their_hosts_from_the_drivers():
    from lsrep.executors.local import ProcessPoolExecutor
    from lsrep.executors.workers import WorkerContext, stop_fork_server

    executor = ProcessPoolExecutor(2, launch.shared_zygote())
    assert executor.shared == (launch.zygote().address, "sandbox")
    pool = executor._pool(WorkerContext(), 2)
    try:
        seen = [f.result(timeout=60) for f in [pool.submit(_zygote_of_this_worker) for _ in range(4)]]
    finally:
        pool.shutdown(wait=True)
        stop_fork_server()
        launch.stop_zygote()
    assert len({pid for _, _, pid in seen}) == 2
    assert {(attached, address) for attached, address, _ in seen} == {(True, executor.shared[0])}


@sandbox_only
@pytest.mark.parametrize("kind", ["process", "sharded"])
def test_a_run_starts_one_fork_server_for_its_pool_and_stops_it(tmp_path, monkeypatch, kind):
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.executors.local import ProcessPoolExecutor
    from lsrep.executors.shard import ShardedExecutor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    started = []
    plain = launch.Zygote.__init__

    def count(self):
        plain(self)
        started.append(self)

    monkeypatch.setattr(launch.Zygote, "__init__", count)
    handed, pool = [], ProcessPoolExecutor._pool

    def spy(self, ctx, workers):
        handed.append(self.shared)  # what the workers are told (`worker_init` attaches them)
        return pool(self, ctx, workers)

    monkeypatch.setattr(ProcessPoolExecutor, "_pool", spy)
    n = 6 if kind == "process" else 16
    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=n, sessions_per_question=2, seed=5)
    executor = ProcessPoolExecutor(2) if kind == "process" else ShardedExecutor(2)
    out = run_longmemeval(spec_from_systems(["vector-rag"], data, store=tmp_path / "s.sqlite"),
                          executor=executor, fresh=True)
    assert out.units_run == n
    if kind == "sharded":
        assert executor.ran_remote > 0  # its spawned worker ran units
    assert handed and set(handed) == {(started[0].address, "sandbox")}
    assert len(started) == 1  # the driver's, started with the pool (its workers attached to it)
    assert started[0].proc.returncode is not None  # stopped with the run
    assert os.getpid() not in launch._ZYGOTE


@sandbox_only
def test_no_host_can_reach_the_workers_socket():
    from lsrep.harness import validate_condition
    from lsrep.host.client import open_hosted

    address = launch.shared_zygote()[0]
    try:
        cls, _ = validate_condition("tests.host.host_adapters:ReachAdapter", {}, (), "c")
        adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
        try:
            adapter.reset(conversation_id="c", now=NOW)
            seen = adapter.query(address.replace("\0", "\\0"), now=NOW).fragments[0].text
        finally:
            adapter.close()
        assert seen.startswith("refused"), seen
        # ...which this process can (the question was the right address).
        import socket

        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(address)
        probe.close()
    finally:
        launch.stop_zygote()


@sandbox_only
def test_a_host_holds_no_socket_of_its_fork_server(tmp_path):
    """The harness's connection, the workers' listener and the workers' connections are all closed
    in a host: it talks to the harness over its two pipes only."""
    import json

    from lsrep.contract import ReplayTurn
    from lsrep.harness import validate_condition
    from lsrep.host.client import open_hosted

    z = launch.zygote()
    worker = launch.Zygote.attach(z.address, z.isolation)  # a worker's connection is open meanwhile
    try:
        cls, _ = validate_condition("tests.host.host_adapters:IntrospectAdapter", {}, (), "c")
        adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
        try:
            adapter.reset(conversation_id="c", now=NOW)
            adapter.ingest(ReplayTurn(turn_id="t1", session_id="s1", conversation_id="c", index=0, timestamp=NOW,
                                      role="user", content="hello"), now=NOW)
            fds = json.loads(adapter.query("fds?", now=NOW).fragments[0].text)["fds"]
        finally:
            adapter.close()
    finally:
        worker.close()
        launch.stop_zygote()
    assert fds and not [f for f in fds if f.startswith("socket:")], fds


@sandbox_only
def test_a_host_cannot_take_the_socket_from_its_fork_server_nor_see_its_name():
    """The adversarial routes around the closed sockets: the zygote's open files through /proc/1/fd
    (refused), or the listener's name in /proc/net/unix (the host's network namespace is another
    one: not listed there, where the harness lists it)."""
    import json

    from lsrep.harness import validate_condition
    from lsrep.host.client import open_hosted

    launch.shared_zygote()
    try:
        cls, _ = validate_condition("tests.host.host_adapters:StealAdapter", {}, (), "c")
        adapter = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
        try:
            adapter.reset(conversation_id="c", now=NOW)
            seen = json.loads(adapter.query("steal", now=NOW).fragments[0].text)
        finally:
            adapter.close()
        with open("/proc/net/unix") as fh:
            here = fh.read().count("lsrep-zygote")
    finally:
        launch.stop_zygote()
    assert seen["opened"] == [] and seen["names"] == 0, seen
    assert here >= 1  # the harness does see it: the host's view is what hides it
