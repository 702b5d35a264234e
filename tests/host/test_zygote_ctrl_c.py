"""Ctrl-C reaches the terminal's whole process group; the adapter hosts' fork server (and `unshare`
before it) must leave it to the harness: no KeyboardInterrupt traceback, still serving."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

SCRIPT = textwrap.dedent("""
    import os, signal, time
    from lsrep.host.launch import zygote

    def tree(root):
        kids = {}
        for e in os.listdir("/proc"):
            if e.isdigit():
                try:
                    ppid = int(open(f"/proc/{e}/stat", "rb").read().rsplit(b")", 1)[1].split()[1])
                except OSError:
                    continue
                kids.setdefault(ppid, []).append(int(e))
        out, todo = [], [root]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(kids.get(p, []))
        return out

    z = zygote()
    start = time.monotonic()
    while time.monotonic() - start < 1.0:  # every 5 ms while it starts and imports, then once it serves
        for pid in tree(z.proc.pid):
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    time.sleep(0.5)
    for pid in tree(z.proc.pid):
        os.kill(pid, signal.SIGINT)
    time.sleep(0.3)
    assert z.proc.poll() is None, "the fork server died of Ctrl-C"
    print(z._ask({"op": "preload", "modules": []}))
""")


def test_the_hosts_fork_server_leaves_ctrl_c_to_the_harness():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{'ok': True}"
    assert "Traceback" not in out.stderr and "KeyboardInterrupt" not in out.stderr, out.stderr
