"""When CPython's cyclic garbage collector runs in LSREP's processes (issue #20).

A unit builds long-lived structures in bursts (the turn index and its postings, the replay's
fragments, memos, the rows it returns) and frees them when it ends; almost nothing it allocates is
a garbage cycle. Under CPython's default setting (a young collection every 700 net allocations of
container objects, the middle generation every 10 of those, the whole heap every 10 of those) the
collector examined those structures again and again while they grew, and freed almost nothing:
measured on an idle machine, 160 small LongMemEval units in one process spent 0.78 of 8.1 CPU s in
the collector (1,911 young, 163 middle and 14 full collections), a pool worker 0.63 of 3.7 s, and 50
LongMemEval-S-shaped questions 0.59 of 5.5 s, all to free a few hundred objects.

- **While a unit replays or its rows are written** (`replaying`): a young collection after
  `YOUNG_COLLECTION_AFTER` net allocations, the whole heap after `FULL_COLLECTION_EVERY` middle ones.
  Garbage cycles live longer before they are freed: at most that many container objects' worth
  (a few MB); everything else is freed by reference counting as before.
- **A process that only runs units** (a pool worker; `for_unit_process`): the same setting for its
  whole life, and the heap it was forked with (the imported harness, never garbage) frozen out of
  every collection.

Nothing a unit computes depends on when the collector runs: the same campaign gives the same rows.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_COLLECTION_AFTER = 50_000
"""While a unit replays, the young generation is collected after this many net allocations of
container objects (CPython's default: 700)."""
FULL_COLLECTION_EVERY = 100
"""While a unit replays, the oldest generation is examined after this many collections of the
middle one (CPython's default: 10)."""

_replaying = 0
_saved_threshold: tuple[int, ...] | None = None
_gc_lock = threading.Lock()


def unit_threshold(current: tuple[int, ...]) -> tuple[int, int, int]:
    """The setting while units replay: `current` with its young and oldest thresholds raised to
    ours (a higher setting is kept)."""
    first, middle, oldest = current
    return max(first, YOUNG_COLLECTION_AFTER), middle, max(oldest, FULL_COLLECTION_EVERY)


@contextmanager
def replaying() -> Iterator[None]:
    """The unit setting (`unit_threshold`) while a unit replays or its rows are written. Units
    replaying in threads share one setting: the first raises it, the last puts back what it found."""
    global _replaying, _saved_threshold
    with _gc_lock:
        if _replaying == 0:
            _saved_threshold = gc.get_threshold()
            gc.set_threshold(*unit_threshold(_saved_threshold))
        _replaying += 1
    try:
        yield
    finally:
        with _gc_lock:
            _replaying -= 1
            if _replaying == 0 and _saved_threshold is not None:
                gc.set_threshold(*_saved_threshold)
                _saved_threshold = None


def for_unit_process() -> None:
    """In a process that only runs units (a pool worker): the unit setting for its whole life, and
    the objects it holds now (the harness it was forked with) frozen out of every collection."""
    gc.freeze()
    gc.set_threshold(*unit_threshold(gc.get_threshold()))
