"""Inter-process locks beside a run store, and the checks a path must pass to be opened as one.

Locks are `flock` on small sidecar files (`<store>.<purpose>.lock`): the kernel drops them when
the holder dies, so a killed process never leaves a store locked.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another process's transaction before giving up."""

SQLITE_HEADER = b"SQLite format 3\x00"


def open_error(path: Path) -> str | None:
    """Why `path` cannot be a run store (None when it can): checked before anything is created."""
    if path.is_dir():
        return "is a directory, not a run store file; pass --store with a file path such as runs/lsrep.sqlite"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a directory, so the store cannot be created there; choose another --store"
            if not os.access(parent, os.W_OK) and not path.exists():
                return f"cannot create the store: {parent} is not writable; choose another --store"
            break
    if path.exists():
        try:
            with path.open("rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            return f"cannot read the store ({exc.strerror}); check its permissions"
        if head and head != SQLITE_HEADER:
            return "is not a SQLite run store (wrong file header); pass --store with a store path or a new file"
    return None


@contextmanager
def file_lock(path: Path, timeout_s: float | None = BUSY_TIMEOUT_S,
              on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold an exclusive lock on `path`; yields whether another process held it first.

    Waits at most `timeout_s` seconds (None: as long as it takes), calling `on_wait` once
    when it has to wait.
    """
    from lsrep.errors import LsrepError

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        # A read-only folder (a store opened to read): no lock file can exist there, and no
        # writer can be creating or migrating the store; SQLite's own locking still applies.
        yield False
        return
    try:
        contended = False
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not contended and on_wait is not None:
                    on_wait()
                contended = True
                if deadline is not None and time.monotonic() > deadline:
                    raise LsrepError(f"{path}: still held by another lsrep process after {timeout_s:.0f} s; "
                                     "wait for it to finish, or stop it") from None
                time.sleep(0.05)
        yield contended
    finally:
        os.close(fd)
