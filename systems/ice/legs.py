"""The six retrieval legs. Each turns a query into ranked candidates from one store.

A leg is eligible when it is switched on, its store has content, its intent weight is
positive and the prompt relies on memory at all (seed-systems 5.10). Each leg reports
eligible / executed / output through the event relay; selection and prompt inclusion are
reported later by the pipeline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .classify import Classification
from .codex import FIRST_PERSON, USER_ID, Codex, render_entity
from .config import IceConfig
from .documents import DocumentStore
from .episodic import EpisodicStore
from .events import EventRelay
from .overlays import SummaryStore
from .procedures import ProcedureStore
from .text import estimate_tokens, ngrams, words

_HISTORY_CUES = re.compile(
    r"\b(?:before|used to|previously|formerly|as of|earlier|originally|at first|in the past"
    r"|back then|(?:19|20)\d\d|ago)\b", re.I)
_ENUMERATION = re.compile(
    r"\b(?:list|enumerate|name)\b.*?\b(?:all|every|each|the|my)\b\s+(?:of\s+)?(?:the\s+|my\s+)?"
    r"([a-z]+)|\ball\s+(?:of\s+)?(?:the\s+|my\s+)?([a-z]+)|\bhow many\s+([a-z]+)"
    r"|\bwhat are (?:all )?(?:the |my )([a-z]+)|\bwhich ([a-z]+) (?:have|did) i\b", re.I)


@dataclass
class Candidate:
    """A retrieved item on its way to the prompt."""

    id: str
    source_type: str
    """`episodic`, `graph`, `procedural`, `document` or `summary`."""
    text: str
    conversation_id: str | None
    """Conversation the item comes from (None: not tied to one, exempt from the cap)."""
    source_turn_ids: tuple[str, ...]
    strength: float | None = None
    confident: bool = False
    legs: dict[str, int] = field(default_factory=dict)
    """Leg name -> 1-based rank in that leg."""
    mechanisms: set[str] = field(default_factory=set)
    """Extra contributing mechanisms beyond the legs (e.g. `mera`)."""
    score: float = 0.0
    base_score: float = 1.0
    """A leg-internal score (graph: hop score), kept for inspection."""

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def attribution(self) -> tuple[str, ...]:
        return tuple(sorted({f"leg.{leg}" for leg in self.legs} | self.mechanisms))


@dataclass
class LegContext:
    """What every leg may read."""

    query: str
    qvec: np.ndarray
    cls: Classification
    conversation_id: str
    config: IceConfig
    emit: EventRelay
    episodic: EpisodicStore
    codex: Codex
    procedures: ProcedureStore
    documents: DocumentStore
    summaries: SummaryStore
    idle: dict[str, str] = field(default_factory=dict)
    """Leg → why it had nothing to do (set by a leg that ran correctly and matched nothing)."""


def _episodic_candidates(ctx: LegContext, leg: str, ids: list[str]) -> list[Candidate]:
    turns = ctx.episodic.get_many(ids)
    out = []
    for rank, tid in enumerate(ids, start=1):
        t = turns[tid]
        out.append(Candidate(id=f"turn:{tid}", source_type="episodic", text=t.render(),
                             conversation_id=t.conversation_id, source_turn_ids=(tid,),
                             strength=t.strength, legs={leg: rank}))
    return out


def leg_episodic_vector(ctx: LegContext, depth: int) -> list[Candidate]:
    topic = ctx.cls.topic if ctx.config.cluster_scope and ctx.cls.topic != "general" else None
    return _episodic_candidates(ctx, "episodic_vector",
                                ctx.episodic.vector_search(ctx.qvec, depth, topic))


def leg_episodic_lexical(ctx: LegContext, depth: int) -> list[Candidate]:
    topic = ctx.cls.topic if ctx.config.cluster_scope and ctx.cls.topic != "general" else None
    ctx.idle["episodic_lexical"] = "no stored turn shares a term with the query"
    return _episodic_candidates(ctx, "episodic_lexical",
                                ctx.episodic.lexical_search(ctx.query, depth, topic))


def mentions_user(codex: Codex, text: str) -> bool:
    """First-person words, or a name or alias of the user entity."""
    if set(words(text)) & FIRST_PERSON:
        return True
    return any((hit := codex.lookup(g)) and hit[0] == USER_ID for g in ngrams(text, 3))


def enumeration_category(text: str) -> str | None:
    """MERA's trigger: the category word of an enumeration question, singularised."""
    m = _ENUMERATION.search(text)
    if not m:
        return None
    word = next(g for g in m.groups() if g).lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def leg_graph(ctx: LegContext, depth: int) -> list[Candidate]:
    """Entity resolution, current-edge traversal to depth 3, MERA fallback."""
    cfg, codex = ctx.config, ctx.codex
    named = codex.find_entities(ctx.query, cfg.fuzzy_threshold)
    seeds = [eid for eid, _how in named]
    if mentions_user(codex, ctx.query):
        seeds.insert(0, USER_ID)
    history = bool(_HISTORY_CUES.search(ctx.query)) or ctx.cls.intent == "temporal"
    scope = ctx.conversation_id if cfg.graph_conversation_scope else None
    reached = codex.traverse(seeds, cfg.traversal_depth, scope) if seeds else {}
    ctx.idle["graph"] = ("the resolved entities have no current edges" if seeds
                         else "no entity of the query resolves in the graph")
    scored: list[tuple[float, str, Candidate]] = []
    named_ids = {eid for eid, _how in named}
    for eid, (hop, path) in reached.items():
        # A named entity may only be an object ("Tell me about Dune"): show who points at it.
        cand = _entity_candidate(ctx, eid, history=history, scope=scope,
                                 with_incoming=eid in named_ids)
        if cand is None:
            continue
        cand.base_score = 1.0 / (1 + hop)
        if cfg.fix.traversal_strength:
            # fix.traversal_strength: weak or doubtful paths rank lower.
            weights = [e.strength * e.confidence for e in path] or [1.0]
            cand.base_score *= min(weights)
        scored.append((-cand.base_score, codex.entity(eid)["name"].lower(), cand))
    mera_ids: list[str] = []
    category = enumeration_category(ctx.query)
    if not named and category:
        ctx.emit("mera", "eligible", params={"category": category})
        if not cfg.is_on("mera"):
            ctx.emit("mera", "skipped", reason="disabled")
        else:
            mera_ids = codex.enumerate_category(category, depth)
            ctx.emit("mera", "executed", count=len(mera_ids), ids=tuple(mera_ids),
                     reason=None if mera_ids else f"idle: no {category} entity in the graph",
                     params={"category": category})
    else:
        ctx.emit("mera", "ineligible",
                 reason="named entities found" if named else "no enumeration trigger")
    known = {c.id: c for _s, _n, c in scored}
    for n, eid in enumerate(mera_ids):
        cid = f"entity:{eid}"
        if cid in known:
            known[cid].mechanisms.add("mera")
            continue
        cand = _entity_candidate(ctx, eid, history=history, scope=scope, with_incoming=True)
        if cand is not None:
            cand.mechanisms.add("mera")
            cand.base_score = 0.5
            scored.append((-cand.base_score, f"~{n:05d}", cand))
    if mera_ids:
        hits = [c for _s, _n, c in scored if "mera" in c.mechanisms]
        if hits:
            ctx.emit("mera", "output", count=len(hits), ids=tuple(c.id for c in hits))
    scored.sort(key=lambda s: (s[0], s[1]))
    out = [c for _s, _n, c in scored][:depth]
    for rank, cand in enumerate(out, start=1):
        cand.legs = {"graph": rank}
    return out


def _entity_candidate(ctx: LegContext, eid: str, *, history: bool, scope: str | None,
                      with_incoming: bool = False) -> Candidate | None:
    cfg, codex = ctx.config, ctx.codex
    row = codex.entity(eid)
    edges = codex.outgoing(eid, limit=cfg.context_edges, history=history, conv_scope=scope)
    incoming = []
    if with_incoming:
        for e in codex.incoming(eid, cfg.context_edges):
            src = codex.entity(e.src)
            incoming.append((src["name"] if src else e.src, e))
    if not edges and not incoming:
        return None
    shown = [*edges, *(e for _n, e in incoming)]
    return Candidate(
        id=f"entity:{eid}", source_type="graph",
        text=render_entity(row["name"], row["type"], edges, incoming),
        conversation_id=None,
        source_turn_ids=tuple(dict.fromkeys(e.source_turn for e in shown)),
        confident=any(e.confidence >= cfg.confidence_flag_threshold for e in shown),
    )


def leg_procedural(ctx: LegContext, depth: int) -> list[Candidate]:
    ids = ctx.procedures.search(ctx.query, ctx.qvec, depth, ctx.config.procedural_trigger_cosine,
                                wrong_field=ctx.config.seed_defects.procedural_leg)
    if not ctx.config.seed_defects.procedural_leg:
        # The defective path cannot know it missed; only the correct one may say "nothing matched".
        ctx.idle["procedural"] = "no active pattern's trigger matches the query"
    out = []
    for rank, pid in enumerate(ids, start=1):
        p = ctx.procedures.get(pid)
        out.append(Candidate(id=f"proc:{pid}", source_type="procedural", text=p.render(),
                             conversation_id=None, source_turn_ids=p.source_turns,
                             strength=p.strength, legs={"procedural": rank}))
    return out


def leg_document(ctx: LegContext, depth: int) -> list[Candidate]:
    ids = ctx.documents.search(ctx.query, ctx.qvec, depth, ctx.config.rrf_k,
                               wrong_key=ctx.config.seed_defects.document_leg)
    if not ctx.config.seed_defects.document_leg:
        ctx.idle["document"] = "no document chunk matches the query"
    out = []
    for rank, cid in enumerate(ids, start=1):
        chunk = ctx.documents.get(cid)
        out.append(Candidate(id=f"doc:{cid}", source_type="document", text=chunk.render(),
                             conversation_id=None, source_turn_ids=(),
                             legs={"document": rank}))
    return out


def leg_summary(ctx: LegContext, depth: int) -> list[Candidate]:
    out = []
    for rank, sid in enumerate(ctx.summaries.search(ctx.qvec, depth), start=1):
        s = ctx.summaries.get(sid)
        out.append(Candidate(id=f"summary:{sid}", source_type="summary", text=s.render(),
                             conversation_id=s.conversation_id, source_turn_ids=s.source_turns,
                             legs={"summary": rank}))
    return out


LEG_FUNCTIONS = {
    "episodic_vector": leg_episodic_vector,
    "episodic_lexical": leg_episodic_lexical,
    "graph": leg_graph,
    "procedural": leg_procedural,
    "document": leg_document,
    "summary": leg_summary,
}


def store_has_content(ctx: LegContext, leg: str) -> bool:
    if leg in ("episodic_vector", "episodic_lexical"):
        return ctx.episodic.count() > 0
    if leg == "graph":
        return not ctx.codex.is_empty()
    if leg == "procedural":
        return ctx.procedures.count_active() > 0
    if leg == "document":
        return ctx.documents.count() > 0
    return ctx.summaries.count() > 0


def run_legs(ctx: LegContext, weights: dict[str, float]) -> dict[str, list[Candidate]]:
    """Run every eligible leg; report eligible / executed / output / error per leg."""
    results: dict[str, list[Candidate]] = {}
    for leg, fn in LEG_FUNCTIONS.items():
        name = f"leg.{leg}"
        if not ctx.config.is_on(name):
            ctx.emit(name, "skipped", reason="disabled")
            continue
        reason = None
        if ctx.cls.reliance == "none":
            reason = "context_reliance=none"
        elif weights.get(leg, 0.0) <= 0:
            reason = f"weight 0 for intent {ctx.cls.intent}"
        elif not store_has_content(ctx, leg):
            reason = "store empty"
        if reason:
            ctx.emit(name, "ineligible", reason=reason)
            continue
        depth = ctx.config.leg_depths[leg]
        ctx.emit(name, "eligible", params={"weight": weights[leg], "depth": depth})
        try:
            cands = fn(ctx, depth)
        except Exception as exc:  # a failing leg is reported, not fatal (audit: defective)
            ctx.emit(name, "error", reason=f"{type(exc).__name__}: {exc}")
            continue
        idle = f"idle: {ctx.idle[leg]}" if not cands and leg in ctx.idle else None
        ctx.emit(name, "executed", count=len(cands), reason=idle, params={"depth": depth})
        if cands:
            ctx.emit(name, "output", count=len(cands), ids=tuple(c.id for c in cands),
                     source_turn_ids=_turns(cands))
        results[leg] = cands
    return results


def _turns(cands: list[Candidate]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for c in cands for t in c.source_turn_ids))
