"""One unit of a campaign — a condition x trajectory x repetition — as the engine runs it, and
the rows it returns. Executors ship these between processes, so they stay plain dataclasses."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from lsrep.plan import ReplayPlan
from lsrep.protocol.campaign import AnswererSpec, EmbedderSpec
from lsrep.protocol.models import ProbeSet, Trajectory


@dataclass(frozen=True)
class UnitTask:
    """Everything one unit needs; picklable, so executors can ship it to a worker."""

    run_id: str
    unit_id: str
    condition: str
    system: str
    options: dict[str, Any]
    disable: tuple[str, ...]
    trajectory: Trajectory
    probes: ProbeSet
    plan: ReplayPlan
    plan_digest: str
    access: str
    answer_mode: str
    answerer: AnswererSpec
    embedder: EmbedderSpec
    retrieval_budget: int | None
    repetition: int
    seed: int
    progress: bool = False
    store_path: str | None = None
    """Where the run store lives: model calls are cached and rate-limited beside it."""
    refresh_cache_before: str | None = None
    """`--refresh-cache`: cached model replies older than this instant are not used."""
    adapter_host: str = "process"
    """Where the adapter runs: its own host process (default) or `in-process` (debugging)."""
    simulated_clock: bool | str = True
    """Patch the host's wall clock to each call's simulated `now` (lsrep.host.clock)."""
    enforce_budget: bool = False
    """Cut each returned context to `retrieval_budget` before answering (the cut is recorded)."""
    context_format: str = "harness"
    """`harness`: the answer prompt holds the numbered fragment texts; `system`: the block the
    system returns as `context_text`, where it returns one."""
    memory_llm: Any = None
    """The condition's `[memory_llm]` table (`MemoryModelSpec`), or None: no memory-side chat model."""
    memory_embedder: Any = None
    """The condition's `[memory_embedder]` table (`MemoryModelSpec`), or None."""
    state_digests: bool = True
    """Record the adapter's state digest at checkpoints (isolated access and repetitions check it)."""
    prefix_sha256: tuple[str, ...] = ()
    """The trajectory's running prefix hashes (`lsrep.prefix_hash.prefix_hashes`), computed once by
    the driver for its turn rows, so a worker does not hash every turn again; empty: the unit
    computes them."""
    trajectory_follows: bool = False
    """The next unit in task order replays the same trajectory (a LongMemEval question's next
    condition, a trajectory's next repetition): this process keeps the turn index for it when this
    unit is done (`lsrep.shared_index`). A hint: no result depends on it."""


@dataclass
class UnitResult:
    """Rows produced by one unit, keyed by store table."""

    unit: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def state_digests_needed(access: str, repetitions: int) -> bool:
    """Whether a unit's checkpoints take the adapter's state digest: only where a check reads it,
    the rollback check of isolated access and the comparison of repetitions (issue #20)."""
    return access == "isolated" or repetitions > 1


def unit_seed(master: int, condition: str, trajectory: str, repetition: int) -> int:
    """The unit's seed: the campaign's master seed, condition, trajectory and repetition, hashed."""
    digest = hashlib.sha256(f"{master}:{condition}:{trajectory}:{repetition}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
