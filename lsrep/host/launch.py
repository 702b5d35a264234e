"""How an adapter host is launched: the isolation this machine allows, the sanitized environment,
the import path of the adapter's module, and the client of this process's fork server
(:mod:`lsrep.host.zygote`), which forks one host per unit."""

from __future__ import annotations

import atexit
import functools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from lsrep.host.wire import HostDied

KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The only variables of the harness's environment the host inherits (no keys, no paths of runs)."""
NAMESPACE_CMD = ("unshare", "--map-current-user", "--pid", "--fork", "--mount-proc", "--kill-child")
"""Where allowed, the host runs as PID 1 of its own PID namespace with its own /proc: it cannot see
the harness's process (its command line, environment, working directory or open files)."""


SANDBOX_CMD = (*NAMESPACE_CMD, "--net")
"""Where allowed, also a network namespace with only loopback, and a minimal root per host
(:mod:`lsrep.host.sandbox`): the gold on disk and the harness's sockets are out of reach."""


@functools.cache
def isolation() -> str:
    """The strongest level this machine allows: `sandbox` (PID, mount and network namespaces, a
    minimal root per host), `pid-namespace`, or `process` (a separate process only)."""
    if shutil.which("unshare") is None:
        return "process"
    from lsrep.host import sandbox

    probe = Path(tempfile.mkdtemp(prefix="lsrep-probe-"))
    script = f"import runpy; runpy.run_path({sandbox.__file__!r})['selftest']({str(probe)!r})"
    try:
        for level, cmd in (("sandbox", [*SANDBOX_CMD, sys.executable, "-S", "-c", script]),
                           ("pid-namespace", [*NAMESPACE_CMD, "true"])):
            try:
                done = subprocess.run(cmd, capture_output=True, timeout=20, cwd=probe, env=host_environment(probe))
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0:
                return level
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return "process"


def host_environment(workdir: Path) -> dict[str, str]:
    """The sanitized environment: locale and PATH only, HOME and TMPDIR inside the host's folder."""
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    tmp = workdir / "tmp"
    tmp.mkdir(exist_ok=True)
    env.update(HOME=str(workdir), TMPDIR=str(tmp), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MEM0_TELEMETRY="False")
    return env


def import_path(cls: type) -> list[str]:
    """sys.path for the host: the harness's installation entries and the adapter's own root.

    The harness's working directory (often the campaign's folder) is left out unless the adapter's
    module is imported from there.
    """
    cwd = os.getcwd()
    entries = [p for p in sys.path if p and os.path.abspath(p) != cwd]
    module = sys.modules.get(cls.__module__)
    origin = getattr(module, "__file__", None)
    if origin:
        root = Path(origin).resolve().parent
        for _ in range(cls.__module__.count(".") + (Path(origin).name == "__init__.py")):
            root = root.parent
        if str(root) not in entries:
            entries.insert(0, str(root))
    return entries


class Zygote:
    """The fork server of this harness process (see `lsrep.host.zygote`), started on first use.

    Under the `sandbox` isolation it also listens, on an abstract Unix socket of this process's
    network namespace, for this run's pool workers (`attach`): they fork their hosts from it
    instead of each starting a fork server of its own (an interpreter importing numpy and pydantic,
    about 0.25 s of CPU, on the way to each worker's first unit). Its hosts live in the fork
    server's own network namespace, where that name does not exist, and get none of its sockets.
    Under the weaker levels a host could reach such a socket, so there is none: each worker starts
    its own."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="lsrep-zygote-"))
        self.isolation = isolation()
        self.address: str | None = None
        """Where this run's pool workers connect (`attach`); None: they start their own."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        prefix = {"sandbox": SANDBOX_CMD, "pid-namespace": NAMESPACE_CMD}.get(self.isolation, ())
        cmd = [*prefix, sys.executable, "-m", "lsrep.host", "--zygote", str(theirs.fileno())]
        passed = [theirs.fileno()]
        listener = None
        if self.isolation == "sandbox":
            cmd.append("--sandbox")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.address = f"\0lsrep-zygote-{os.getpid()}-{secrets.token_hex(16)}"
            listener.bind(self.address)
            listener.listen(64)
            cmd += ["--listen", str(listener.fileno())]
            passed.append(listener.fileno())
        # Born with SIGINT blocked (it, `unshare` before it, and the hosts it forks): Ctrl-C reaches
        # the terminal's whole process group, and the harness alone handles it (it closes the
        # zygote); interrupted while importing, the zygote printed a KeyboardInterrupt traceback.
        # The zygote ignores SIGINT and unblocks it first thing (`lsrep.host.zygote.serve`).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            # Hosts' stdout goes to the harness's stderr: an adapter's print never mixes into a
            # command's output.
            self.proc: subprocess.Popen | None = subprocess.Popen(
                cmd, pass_fds=passed, cwd=self.workdir, env=host_environment(self.workdir),
                stdin=subprocess.DEVNULL, stdout=2, close_fds=True)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            theirs.close()
            if listener is not None:
                listener.close()  # the zygote holds it now
        self.sock = ours
        self.lock = threading.Lock()
        self.preloaded: set[str] = set()

    @classmethod
    def attach(cls, address: str, level: str) -> Zygote:
        """A connection of this process (a pool worker) to the run's fork server at `address`."""
        self = cls.__new__(cls)
        self.workdir, self.isolation, self.address, self.proc = None, level, address, None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(address)
        except OSError:
            self.sock.close()
            raise
        self.lock = threading.Lock()
        self.preloaded = set()
        return self

    def _ask(self, message: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        with self.lock:
            try:
                socket.send_fds(self.sock, [json.dumps(message).encode() + b"\n"], list(fds))
                data = b""
                while not data.endswith(b"\n"):
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        raise HostDied("the adapter hosts' fork server is gone")
                    data += chunk
            except (HostDied, OSError):
                self.gone = True
                raise
        return json.loads(data)

    def preload(self, module: str) -> None:
        """Import a bundled adapter's module in the zygote once, so every host forks with it loaded."""
        if module.startswith("lsrep.adapters.") and module not in self.preloaded:
            self._ask({"op": "preload", "modules": [module]})
            self.preloaded.add(module)

    def spawn(self, workdir: Path, fds: tuple[int, int], module: str | None = None,
              grants: tuple[str, ...] = ()) -> int:
        request: dict[str, Any] = {"op": "spawn", "workdir": str(workdir)}
        if self.isolation == "sandbox":
            from lsrep.host.sandbox import view

            request["view"] = view(module, workdir, grants)
        return int(self._ask(request, fds)["pid"])

    def kill(self, pid: int) -> None:
        try:
            self._ask({"op": "kill", "pid": pid})
        except (HostDied, OSError):
            pass

    gone = False
    """Set when the fork server hung up on this connection."""

    def alive(self) -> bool:
        return not self.gone and (self.proc is None or self.proc.poll() is None)

    def close(self) -> None:
        if self.proc is None:  # attached: the run's fork server is the driver's to stop
            self.sock.close()
            return
        try:
            self.sock.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


_ZYGOTE: dict[int, Zygote] = {}


_ZYGOTE_LOCK = threading.Lock()
"""Units run in two threads (`lsrep.executors.overlap`) start one fork server between them."""


_SHARED: dict[int, tuple[str, str]] = {}
"""Per process (a pool worker): the run's fork server to attach to, and its isolation level."""


def zygote() -> Zygote:
    """This process's fork server: in a pool worker told of the run's (`use_shared`), a connection to
    it; else one of its own, started on first use (and again if it died)."""
    with _ZYGOTE_LOCK:
        current = _ZYGOTE.get(os.getpid())
        if current is None or not current.alive():
            current = None
            shared = _SHARED.pop(os.getpid(), None)
            if shared is not None:
                try:
                    current = Zygote.attach(*shared)
                except OSError:
                    current = None  # the run's is gone: this process starts its own
            if current is None:
                current = Zygote()
            _ZYGOTE[os.getpid()] = current
            atexit.register(current.close)
        return current


def shared_zygote() -> tuple[str, str] | None:
    """For a run's pool workers: this process's fork server, started now if none runs (it imports
    while the workers start), as (address, isolation level); None where workers cannot share it."""
    if isolation() != "sandbox":
        return None
    current = zygote()
    return None if current.address is None else (current.address, current.isolation)


def use_shared(shared: tuple[str, str] | None) -> None:
    """In a pool worker: fork hosts from the run's fork server (`shared_zygote`) from now on."""
    if shared is not None:
        _SHARED[os.getpid()] = shared


def stop_zygote() -> None:
    """Stop this process's fork server, if it has one, and every host it forked (a run calls it once
    its units are done: the next run starts its own, and pays its own start-up)."""
    with _ZYGOTE_LOCK:
        current = _ZYGOTE.pop(os.getpid(), None)
    if current is not None:
        current.close()
        atexit.unregister(current.close)
