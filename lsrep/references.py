"""Which reference version(s) are in force for a probe at a checkpoint (protocol sections 2 and 7).

A checkpoint is identified by the prefix it closes: `prefix_len` turns have
arrived. A version is *established* once its `valid_from` turn has arrived and
*superseded* once its `valid_until` turn has.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from lsrep.protocol.models import Probe, ReferenceVersion


class Expected(BaseModel):
    """The resolved expectation for one (probe, checkpoint)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ask: bool
    """False when the probe is not asked at this checkpoint (skip)."""
    expect_abstain: bool = False
    """Abstaining is the correct response."""
    in_force: tuple[ReferenceVersion, ...] = ()
    """Version(s) in force; for evolution, every established version in order."""
    superseded: tuple[ReferenceVersion, ...] = ()
    """Versions that held earlier and no longer do."""
    later: tuple[ReferenceVersion, ...] = ()
    """Versions that only become true after this checkpoint."""
    reason: str = ""
    """Why the probe is skipped or expects abstention."""


def resolve_expected(probe: Probe, index: dict[str, int], prefix_len: int) -> Expected:
    """Resolve a probe at the checkpoint closing the first `prefix_len` turns."""
    arrived = lambda turn_id: index[turn_id] < prefix_len  # noqa: E731

    if probe.ask_at != "every_checkpoint" and not any(arrived(t) for t in probe.ask_at):
        return Expected(ask=False, reason="before the probe's first ask_at turn")

    established = [v for v in probe.references if arrived(v.valid_from)]
    later = tuple(v for v in probe.references if not arrived(v.valid_from))
    live = tuple(v for v in established if v.valid_until is None or not arrived(v.valid_until))
    superseded = tuple(v for v in established if v not in live)

    if probe.kind == "abstention":
        return Expected(
            ask=True, expect_abstain=True, superseded=superseded, later=later + live,
            reason="abstention probe",
        )
    if not established:
        if probe.before_first == "skip":
            return Expected(ask=False, later=later, reason="before the first version")
        return Expected(ask=True, expect_abstain=True, later=later, reason="before the first version")
    if probe.kind == "evolution":
        ordered = tuple(sorted(established, key=lambda v: index[v.valid_from]))
        return Expected(ask=True, in_force=ordered, later=later)
    if not live:
        # Every established version was superseded with no successor: the fact was withdrawn.
        return Expected(
            ask=True, expect_abstain=True, superseded=superseded, later=later,
            reason="every version superseded",
        )
    return Expected(ask=True, in_force=live, superseded=superseded, later=later)
