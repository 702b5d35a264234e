"""One turn index per trajectory in a process, shared by the units that replay it.

A LongMemEval campaign replays each question's haystack once per condition, one condition after
another (its tasks are question-major: `lsrep.longmemeval`); `lsrep run` replays a trajectory once
per repetition, one after another. Each unit used to build its own `lsrep.provenance.TurnIndex`
of the same turns: every turn split into segments and posted, a sixth to a quarter of a
LongMemEval unit's CPU.

The index depends only on the turns (their contents, speakers and roles), and everything it
caches (text analyses, fragment verdicts, judged contexts, per-turn views) is a function of what it
is asked and of those turns, never of the unit asking. So the units of one trajectory share one
index: the same rows as before (`tests/core/test_shared_index.py` compares stores written with and
without sharing), the index built once, and a text that two conditions return (a turn's line in
full-context and vector-RAG contexts) analysed once.

- **Key.** The trajectory id, its length and the running prefix hash after its last turn
  (`lsrep.prefix_hash`: SHA-256 over every turn's canonical JSON), so two keys are equal only for
  the same turns.
- **Lifetime.** An index lives while a unit holds it. When the last holder lets it go it is kept
  only if the task said a unit of the same trajectory comes next (`UnitTask.trajectory_follows`),
  and only until a unit of another trajectory asks for an index: at most one index is kept
  beyond those in use, and none in a run whose units never share a trajectory (the memory budget
  of a one-condition LongMemEval run is unchanged).
- **Threads.** Units replay in threads of one process (`lsrep.executors.overlap`); the registry is
  locked, and the index's own memos are dictionaries filled with the values any thread would
  compute.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable, Sequence
from typing import Any

Key = tuple[str, int, str]


def index_key(trajectory_id: str, prefix_hashes: Sequence[str]) -> Key:
    """A trajectory's key: its id, its length and the prefix hash after its last turn."""
    return (trajectory_id, len(prefix_hashes), prefix_hashes[-1] if prefix_hashes else "")


class SharedIndexes:
    """Turn indexes by trajectory key, with how many units hold each, and at most one kept."""

    def __init__(self, build: Callable[[Sequence[Any]], cf.Future]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._held: dict[Key, list] = {}
        """Key -> [future of the index, units holding it]."""
        self._kept: tuple[Key, cf.Future] | None = None
        self.built = 0
        """Indexes built in this process (a test reads it: one per trajectory when units share)."""

    def acquire(self, key: Key, turns: Sequence[Any]) -> cf.Future:
        """The index of `key`'s turns (a future: built in the background on first use)."""
        with self._lock:
            entry = self._held.get(key)
            if entry is not None:
                entry[1] += 1
                return entry[0]
            kept, self._kept = self._kept, None
            if kept is not None and kept[0] == key:
                self._held[key] = [kept[1], 1]
                return kept[1]
            future = self._build(turns)
            self.built += 1
            self._held[key] = [future, 1]
        if kept is not None:
            _dispose(kept[1])
        return future

    def release(self, key: Key, follows: bool) -> None:
        """A unit is done with `key`'s index; `follows`: a unit of the same trajectory comes next."""
        with self._lock:
            entry = self._held[key]
            entry[1] -= 1
            if entry[1] > 0:
                return
            del self._held[key]
            drop = entry[0]
            if follows:
                drop, self._kept = (self._kept[1] if self._kept is not None else None), (key, entry[0])
        if drop is not None:
            _dispose(drop)

    def forget(self) -> None:
        """Drop the kept index (a run ended)."""
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is not None:
            _dispose(kept[1])

    def holding(self) -> int:
        """Indexes in use or kept."""
        with self._lock:
            return len(self._held) + (self._kept is not None)


def _dispose(future: cf.Future) -> None:
    """Free an index no unit holds: it refers to itself (its per-turn views), so its state goes
    now rather than at the next full collection (`lsrep.collector`)."""
    if future.done() and future.exception() is None:
        vars(future.result()).clear()
