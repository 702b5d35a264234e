"""`lsrep.allocator`: glibc keeps the heap a process frees (no page fault per reuse of a block of
a few MiB), and the driver, its pool workers and the adapter hosts' fork server all set it."""

from __future__ import annotations

import ctypes
import platform
import socket
import subprocess
import sys
import textwrap

import pytest

from lsrep import allocator

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

FAULTS = textwrap.dedent("""
    import resource, sys
    import numpy as np
    if sys.argv[1] == "keep":
        from lsrep.allocator import keep_freed_heap
        assert keep_freed_heap()
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    rounds = []
    for _ in range(5):
        before = faults()
        temporaries = [np.ones(2 << 17) for _ in range(6)]  # 6 x 2 MiB alive at once, then freed
        del temporaries
        rounds.append(faults() - before)
    print(*rounds)
""")


def _faults(mode: str) -> list[int]:
    out = subprocess.run([sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, timeout=60, check=True)
    return [int(n) for n in out.stdout.split()]


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc, and page faults from getrusage")
def test_freed_blocks_are_reused_without_a_page_fault_each_round():
    # glibc's defaults give the 12 MiB back after each round and fault every page of it in again
    # (~3,000 faults a round); kept, only the first round faults.
    plain, kept = _faults("plain"), _faults("keep")
    assert min(plain[1:]) > 2000, plain
    assert kept[0] > 2000 and max(kept[1:]) < 100, kept


class _Libc:
    def __init__(self, answer: int = 1) -> None:
        self.calls: list[tuple[int, int]] = []
        self.answer = answer

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return self.answer


def test_the_settings_are_the_documented_ones_and_each_is_tried(monkeypatch):
    libc = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    assert allocator.keep_freed_heap() is True
    assert libc.calls == [(-3, 8 << 20), (-1, 32 << 20)]  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
    assert allocator.fewer_arenas() is True
    assert libc.calls[-1] == (-8, 2)  # M_ARENA_MAX
    refused = _Libc(answer=0)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: refused)
    assert allocator.keep_freed_heap() is False
    assert len(refused.calls) == 2  # the second setting is tried although the first was refused


def test_without_glibc_nothing_happens(monkeypatch):
    def no_libc(name):
        raise OSError("no libc")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert allocator.keep_freed_heap() is False
    assert allocator.fewer_arenas() is False


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc")
def test_this_glibc_accepts_the_values():
    # mallopt refuses a mapping threshold above half its heap size (32 MiB on 64-bit).
    out = subprocess.run([sys.executable, "-c", "from lsrep import allocator as a; "
                          "print(a.keep_freed_heap(), a.fewer_arenas())"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_the_hosts_fork_server_keeps_freed_heap_before_it_forks(monkeypatch):
    from lsrep.host import zygote

    order = []
    monkeypatch.setattr(allocator, "keep_freed_heap", lambda: order.append("keep"))
    monkeypatch.setattr(zygote, "_serve", lambda *a: order.append("serve") or 0)
    here, there = socket.socketpair()
    previous = zygote.signal.getsignal(zygote.signal.SIGINT)
    try:
        assert zygote.serve(there.fileno()) == 0
    finally:
        zygote.signal.signal(zygote.signal.SIGINT, previous)
        here.close()
        there.close()
    assert order == ["keep", "serve"]


def test_pool_workers_keep_freed_heap(monkeypatch):
    from lsrep.executors import workers

    seen = []
    monkeypatch.setattr(allocator, "keep_freed_heap", lambda: seen.append("keep"))
    # Nothing of worker_init may touch the test process: no parent-death signal, no watchdog.
    monkeypatch.setattr(ctypes, "CDLL", lambda name, **kw: _NoPrctl())
    monkeypatch.setattr(workers.threading, "Thread", _NoThread)
    monkeypatch.setattr(workers.os, "getppid", lambda: 4242)
    monkeypatch.setattr(workers, "driver_alive", lambda pid: True)
    monkeypatch.setattr("lsrep.collector.for_unit_process", lambda: None)
    monkeypatch.setattr("lsrep.host.launch.use_shared", lambda shared: None)
    previous = workers.signal.getsignal(workers.signal.SIGINT)
    try:
        workers.worker_init(4242)
    finally:
        workers.signal.signal(workers.signal.SIGINT, previous)
    assert seen == ["keep"]


class _NoPrctl:
    def prctl(self, *args) -> int:
        return 0


class _NoThread:
    def __init__(self, *args, **kwargs) -> None:
        pass

    def start(self) -> None:
        pass
