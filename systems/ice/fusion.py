"""Fusion, bonuses and the cross-conversation cap (seed-systems 5.5, steps 1-3).

Weighted RRF: score(d) = sum over legs of w[intent][leg] / (k + rank_leg(d)), 1-based ranks.
A candidate returned by several legs is merged and keeps every attribution. The `concat`
mode is the paper's unfused ablation step: vector results, then lexical results appended,
then the remaining legs, scored by list position only.
"""

from __future__ import annotations

from collections import Counter

from .config import LEGS, IceConfig
from .events import EventRelay
from .legs import Candidate


def merge(results: dict[str, list[Candidate]]) -> dict[str, Candidate]:
    """One candidate per id, with the ranks of every leg that returned it."""
    merged: dict[str, Candidate] = {}
    for leg in LEGS:
        for cand in results.get(leg, []):
            if cand.id in merged:
                merged[cand.id].legs.update(cand.legs)
                merged[cand.id].mechanisms |= cand.mechanisms
            else:
                merged[cand.id] = cand
    return merged


def fuse(results: dict[str, list[Candidate]], weights: dict[str, float], config: IceConfig,
         emit: EventRelay) -> list[Candidate]:
    """Fused candidates, best first."""
    merged = merge(results)
    if not merged:
        emit("rrf", "ineligible", reason="no leg output")
        return []
    emit("rrf", "eligible", count=len(merged))
    if config.fusion == "concat":
        order: list[str] = []
        for leg in LEGS:
            order += [c.id for c in results.get(leg, []) if c.id not in order]
        for pos, cid in enumerate(order, start=1):
            merged[cid].score = 1.0 / (config.rrf_k + pos)
    else:
        for cand in merged.values():
            cand.score = sum(weights.get(leg, 0.0) / (config.rrf_k + rank)
                             for leg, rank in cand.legs.items())
    fused = sorted(merged.values(), key=lambda c: (-c.score, c.id))
    emit("rrf", "executed", count=len(fused), params={
        "mode": config.fusion, "k": config.rrf_k,
        "weights": {leg: weights.get(leg, 0.0) for leg in LEGS},
    })
    emit("rrf", "output", count=len(fused), ids=tuple(c.id for c in fused),
         params={"ranks": {c.id: c.legs for c in fused[:50]}})
    return fused


def apply_bonuses(cands: list[Candidate], *, current_conversation: str, config: IceConfig,
                  emit: EventRelay) -> list[Candidate]:
    """Multiplicative bonuses after fusion, then re-sort.

    Graph fragments get only the confidence flag; edge strength is not consulted (seed).
    """
    rules = {
        "bonus.confidence": lambda c: c.source_type == "graph" and c.confident,
        "bonus.strength": lambda c: c.strength is not None and c.source_type != "graph",
        "bonus.current_conv": lambda c: (c.conversation_id is not None
                                         and c.conversation_id == current_conversation),
    }
    for name, applies in rules.items():
        hits = [c for c in cands if applies(c)]
        if not hits:
            emit(name, "ineligible", reason="no candidate meets the condition")
            continue
        emit(name, "eligible", count=len(hits))
        if not config.is_on(name):
            emit(name, "skipped", reason="disabled")
            continue
        for c in hits:
            c.score *= _multiplier(name, c, config)
        emit(name, "executed", count=len(hits), ids=tuple(c.id for c in hits))
        emit(name, "output", count=len(hits), ids=tuple(c.id for c in hits),
             params={"multipliers": {c.id: round(_multiplier(name, c, config), 4)
                                     for c in hits[:50]}})
    return sorted(cands, key=lambda c: (-c.score, c.id))


def _multiplier(name: str, c: Candidate, config: IceConfig) -> float:
    if name == "bonus.confidence":
        return config.confidence_boost
    if name == "bonus.strength":
        base = config.strength_bonus_base
        return base + (1.0 - base) * float(c.strength or 0.0)
    return config.current_conversation_bonus


def cap_other_conversations(cands: list[Candidate], *, current_conversation: str,
                            config: IceConfig, emit: EventRelay) -> list[Candidate]:
    """At most N fragments from each other conversation; the current one is exempt."""
    name = "diversify.cross_conv_cap"
    others = {c.conversation_id for c in cands
              if c.conversation_id is not None and c.conversation_id != current_conversation}
    if not others:
        emit(name, "ineligible", reason="no candidate from another conversation")
        return cands
    emit(name, "eligible", count=len(others))
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return cands
    seen: Counter[str] = Counter()
    kept, removed = [], []
    for c in cands:
        conv = c.conversation_id
        if conv is not None and conv != current_conversation:
            seen[conv] += 1
            if seen[conv] > config.cross_conversation_cap:
                removed.append(c)
                continue
        kept.append(c)
    emit(name, "executed", count=len(removed), ids=tuple(c.id for c in removed),
         params={"cap": config.cross_conversation_cap, "before": len(cands),
                 "after": len(kept), "other_conversations": len(others)})
    emit(name, "output", count=len(kept), ids=tuple(c.id for c in kept),
         params={"removed": len(removed)})
    return kept
