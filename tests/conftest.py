"""Shared fixtures: the repository, the shared data folder and a copy of the bundled example."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the quickstart campaign whose store lives in tmp_path."""
    dest = tmp_path / "campaigns"
    shutil.copytree(REPO / "campaigns" / "quickstart", dest / "quickstart")
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    text = (REPO / "campaigns" / "quickstart.toml").read_text()
    (dest / "quickstart.toml").write_text(text)
    return dest / "quickstart.toml"


CTRL_C_DEFAULT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execv(sys.argv[1], sys.argv[1:])")


def with_ctrl_c(cmd: list[str]) -> list[str]:
    """`cmd` started with Ctrl-C at its default action, whatever this process inherited. A shell
    starts a background job with SIGINT ignored (POSIX: `pytest ... &`, `nohup`), a child inherits
    that across exec, and Python then keeps it ignored (it installs its KeyboardInterrupt handler
    only over the default): an lsrep started so rightly ignores Ctrl-C, and a test of its Ctrl-C
    would see the run finish (exit 0, nothing on stderr). `cmd[0]` is an executable path."""
    return [sys.executable, "-c", CTRL_C_DEFAULT, *cmd]


def units_stored(store: Path, status: str | None = None) -> int:
    """Units a run store holds now (with `status`, only those), 0 while it does not exist or is
    locked: a test waiting for a run in another process polls this. Read-only: it never migrates
    or locks the store the run is writing."""
    if not store.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            where, args = ("where status = ?", [status]) if status else ("", [])
            return conn.execute(f"select count(*) from units {where}", args).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def longmemeval_tasks(data: Path, systems: list[str], store: Path) -> list:
    """The unit tasks `lsrep longmemeval` would run on `data` for `systems` (none is run): an
    executor that only collects them stands in for the real one."""
    from lsrep.executors.local import Executor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    class Collect(Executor):
        def run(self, tasks):
            self.tasks = list(tasks)
            return iter(())

    collect = Collect()
    run_longmemeval(spec_from_systems(systems, data, store=store), executor=collect, fresh=True)
    return collect.tasks
