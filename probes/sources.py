"""Data sources a campaign names instead of native files, registered in the `lsrep.sources`
entry-point group (pyproject.toml) so the harness core never imports this package.

Each returns what the harness replays: a `(Trajectory, ProbeSet)` pair, or (longmemeval)
an iterator of items, one question with its haystack each.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsrep.protocol.models import ProbeSet, Trajectory


def locomo_inputs(path: Path, sample_id: str, trajectory_id: str) -> tuple[Trajectory, ProbeSet]:
    """One LoCoMo conversation (locomo10.json schema), converted in memory."""
    from lsrep.probes.locomo import build_locomo

    (conversation,) = build_locomo(path, [sample_id])
    trajectory = Trajectory(trajectory_id=trajectory_id, turns=conversation.turns)
    return trajectory, ProbeSet(probes=conversation.probes)


def generated_inputs(path: Path, trajectory_id: str, settings: dict[str, Any]) -> tuple[Trajectory, ProbeSet]:
    """A seeded synthetic evolving-facts trajectory from a campaign's `generate` table."""
    from lsrep.probes.generator import GeneratorSpec, generate_trajectory
    from pydantic import ValidationError

    from lsrep.errors import InputError, pydantic_reason

    try:
        spec = GeneratorSpec.model_validate({**settings, "trajectory_id": trajectory_id})
    except ValidationError as exc:
        raise InputError(path, f"trajectory {trajectory_id!r}: bad generate settings: {pydantic_reason(exc)}") from None
    made = generate_trajectory(spec)
    return Trajectory(trajectory_id=trajectory_id, turns=made.turns), ProbeSet(probes=made.probes)


def longmemeval_items(path: Path, **options: Any) -> Iterator[Any]:
    """LongMemEval questions, streamed from the official JSON file (options as `iter_longmemeval`'s,
    e.g. `question_ids`)."""
    from lsrep.probes.longmemeval import iter_longmemeval

    return iter_longmemeval(path, **options)
