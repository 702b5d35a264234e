"""How observations line up over time in the checkpoint curves (never pooled across trajectories of
different length)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsrep.reports.common import Context


@dataclass(frozen=True)
class CheckpointAxis:
    """How observations line up over time: by checkpoint ordinal when every trajectory has the same number
    of checkpoints, else by relative position (bins of ordinal / the trajectory's own checkpoint count),
    so a short trajectory ending never looks like a drop."""

    aligned: bool
    """True: relative-position bins; False: plain ordinals."""
    bins: int
    counts: dict[str, int]
    """Trajectory → its number of checkpoints."""

    def x(self, obs: dict[str, Any]) -> int:
        if not self.aligned:
            return obs["checkpoint"]
        n = self.counts.get(obs["trajectory"]) or 1
        return min(self.bins - 1, obs["checkpoint"] * self.bins // n)

    @property
    def xlabel(self) -> str:
        return (f"relative position in the trajectory (bin of {self.bins})" if self.aligned
                else "checkpoint (ordinal)")

    @property
    def note(self) -> str:
        if not self.aligned:
            return ("Every trajectory has the same number of checkpoints, so the same ordinal is the same point "
                    "in every trajectory.")
        sizes = ", ".join(f"{t}: {n}" for t, n in sorted(self.counts.items()))
        return (f"Trajectories differ in length ({sizes} checkpoints), so observations are aligned by relative "
                f"position: bin = floor(ordinal × {self.bins} / the trajectory's checkpoints). Ordinals are never "
                "pooled across trajectories of different length.")


def checkpoint_axis(ctx: Context) -> CheckpointAxis:
    unit_traj = {u["unit_id"]: u["trajectory"] for u in ctx.data.units}
    counts: dict[str, int] = {}
    for cp in ctx.data.checkpoints:
        t = unit_traj.get(cp["unit_id"])
        if t is not None:
            counts[t] = max(counts.get(t, 0), cp["ordinal"] + 1)
    for o in ctx.data.observations:
        counts[o["trajectory"]] = max(counts.get(o["trajectory"], 0), o["checkpoint"] + 1)
    if len(set(counts.values())) <= 1:
        return CheckpointAxis(False, max(counts.values(), default=1), counts)
    return CheckpointAxis(True, max(2, min(10, min(counts.values()))), counts)
