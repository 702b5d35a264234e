"""The episodic store's strengths in memory: arrays indexed by rowid, a mirror of `turn_strength`.

Decay rewrites every strength above the floor each night. Held here, a night is a few array
operations over the turns plus one narrow `UPDATE` per live row, instead of a Python tuple, a
dictionary update and a 2 KB row rewrite per live row. The values are the ones the row-by-row
rule (`workers.decayed_all`) gives, bit for bit: the same power of two per distinct "set at"
stamp, one IEEE multiplication and a max with the floor per row.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np

SECONDS_PER_DAY = 86_400.0


def decay_power(since: str, now: datetime, half_life_days: float) -> float:
    """2^(-dt/h), dt in simulated days from `since` to `now`, never negative."""
    dt = max(0.0, (now - datetime.fromisoformat(since)).total_seconds() / SECONDS_PER_DAY)
    return 2.0 ** (-dt / half_life_days)


class StrengthArrays:
    """(turn id, strength, set at) by rowid; a rowid without a turn holds NaN (never above)."""

    def __init__(self, ids_by_rowid: dict[int, str], rows: list[tuple[int, float, str]]) -> None:
        size = max(ids_by_rowid, default=0) + 1
        self.ids: list[str | None] = [None] * size
        self.value = np.full(size, np.nan)
        self.code = np.zeros(size, dtype=np.int64)
        self.reinforced = np.full(size, -1, dtype=np.int64)
        """Stamp code of the reinforcement that last wrote the row (1.0, at, last access at),
        -1 once anything else wrote it or when unknown (rows read from the file)."""
        self.stamps: list[str] = []
        self._codes: dict[str, int] = {}
        self.count = 0
        for rowid, tid in ids_by_rowid.items():
            self.ids[rowid] = tid
        for rowid, strength, at in rows:
            self.set(rowid, strength, at)

    def stamp_code(self, at: str) -> int:
        code = self._codes.get(at)
        if code is None:
            code = self._codes[at] = len(self.stamps)
            self.stamps.append(at)
        return code

    def add(self, rowid: int, turn_id: str, strength: float, at: str) -> None:
        """A new turn's row (rowids grow on add; the arrays grow by doubling)."""
        if rowid >= len(self.value):
            grow = max(rowid + 1, 2 * len(self.value)) - len(self.value)
            self.value = np.concatenate([self.value, np.full(grow, np.nan)])
            self.code = np.concatenate([self.code, np.zeros(grow, dtype=np.int64)])
            self.reinforced = np.concatenate([self.reinforced, np.full(grow, -1, dtype=np.int64)])
            self.ids.extend([None] * grow)
        self.ids[rowid] = turn_id
        self.set(rowid, strength, at)

    def set(self, rowid: int, strength: float, at: str) -> None:
        if math.isnan(self.value[rowid]):
            self.count += 1
        self.value[rowid] = strength
        self.code[rowid] = self.stamp_code(at)
        self.reinforced[rowid] = -1

    def unchanged_by_reinforcing(self, rowid: int, at: str) -> bool:
        """Whether reinforcing the row at `at` would write what it holds: a reinforcement at
        `at` wrote it last (strength 1.0, set and accessed at `at`)."""
        code = self._codes.get(at)
        return code is not None and self.reinforced.item(rowid) == code

    def reinforce(self, rowid: int, at: str) -> None:
        """The row reinforced at `at`: strength 1.0 set at `at` (its last access `at` too)."""
        self.set(rowid, 1.0, at)
        self.reinforced[rowid] = self.code[rowid]

    def above(self, floor: float | None) -> np.ndarray:
        """Rowids whose strength is above `floor` (every stored turn if None), ascending."""
        if floor is None:
            return np.flatnonzero(~np.isnan(self.value))
        return np.flatnonzero(self.value > floor)

    def rows(self, floor: float | None = None) -> list[tuple[str, float, str]]:
        """(id, strength, set at) in storage order; only strengths > `floor` if given."""
        rowids = self.above(floor)
        stamps, ids = self.stamps, self.ids
        return [(ids[r], s, stamps[c]) for r, s, c in
                zip(rowids.tolist(), self.value[rowids].tolist(), self.code[rowids].tolist(),
                    strict=True)]

    def total(self) -> float:
        """The correctly rounded sum of every stored strength."""
        return math.fsum(self.value[self.above(None)].tolist())

    def decay(self, now: datetime, floor: float,
              half_life_days: float) -> tuple[list[int], list[float], int]:
        """Age every strength above `floor` to `now`: s <- max(floor, s * 2^(-dt/h)).

        Returns (rowids, new strengths, how many changed), in storage order; the arrays hold
        the new strengths, set at `now`. One power per distinct stamp, as `decayed_all`.
        """
        rowids = self.above(floor)
        if not rowids.size:
            return [], [], 0
        old = self.value[rowids]
        codes, where = np.unique(self.code[rowids], return_inverse=True)
        powers = np.array([decay_power(self.stamps[c], now, half_life_days) for c in codes.tolist()])
        new = np.maximum(floor, old * powers[where])
        self.value[rowids] = new
        self.code[rowids] = self.stamp_code(now.isoformat())
        self.reinforced[rowids] = -1
        return rowids.tolist(), new.tolist(), int(np.count_nonzero(new != old))
