"""Adapter hosts kept for the next unit of the same configuration (`MemoryAdapter.host_reusable`).

After a successful close, a reusable adapter's host forgets the instance (`op_release`: its
state, snapshots, files and the clock's last time) and waits, idle, for the next unit with an
equal :func:`reuse_key`; a run stops the idle hosts when its units are done (:func:`close_idle_hosts`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from lsrep.contract import MemoryAdapter
from lsrep.host.launch import import_path

if TYPE_CHECKING:
    from lsrep.host.client import HostedAdapter, HostProcess

IDLE_PER_KEY = 2
"""Idle hosts kept per adapter configuration: one per unit running at once (two overlapped units)."""


def reuse_key(cls: type[MemoryAdapter], grants: tuple[str, ...], hooks: tuple[str, ...], llm: Any, embedder: Any,
               memory: Any, timeout: float) -> tuple | None:
    """What must be equal for a host to serve another unit; None where a host serves one unit only:
    an adapter that does not declare `host_reusable`, or a unit whose adapter has a model, an active
    memory model or an embedder the harness runs (their callbacks are bound to the unit)."""
    from lsrep.embed.hashing import HashingEmbedder

    if getattr(cls, "host_reusable", False) is not True or llm is not None or getattr(memory, "active", False):
        return None
    if embedder is not None and type(embedder) is not HashingEmbedder:
        return None
    return (os.getpid(), cls.__module__, cls.__qualname__, tuple(grants), tuple(hooks), tuple(import_path(cls)),
            timeout)


def release(adapter: HostedAdapter) -> bool:
    """After a successful close: the host forgets the instance and waits, idle, for the next unit
    of the same configuration. False (the caller closes the host) if it could not."""
    host = adapter.host
    try:
        host.request({"op": "release", "instance": adapter.instance})
    except Exception:  # noqa: BLE001 - a host that cannot forget is closed instead
        return False
    adapter.owns_host, adapter.handed_on = False, True  # later calls fail; terminate leaves the host alone
    return IDLE.give(adapter.reuse_key, host)


class _IdleHosts:
    """Idle hosts by reuse key, for this process (a forked worker starts with none of its parent's)."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.idle: dict[tuple, list[HostProcess]] = {}
        self.registered = False

    def take(self, key: tuple) -> HostProcess | None:
        with self.lock:
            hosts = self.idle.get(key)
            while hosts:
                host = hosts.pop()
                if host.dead is None:
                    return host
        return None

    def give(self, key: tuple | None, host: HostProcess) -> bool:
        if key is None or key[0] != os.getpid():
            host.close()
            return True
        with self.lock:
            hosts = self.idle.setdefault(key, [])
            if len(hosts) >= IDLE_PER_KEY:
                host.close()
                return True
            hosts.append(host)
            if not self.registered:
                import atexit

                atexit.register(self.close_all)  # after the fork server's: runs before it
                self.registered = True
        return True

    def close_all(self) -> None:
        with self.lock:
            hosts = [h for key, group in self.idle.items() if key[0] == os.getpid() for h in group]
            self.idle.clear()
        for host in hosts:
            host.close()


IDLE = _IdleHosts()


def close_idle_hosts() -> None:
    """Stop the hosts kept for later units (a run calls it when its units are done)."""
    IDLE.close_all()
