"""The dynamic memory budget and two-phase greedy packing (seed-systems 5.5, step 4).

Phase 1 (diversity): for each source type with candidates, in priority order, take its best
candidate if it fits. Phase 2 (fill): walk the rest by score, add each one that fits, skip
each one that does not, and continue to the end. The budget may leave capacity unused.
The source-type cap then swaps out the lowest-scored fragments of a type holding more than
its share while fitting candidates of other types remain.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .config import IceConfig
from .events import EventRelay
from .legs import Candidate


@dataclass(frozen=True)
class MemoryBudget:
    """The memory budget for one query, and how it was derived."""

    native: int
    """ICE's own B_mem for this query."""
    effective: int
    """B_mem after any external ceiling."""
    basis_tokens: int
    """Tokens the growth was computed from (the current conversation's, by default)."""
    rule: str


def memory_budget(config: IceConfig, *, reliance: str, conversation_tokens: int,
                  memory_tokens: int, ceiling: int | None) -> MemoryBudget:
    """B_mem: 2,000 for an empty conversation, growing with it, scaled by reliance."""
    if reliance == "none":
        return MemoryBudget(0, 0, 0, "reliance none: no retrieval")
    if config.static_budget is not None:
        native, basis, rule = config.static_budget, conversation_tokens, "static"
    else:
        basis = conversation_tokens
        rule = "empty_conversation" if basis == 0 else "growth"
        if basis == 0 and config.fix.empty_conversation_cap:
            basis, rule = memory_tokens, "fix.empty_conversation_cap: growth from memory"
        grown = config.empty_conversation_budget + config.budget_growth * basis
        native = int(min(config.budget_max, grown)) if basis else config.empty_conversation_budget
    if reliance == "short_term":
        native = int(native * config.short_term_budget_factor)
        rule += " x short_term"
    effective = native if ceiling is None else max(0, min(native, ceiling))
    return MemoryBudget(native, effective, basis, rule)


@dataclass
class Packing:
    packed: list[Candidate] = field(default_factory=list)
    skipped: list[Candidate] = field(default_factory=list)
    """Candidates that did not fit."""
    removed_by_type_cap: list[Candidate] = field(default_factory=list)
    phase1_ids: set[str] = field(default_factory=set)

    @property
    def used(self) -> int:
        return sum(c.tokens for c in self.packed)


def pack(cands: list[Candidate], budget: int, config: IceConfig, emit: EventRelay) -> Packing:
    """Two-phase greedy packing of score-ordered candidates into `budget` tokens."""
    result = Packing()
    if not cands:
        emit("budget.phase1", "ineligible", reason="no candidates")
        emit("budget.phase2", "ineligible", reason="no candidates")
        return result
    taken: set[str] = set()
    emit("budget.phase1", "eligible", count=len(cands), params={"b_mem": budget})
    if not config.is_on("budget.phase1"):
        emit("budget.phase1", "skipped", reason="disabled")
    else:
        for source_type in config.phase1_priority:
            best = next((c for c in cands if c.source_type == source_type), None)
            if best is not None and result.used + best.tokens <= budget:
                result.packed.append(best)
                taken.add(best.id)
        result.phase1_ids = set(taken)
        emit("budget.phase1", "executed", count=len(taken),
             params={"b_mem": budget, "tokens_used": result.used})
        if taken:
            emit("budget.phase1", "output", count=len(taken), ids=tuple(sorted(taken)))
    emit("budget.phase2", "eligible", count=len(cands) - len(taken), params={"b_mem": budget})
    added = []
    used = result.used  # kept as a running total: summing the packed list per candidate was quadratic
    for c in cands:
        if c.id in taken:
            continue
        tokens = c.tokens
        if used + tokens <= budget:
            result.packed.append(c)
            taken.add(c.id)
            added.append(c.id)
            used += tokens
        else:
            result.skipped.append(c)
    emit("budget.phase2", "executed", count=len(added),
         params={"b_mem": budget, "tokens_used": result.used,
                 "skipped_not_fitting": len(result.skipped)})
    if added:
        emit("budget.phase2", "output", count=len(added), ids=tuple(added))
    _type_cap(cands, result, budget, config, emit)
    result.packed.sort(key=lambda c: (-c.score, c.id))
    return result


def _type_cap(cands: list[Candidate], result: Packing, budget: int, config: IceConfig,
              emit: EventRelay) -> None:
    name = "diversify.type_cap"
    if len({c.source_type for c in cands}) < 2:
        emit(name, "ineligible", reason="fewer than two source types among candidates")
        return
    emit(name, "eligible", count=len(result.packed))
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return
    while result.packed:
        counts = Counter(c.source_type for c in result.packed)
        dominant, n = counts.most_common(1)[0]
        if n <= config.type_cap_share * len(result.packed):
            break
        inside = {c.id for c in result.packed}
        victims = [c for c in result.packed
                   if c.source_type == dominant and c.id not in result.phase1_ids]
        if not victims:
            break
        victim = min(victims, key=lambda c: (c.score, c.id))
        room = budget - result.used + victim.tokens
        alt = next((c for c in cands if c.id not in inside and c.source_type != dominant
                    and c.tokens <= room), None)
        if alt is None:
            break
        result.packed.remove(victim)
        result.packed.append(alt)
        result.removed_by_type_cap.append(victim)
        if alt in result.skipped:
            result.skipped.remove(alt)
    removed = tuple(c.id for c in result.removed_by_type_cap)
    emit(name, "executed", count=len(removed), ids=removed,
         params={"share": config.type_cap_share})
    if removed:
        emit(name, "output", count=len(removed), ids=removed, reason="swapped out")
