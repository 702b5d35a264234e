"""How a local pool's worker processes start: forked from a fork server that has imported the harness.

A spawned worker is a fresh interpreter: it imports LSREP before its first unit (about 0.35 s of CPU
on a 2-core machine, while the driver's own units compete for the cores), so on many small units
the pool paid each worker's start-up again in every run. Here the workers come from
`multiprocessing`'s fork server: one process that imports the modules a unit needs (`HARNESS`)
once and forks each worker from that state. It forks while it has a single thread; forking the
driver itself instead deadlocked (a lock held by another of its threads at the fork).

- **Started early.** An executor starts it (`start_fork_server`) before it lists or builds its
  first units: it imports in the background meanwhile, and the first worker forks warm.
- **One worker: spawned** (`SpawnedWorker`). An executor with a single worker beside the driver
  saves no import from a fork server, which would stay resident for the whole run.
- **One run, one fork server.** `stop_fork_server` ends the fork server this module started, after
  the pool, so each run pays its own start-up (a benchmark's repetitions too) and no process
  outlives the run. A fork server something else started is left alone.
- **Ctrl-C** goes to the driver alone. The fork server is started with SIGINT blocked, so it and
  every worker forked from it are born with SIGINT blocked; a worker ignores it and unblocks it
  first thing (`worker_init`).
- **Driver death.** A worker's parent is the fork server, which lives as long as the driver or
  any worker does (each holds an end of a pipe it watches). So a worker's watchdog checks the
  driver itself every 0.5 s and ends the worker once it is gone; the parent-death signal ends it
  if the fork server is killed.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

HARNESS = ("__main__", "lsrep.engine", "lsrep.executors.local", "lsrep.executors.shard", "lsrep.longmemeval",
           "lsrep.host.client", "lsrep.host.launch", "lsrep.host.reuse", "lsrep.memory_model.gateway",
           "lsrep.memory_model.unit", "lsrep.llm")
"""Imported once in the fork server (`__main__`: the driver's main script, as `multiprocessing`
does by default, so a worker does not import it again). Never an adapter: adapters run in hosts."""

_started: set[int] = set()
"""Fork server pids this module started (and so may stop)."""
_lock = threading.RLock()
"""Held while a fork server or worker starts and while the fork server stops: a worker cannot start
between a stop's kill of the stragglers and the fork server's exit (it would hold the exit up), and
a stop cannot miss a fork server being started."""


class WorkerProcess(multiprocessing.context.ForkServerProcess):
    """A worker forked from the fork server (started first if it is not running)."""

    def start(self) -> None:
        with _lock:
            start_fork_server()
            with ctrl_c_blocked():
                super().start()


class WorkerContext(multiprocessing.context.ForkServerContext):
    Process = WorkerProcess


class SpawnedWorker(multiprocessing.context.SpawnProcess):
    """A worker that is a fresh interpreter importing the harness itself, born with SIGINT blocked
    (for an executor with a single worker: a fork server would save it no import, and would stay
    resident beside it for the whole run)."""

    def start(self) -> None:
        _tracker_running()
        with ctrl_c_blocked():
            super().start()


class SpawnContext(multiprocessing.context.SpawnContext):
    Process = SpawnedWorker


@contextlib.contextmanager
def ctrl_c_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread meanwhile: a process started now is born blocking it."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _tracker_running() -> None:
    """Multiprocessing's resource tracker started, quiet, before SIGINT is blocked for a start: a
    process's start starts the tracker first if it is not running, and starting it unblocks SIGINT
    in the starting thread (multiprocessing blocks it only around the tracker's own start), which
    the process started next would inherit. Quiet: see `quiet_resource_tracker`."""
    quiet_resource_tracker()
    multiprocessing.resource_tracker.ensure_running()


def start_fork_server() -> None:
    """Start the fork server if none runs, with SIGINT blocked (which it and so every worker forked
    from it inherit). It returns at once: the fork server imports the harness in the background,
    so an executor calls this before it lists or builds its first units, and the first worker
    forks from a warm server. A fork server already running (this module's or another's) is used."""
    _tracker_running()
    with _lock:
        server = multiprocessing.forkserver._forkserver
        before = server._forkserver_pid
        if before is None:
            server.set_forkserver_preload(list(HARNESS))
        with ctrl_c_blocked():
            server.ensure_running()
        if server._forkserver_pid != before:
            _started.add(server._forkserver_pid)


def stop_fork_server() -> None:
    """End the fork server if this module started it, once the run's pools are shut down.

    A worker still alive then is a straggler (a stopped run's pool killed its workers while
    another thread was starting one): it is killed, since the fork server only exits when every
    process it forked has (each holds a pipe end it watches)."""
    with _lock:
        server = multiprocessing.forkserver._forkserver
        pid = server._forkserver_pid
        if pid is None or pid not in _started:
            return
        _started.discard(pid)
        for child in children(pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        server._stop()


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (none where there is no /proc)."""
    if not HAVE_PROC:
        return []
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pid and stat[0] not in DEAD:
                out.append(int(entry))
    return out


def quiet_resource_tracker() -> None:
    # After Ctrl-C or a killed worker the pool's queue semaphores are left to multiprocessing's
    # resource tracker, which cleans them up and warns on stderr; the interrupt's one line
    # should stay one line. The tracker takes its warning filters from this interpreter's -W.
    quiet = "ignore:resource_tracker:UserWarning"
    if quiet not in sys.warnoptions:
        sys.warnoptions.append(quiet)


def worker_init(driver_pid: int, shared_hosts: tuple[str, str] | None = None) -> None:
    """In each worker: leave Ctrl-C to the driver, die with the fork server or the driver, collect
    garbage as a process that only runs units does (`lsrep.collector.for_unit_process`), keep the
    heap it frees (`lsrep.allocator.keep_freed_heap`), and fork adapter hosts from the run's fork
    server of hosts where there is one (`shared_hosts`)."""
    from lsrep.allocator import keep_freed_heap
    from lsrep.collector import for_unit_process
    from lsrep.host.launch import use_shared

    for_unit_process()
    keep_freed_heap()
    use_shared(shared_hosts)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the watchdog below still applies
    parent = os.getppid()
    if parent == 1 or not driver_alive(driver_pid):
        os._exit(1)

    def watchdog() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent or not driver_alive(driver_pid):
                os._exit(1)

    threading.Thread(target=watchdog, name="lsrep-parent-watchdog", daemon=True).start()


def driver_alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a driver killed but not yet reaped)."""
    if not HAVE_PROC:  # no zombie test here: a killed driver's workers end with their fork server
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    stat = _stat(pid)
    return stat is not None and stat[0] not in DEAD


HAVE_PROC = os.path.exists("/proc/self/stat")
DEAD = (b"Z", b"X")
"""Process states of a process that has exited (zombie, dead)."""


def _stat(pid: int) -> tuple[bytes, int] | None:
    """(state, parent pid) of process `pid` from /proc; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0], int(fields[1])
    except (OSError, IndexError, ValueError):
        return None
