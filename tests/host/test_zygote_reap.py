"""The fork server reaps its hosts, so their CPU time reaches its children's times (and, through
the harness waiting for the fork server, the harness's): the benchmarks count the hosts' CPU."""

from __future__ import annotations

import os
import signal
import time

from lsrep.host import zygote


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def test_an_exited_host_is_reaped_and_its_cpu_counted():
    pid = os.fork()
    if pid == 0:  # the "host": burns CPU, then exits
        _burn(0.3)
        os._exit(0)
    deadline = time.monotonic() + 120
    while _state(pid) != "Z":
        assert time.monotonic() < deadline, "child did not exit"
        time.sleep(0.02)
    before = os.times()
    zygote._reap(signal.SIGCHLD, None)
    after = os.times()
    assert not os.path.exists(f"/proc/{pid}"), "the exited host was not reaped"
    assert (after.children_user + after.children_system) - (before.children_user + before.children_system) >= 0.25
    zygote._reap(signal.SIGCHLD, None)  # nothing left to reap: returns quietly
