"""The adapter hosts' fork server: one clean process per harness process that forks a host per unit.

Starting a Python interpreter and importing pydantic and numpy costs most of a host's start-up, so
the harness starts one *zygote* (`python -m lsrep.host --zygote FD`) with the sanitized argv and
environment, inside its own PID namespace where allowed. The zygote imports the harness-side
modules a host needs — never an adapter — and then, per request, forks a host: the child gets the
two pipe ends passed over the zygote's Unix socket (SCM_RIGHTS), a fresh working directory, HOME and
TMPDIR inside it, and serves one unit. Hosts are siblings of nothing but the zygote: as PID 1 of the
namespace, its exit takes every host with it.

Under the `sandbox` isolation it also accepts connections from the harness's pool workers on a
listening socket the harness bound (`--listen FD`; see `lsrep.host.launch.Zygote`): each worker
asks over its own connection, one request at a time per connection; a worker's connection ending is
that worker gone, and only the harness's own connection ending ends the zygote.

Requests on the socket (JSON lines): `{"op": "spawn", "workdir": ...}` with two file descriptors →
`{"pid": n}`; `{"op": "kill", "pid": n}` → `{"ok": true}`; `{"op": "preload", "modules": [...]}` imports
bundled adapter modules (`lsrep.adapters.*` only) so their hosts start warm. End of file: the zygote
exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

TRUSTED = ("lsrep.adapters.",)
"""Modules the zygote may import on request: the bundled adapters (and through them their systems)."""
CLIENT_TIMEOUT_S = 10.0
"""A pool worker's connection that stalls this long within a request or a reply is dropped."""
PRELOAD = ("lsrep.host.server", "lsrep.contract", "lsrep.embed.hashing", "numpy", "pydantic",
           "lsrep.host.clock", "lsrep.host.capture", "time_machine")
"""Imported once in the zygote; forked hosts start with them (adapters are imported in the host).
time_machine (the simulated clock of every call) imports pytest where it is installed: ~0.2 s of
CPU per host when each host imported it itself."""


def _readline(sock: socket.socket) -> tuple[dict | None, list[int]]:
    data, fds = b"", []
    while not data.endswith(b"\n"):
        try:
            chunk, got, _, _ = socket.recv_fds(sock, 65536, 4)
        except ConnectionResetError:
            # The harness went away with a reply unread (e.g. Ctrl-C mid-request): end of file too.
            return None, fds
        if not chunk:
            return None, fds
        data += chunk
        fds += got
    return json.loads(data), fds


def serve(fd: int, sandboxed: bool = False, listen: int | None = None) -> int:
    """Serve the harness until it hangs up; a harness that dies mid-reply (a killed worker, Ctrl-C)
    is the same end, not an error: the fork server exits quietly. Ctrl-C is the harness's to
    handle: this process (started with SIGINT blocked) and the hosts it forks ignore it.

    `listen`: a listening socket the harness bound (in its own network namespace, see
    `lsrep.host.launch.Zygote`) on which the harness's pool workers connect, each with requests
    of its own; only the connection on `fd` (the harness that started this process) ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from lsrep.allocator import keep_freed_heap

    keep_freed_heap()  # set before any fork: every host inherits it (lsrep.allocator: why)
    try:
        return _serve(fd, sandboxed, listen)
    except (BrokenPipeError, ConnectionResetError):
        return 0


def _serve(fd: int, sandboxed: bool, listen: int | None = None) -> int:
    owner = socket.socket(fileno=fd)
    listener = socket.socket(fileno=listen) if listen is not None else None
    if sandboxed:
        from lsrep.host import sandbox

        # Not dumpable: a host cannot reach /proc/1/root (this process's view of the whole disk).
        sandbox.set_dumpable(False)
        sandbox.loopback_up()
    for name in PRELOAD:
        try:
            _preload(name)
        except ImportError:
            pass
    # Hosts are reaped as they exit, so their CPU time is counted in this process's children's
    # (and, through the harness waiting for this process, the harness's): benchmarks count it.
    signal.signal(signal.SIGCHLD, _reap)
    if listener is not None:
        listener.setblocking(False)  # a connection gone before it is accepted: no wait
    clients = [owner]
    while True:
        ready, _, _ = select.select(clients if listener is None else [*clients, listener], [], [])
        for sock in ready:
            if sock is listener:
                try:
                    conn = listener.accept()[0]
                except OSError:
                    continue
                # A worker sends each request whole; one that stalls mid-request is dropped, not waited for.
                conn.settimeout(CLIENT_TIMEOUT_S)
                clients.append(conn)
                continue
            try:
                request, fds = _readline(sock)
                if request is not None:
                    _answer(sock, request, fds, [*clients, listener] if listener is not None else clients)
                    continue
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                if sock is owner:
                    raise
            # A connection that ended: the harness's ends this process; a pool worker's is dropped.
            if sock is owner:
                return 0
            clients.remove(sock)
            sock.close()


def _answer(sock: socket.socket, request: dict, fds: list[int], sockets: list[socket.socket]) -> None:
    if request["op"] == "preload":
        # Only the project's own adapters (the harness checks): never third-party code here.
        for name in request["modules"]:
            if name.startswith(TRUSTED):
                try:
                    __import__(name)
                except Exception:  # noqa: BLE001, S110 - the host imports it again and reports
                    pass
        sys.stdout.flush()
        sock.sendall(b'{"ok": true}\n')
        return
    if request["op"] == "kill":
        try:
            os.kill(int(request["pid"]), signal.SIGKILL)
        except ProcessLookupError:
            pass
        sock.sendall(b'{"ok": true}\n')
        return
    pid = os.fork()
    if pid == 0:
        _become_host(sockets, fds, request["workdir"], request.get("view"))
    for f in fds:
        os.close(f)
    sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")


def _preload(name: str) -> None:
    if name != "time_machine" or "pytest" in sys.modules:
        __import__(name)
        return
    # time_machine imports pytest (for its fixtures) where it is installed: ~8 MB in every host
    # forked from here. Hidden while it loads; an adapter can still import pytest itself.
    sys.modules["pytest"] = None  # type: ignore[assignment]
    try:
        __import__(name)
    finally:
        del sys.modules["pytest"]


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become_host(sockets: list[socket.socket], fds: list[int], workdir: str, view: dict | None = None) -> None:
    code = 1
    try:
        for sock in sockets:  # the harness's connections and the workers' listener: none reach a host
            sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if view is not None and not _sandbox(view, fds):
            return
        os.chdir(workdir)
        tmp = os.path.join(workdir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        os.environ.update(HOME=workdir, TMPDIR=tmp)
        import tempfile

        tempfile.tempdir = None
        from lsrep.host.server import main

        code = main([str(fds[0]), str(fds[1])])
    finally:
        sys.stdout.flush()
        os._exit(code)


def _sandbox(view: dict, fds: list[int]) -> bool:
    """Enter the host's view (see `lsrep.host.sandbox`); if that fails, say why to the harness."""
    from lsrep.host.sandbox import enter

    try:
        enter(view)
        return True
    except OSError as exc:
        from multiprocessing.connection import Connection

        from lsrep.host.wire import describe_exception, recv, send

        rx, tx = Connection(fds[0], writable=False), Connection(fds[1], readable=False)
        recv(rx, 30)
        send(tx, {"error": describe_exception(exc)})
        return False
