"""Automatic recall: activation, FCM propagation, fact scoring, filters, cap and budget; phase 2.

Generic selection (both phases): seeds are pages named in the query (1.0) or else the share
of query terms found in the page (FTS5); pages primed by the previous recall get a bonus;
`fcm_iterations` rounds of `a(j) <- tanh(a(j) + sum_i w_ij a(i))` spread activation along edges;
pages at or above the threshold contribute facts scored `a * (0.5 + 0.5 * coverage)`. Future
and expired prospective facts are dropped, then the per-subject cap and the estimated-token
budget apply.

Phase 2 (`_souvenirs`) regroups the selected subjects and, per subject, prints its summary
first, then up to `max(1, facts_per_subject)` of its candidate facts with procedural facts
first, then pointers to neighbours. The budget is not applied again (SEED, E-3) unless
`fix.phase2_ceiling`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from .cache import Memoire
from .events import Emitter
from .pages import Fact
from .recall_index import IndexPool
from .settings import Settings
from .text import estimate_tokens, fold, query_terms, term_set

_SEE_ALSO = {"en": "see also", "fr": "voir aussi"}


@dataclass(frozen=True)
class Scored:
    fact_id: str
    node: str
    score: float


@dataclass(frozen=True)
class RecallLine:
    """One line of a recall block and what it came from."""

    text: str
    kind: str
    """`subject`, `summary`, `fact` or `pointer`."""
    node: str
    fact_ids: tuple[str, ...] = ()


@dataclass
class Selection:
    """Everything generic selection computed, for journaling, phase 2 and events."""

    terms: list[str]
    activation: dict[str, float] = field(default_factory=dict)
    initial: dict[str, float] = field(default_factory=dict)
    """Activation before propagation (seeds plus priming)."""
    seeded: set[str] = field(default_factory=set)
    primed: set[str] = field(default_factory=set)
    pool: ListPool | IndexPool | None = None
    """The candidates, read lazily (`candidates` lists them all)."""
    selected: list[Scored] = field(default_factory=list)
    generic_lines: list[str] = field(default_factory=list)
    tokens: int = 0
    work: int = 0
    """Units of work done (node updates, edge terms, facts scored): the host's latency model."""

    @property
    def candidates(self) -> list[Scored]:
        """Every candidate fact, best first: (−score, fact id) order."""
        if self.pool is None:
            return []
        return [Scored(fid, node, -neg) for neg, fid, node in self.pool.ordered()]

    @property
    def subjects(self) -> list[str]:
        best: dict[str, float] = {}
        for s in self.selected:
            best[s.node] = max(best.get(s.node, 0.0), s.score)
        return sorted(best, key=lambda n: (-best[n], n))

    @property
    def graph_reached(self) -> list[str]:
        """Selected subjects that had no activation of their own: propagation brought them in."""
        return [s for s in self.subjects if self.initial.get(s, 0.0) == 0.0]


def withheld(fact: Fact, settings: Settings) -> bool:
    """`fix.enforce_privacy`: confidential and private facts never leave the memory."""
    return settings.fix.enforce_privacy and fact.privacy in ("confidential", "private")


def is_future(fact: Fact, today: str) -> bool:
    return bool((fact.event and fact.event > today) or (fact.said and fact.said > today))


def is_expired(fact: Fact, today: str) -> bool:
    return fact.type == "prospective" and bool(fact.until) and fact.until < today


class ListPool:
    """Candidates scored one by one (the plain rule), with `IndexPool`'s reading interface."""

    def __init__(self, candidates: list[Scored], memoire: Memoire) -> None:
        candidates.sort(key=lambda s: (-s.score, s.fact_id))
        self.items = candidates
        self.memoire = memoire

    @property
    def count(self) -> int:
        return len(self.items)

    def ordered(self):
        return ((-s.score, s.fact_id, s.node) for s in self.items)

    def capped(self, cap: int):
        taken: dict[str, int] = {}
        for s in self.items:
            if taken.get(s.node, 0) >= cap:
                continue
            taken[s.node] = taken.get(s.node, 0) + 1
            yield -s.score, s.fact_id, s.node

    def top(self, slug: str, n: int) -> list[tuple[float, str]]:
        facts = sorted((s for s in self.items if s.node == slug), key=lambda s: (
            self.memoire.facts[s.fact_id][1].section != "procedural", -s.score, s.fact_id))
        return [(-s.score, s.fact_id) for s in facts[:n]]


def select(memoire: Memoire, query: str, now: datetime, settings: Settings,
           primed: set[str], emit: Emitter, *, indexed: bool = True) -> Selection:
    """Generic selection. `indexed=False` scores every fact of every activated page (the plain
    rule); the default reads the pages' indexes and gives the same selection (recall_index.py)."""
    sel = Selection(terms=query_terms(query))
    a0 = _seeds(memoire, query, sel, emit)
    if settings.on("recall.priming") and primed:
        emit("recall.priming", "eligible", ids=sorted(primed))
        for slug in sorted(primed & set(memoire.pages)):
            a0[slug] = a0.get(slug, 0.0) + settings.priming_bonus
            sel.primed.add(slug)
        emit("recall.priming", "output" if sel.primed else "executed", ids=sorted(sel.primed))
    sel.initial = dict(a0)
    sel.activation = _propagate(memoire, a0, settings, sel, emit)
    today = now.date().isoformat()
    terms = set(sel.terms)
    future: list[str] = []
    expired: list[str] = []
    if indexed and memoire.unique_ids:
        sel.pool = IndexPool()
        for slug, level in sel.activation.items():
            if level < settings.activation_threshold:
                continue
            index = memoire.index(slug)
            sel.work += len(index.by_id)
            gone = index.future(today) if settings.on("recall.filter_future") else []
            late: list[str] = []
            if settings.on("recall.filter_expired"):
                skip = set(gone)
                late = [fid for fid in index.expired(today) if fid not in skip]
            future += gone
            expired += late
            excluded = {*gone, *late}
            if settings.fix.enforce_privacy:
                excluded |= index.private
            sel.pool.add(slug, index, level, terms, excluded)
    else:
        sel.pool = ListPool(_plain_candidates(memoire, sel, settings, today, terms, future, expired), memoire)
    emit("recall.filter_future", "executed", count=len(future), ids=sorted(future))
    emit("recall.filter_expired", "executed", count=len(expired), ids=sorted(expired))
    _cap_and_budget(memoire, sel, settings, emit)
    return sel


def _plain_candidates(memoire: Memoire, sel: Selection, settings: Settings, today: str, terms: set[str],
                      future: list[str], expired: list[str]) -> list[Scored]:
    """Every fact of every activated page, filtered and scored (unsorted)."""
    candidates: list[Scored] = []
    for slug, level in sel.activation.items():
        if level < settings.activation_threshold:
            continue
        for fact in memoire.pages[slug].facts:
            sel.work += 1
            if settings.on("recall.filter_future") and is_future(fact, today):
                future.append(fact.id)
                continue
            if settings.on("recall.filter_expired") and is_expired(fact, today):
                expired.append(fact.id)
                continue
            if withheld(fact, settings):
                continue
            coverage = len(terms & term_set(fact.text)) / len(terms) if terms else 0.0
            candidates.append(Scored(fact.id, slug, level * (0.5 + 0.5 * coverage)))
    return candidates


def _seeds(memoire: Memoire, query: str, sel: Selection, emit: Emitter) -> dict[str, float]:
    folded = fold(query)
    a0: dict[str, float] = {}
    for name, slug in memoire.names.items():
        if len(name) >= 3 and re.search(rf"\b{re.escape(name)}\b", folded):
            a0[slug] = 1.0
            sel.seeded.add(slug)
    if sel.terms:
        hits: dict[str, int] = {}
        for term in sel.terms:
            sel.work += 1
            for slug in memoire.nodes_with(term):
                hits[slug] = hits.get(slug, 0) + 1
        for slug, n in hits.items():
            a0.setdefault(slug, n / len(sel.terms))
    emit("recall.activate", "executed", count=len(a0), ids=sorted(a0),
         params={"seeded_by_name": sorted(sel.seeded)})
    return a0


def _propagate(memoire: Memoire, a0: dict[str, float], settings: Settings,
               sel: Selection, emit: Emitter) -> dict[str, float]:
    spread = settings.on("recall.graph") and bool(memoire.edges)
    emit("recall.graph", "eligible" if spread else "ineligible", count=len(memoire.edges),
         reason=None if spread else ("disabled" if memoire.edges else "aucune arête"))
    level = {slug: a0.get(slug, 0.0) for slug in memoire.pages}
    for _ in range(settings.fcm_iterations):
        incoming = {slug: 0.0 for slug in level}
        if spread:
            for (a, b), _proofs in memoire.edges.items():
                w = memoire.neighbours[a][b]
                incoming[b] += w * level[a]
                incoming[a] += w * level[b]
                sel.work += 2
        level = {slug: math.tanh(level[slug] + incoming[slug]) for slug in level}
        sel.work += len(level)
    kept = {s: v for s, v in level.items() if v >= settings.activation_threshold}
    reached = sorted(s for s in kept if a0.get(s, 0.0) == 0.0)
    if spread:
        emit("recall.graph", "executed", count=len(memoire.edges))
        if reached:
            emit("recall.graph", "output", ids=reached, count=len(reached))
    return {s: round(v, 9) for s, v in level.items() if v > 0.0}


def _cap_and_budget(memoire: Memoire, sel: Selection, settings: Settings, emit: Emitter) -> None:
    budget_on = settings.on("recall.budget")
    cut = 0
    for neg, fid, node in sel.pool.capped(settings.facts_per_subject):
        cand = Scored(fid, node, -neg)
        fact = memoire.facts[cand.fact_id][1]
        line = f"- {memoire.pages[cand.node].name}: {fact.text}"
        cost = estimate_tokens(line + "\n")
        if budget_on and sel.tokens + cost > settings.recall_budget_tokens:
            cut = sel.pool.count - len(sel.selected)
            break
        sel.selected.append(cand)
        sel.generic_lines.append(line)
        sel.tokens += cost
    emit("recall.budget", "executed", count=len(sel.selected),
         params={"estimated_tokens": sel.tokens, "budget": settings.recall_budget_tokens, "cut": cut})
    if sel.selected:
        emit("recall.budget", "selected", ids=[s.fact_id for s in sel.selected], count=len(sel.selected))


def souvenirs(memoire: Memoire, sel: Selection, settings: Settings) -> list[RecallLine]:
    """The phase-2 block: per subject, summary first, procedural facts first, then pointers."""
    lines: list[RecallLine] = []
    for slug in sel.subjects:
        page = memoire.pages[slug]
        lines.append(RecallLine(page.name, "subject", slug))
        if page.summary:
            lines.append(RecallLine(f"  {page.summary}", "summary", slug, tuple(page.summary_sources)))
        for _neg, fid in sel.pool.top(slug, max(1, settings.facts_per_subject)):
            fact = memoire.facts[fid][1]
            when = f" ({fact.shown_date})" if fact.shown_date else ""
            lines.append(RecallLine(f"  - {fact.text}{when}{fact.history_mark}", "fact", slug, (fact.id,)))
        pointers = [memoire.pages[n].name for n, _ in memoire.neighbours_of(slug)[:3]]
        if pointers:
            label = _SEE_ALSO.get(settings.language, "see also")
            lines.append(RecallLine(f"  → {label}: {', '.join(pointers)}", "pointer", slug))
    if settings.fix.phase2_ceiling:
        lines = _within(lines, settings.recall_budget_tokens)
    return lines


def _within(lines: list[RecallLine], budget: int) -> list[RecallLine]:
    kept: list[RecallLine] = []
    for line in lines:
        if estimate_tokens("\n".join([*(k.text for k in kept), line.text])) > budget:
            break
        kept.append(line)
    return kept
