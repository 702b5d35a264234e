"""Bounds on requests in flight to one endpoint.

The client holds a slot only while a request is on the wire, never while it
sleeps between retries. `ThreadLimit` bounds one process; `FileLockLimit`
shares one bound between every thread and process that names the same folder
(e.g. parallel replay workers against one rate-limited endpoint).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol


class ConcurrencyLimit(Protocol):
    """Something that hands out at most `limit` slots at once."""

    limit: int

    def slot(self) -> AbstractContextManager[None]:
        """Context manager held for the duration of one request."""
        ...


class ThreadLimit:
    """In-process bound: a bounded semaphore."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit)

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._sem:
            yield

    def __repr__(self) -> str:
        return f"ThreadLimit({self.limit})"


class FileLockLimit:
    """Cross-process bound: `limit` slot files under `folder`, each held by an exclusive flock.

    Separate opens of one file conflict under flock even inside one process, so
    threads and processes share the same bound. A crashed holder's lock is
    released by the kernel with its file descriptor.
    """

    def __init__(self, folder: str | Path, limit: int, poll_s: float = 0.002) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.limit = limit
        self.poll_s = poll_s
        self._paths = [self.folder / f"slot-{i:03d}.lock" for i in range(limit)]
        for path in self._paths:
            path.touch(exist_ok=True)

    def _try_acquire(self) -> int | None:
        for path in self._paths:
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        return None

    @contextmanager
    def slot(self) -> Iterator[None]:
        delay = self.poll_s
        while (fd := self._try_acquire()) is None:
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __repr__(self) -> str:
        return f"FileLockLimit({str(self.folder)!r}, {self.limit})"
