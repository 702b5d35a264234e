"""Explicit tools: schemas, search (`memoire_chercher`) and read (`memoire_lire`).

Both work in every initialised context and both phases, over the shared cache. Their date
filters differ by branch, as in the seed:

- search drops future-dated facts but keeps expired prospective ones (E-5) unless
  `fix.search_expiry_filter`;
- read drops future-dated facts from the subject's sections, but its neighbour trail and its
  newest-neighbour fallback apply no date filter (E-4) unless `fix.trail_date_filter`.

Privacy labels are returned as metadata only; nothing is withheld (E-15) unless
`fix.enforce_privacy`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cache import Memoire
from .events import Emitter
from .pages import Fact
from .recall import is_expired, is_future, withheld
from .settings import Settings
from .text import fold, query_terms

NOTE_TOOL = "memoire_noter"
SEARCH_TOOL = "memoire_chercher"
READ_TOOL = "memoire_lire"

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": NOTE_TOOL,
        "description": "Record a note in long-term memory (facts, preferences, corrections). "
                       "Never pass secrets; keep confidential content in the conversation.",
        "parameters": {"type": "object", "properties": {
            "texte": {"type": "string", "description": "The note, self-contained."},
            "confidentialite": {"type": "string", "enum": ["normal", "private", "confidential"]},
            "noeud": {"type": "string", "description": "Subject the note is about, if known."},
        }, "required": ["texte"]},
    },
    {
        "name": SEARCH_TOOL,
        "description": "Search long-term memory for facts matching a query.",
        "parameters": {"type": "object", "properties": {
            "requete": {"type": "string"},
            "limite": {"type": "integer", "minimum": 1, "maximum": 50},
        }, "required": ["requete"]},
    },
    {
        "name": READ_TOOL,
        "description": "Read a subject page from long-term memory, with trails to linked subjects.",
        "parameters": {"type": "object", "properties": {
            "sujet": {"type": "string"},
            "section": {"type": "string"},
        }, "required": ["sujet"]},
    },
]


def fact_view(memoire: Memoire, fact: Fact, score: float | None = None) -> dict[str, Any]:
    slug = memoire.facts[fact.id][0]
    view = {"id": fact.id, "noeud": memoire.pages[slug].name, "section": fact.section, "fait": fact.text,
            "date": fact.shown_date, "refs": list(fact.refs), "type": fact.type}
    if fact.superseded_by:
        view["remplace_par"] = fact.superseded_by
    if score is not None:
        view["score"] = round(score, 4)
    return view


def search(memoire: Memoire, args: dict[str, Any], now: datetime, settings: Settings,
           emit: Emitter) -> dict[str, Any]:
    """BM25 pool, concept credit, future filter, trails."""
    terms = query_terms(str(args.get("requete", "")))
    limit = max(1, min(int(args.get("limite") or settings.search_limit), settings.search_pool))
    today = now.date().isoformat()
    scores = dict(memoire.bm25(terms, settings.search_pool))
    concepts = {c for slug in memoire.pages for c in memoire.pages[slug].concepts
                if set(query_terms(c)) & set(terms)}
    if concepts:
        for fid, (_slug, fact) in memoire.facts.items():
            if concepts & set(fact.concepts):
                scores[fid] = scores.get(fid, 0.0) + settings.concept_credit
    filtered = {"future": 0, "expired": 0, "privacy": 0}
    results: list[tuple[float, str]] = []
    for fid, score in scores.items():
        fact = memoire.facts[fid][1]
        if is_future(fact, today):
            filtered["future"] += 1
        elif settings.fix.search_expiry_filter and is_expired(fact, today):
            filtered["expired"] += 1
        elif withheld(fact, settings):
            filtered["privacy"] += 1
        else:
            results.append((score, fid))
    results.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen = [fact_view(memoire, memoire.facts[fid][1], score) for score, fid in results[:limit]]
    nodes = sorted({memoire.facts[v["id"]][0] for v in chosen})
    trails = [{"noeud": memoire.pages[s].name,
               "voisins": [memoire.pages[n].name for n, _ in memoire.neighbours_of(s)[:3]]} for s in nodes]
    expired = sum(1 for v in chosen if is_expired(memoire.facts[v["id"]][1], today))  # E-5, as observed
    emit("tool.search", "output" if chosen else "executed", count=len(chosen), ids=[v["id"] for v in chosen],
         refs=[r for v in chosen for r in v["refs"]], params={"filtered": filtered, "concepts": sorted(concepts),
                                                              "expired_returned": expired})
    return {"faits": chosen, "pistes": trails}


def read(memoire: Memoire, args: dict[str, Any], now: datetime, settings: Settings,
         emit: Emitter) -> dict[str, Any]:
    """Sections of the resolved subject, neighbour trails, and the newest-neighbour fallback."""
    subject = str(args.get("sujet", ""))
    wanted = args.get("section")
    today = now.date().isoformat()
    trail_ok = (lambda f: not is_future(f, today)) if settings.fix.trail_date_filter else (lambda f: True)
    slug = memoire.resolve(subject)
    if slug is None:
        near = sorted({n for t in query_terms(subject) for n in memoire.nodes_with(t)})
        fallback = _newest(memoire, near, settings, trail_ok)
        _emit_read(emit, [], [], fallback, "unresolved", _future(memoire, fallback, today))
        return {"error": "sujet introuvable", "sujet": subject, "repli": fallback}
    page = memoire.pages[slug]
    sections: dict[str, list[dict[str, Any]]] = {}
    for name, facts in page.sections().items():
        if wanted and fold(name) != fold(str(wanted)):
            continue
        kept = [fact_view(memoire, f) for f in facts if not is_future(f, today) and not withheld(f, settings)]
        if kept:
            sections[name] = kept
    neighbours = [n for n, _ in memoire.neighbours_of(slug)]
    trails = []
    for other in neighbours[:3]:
        proofs = set(memoire.edges.get(tuple(sorted((slug, other))), []))
        facts = [f for f in memoire.pages[other].facts if trail_ok(f) and not withheld(f, settings)]
        facts.sort(key=lambda f: (f.id not in proofs, -_day_number(f), f.id))
        trails.append({"noeud": memoire.pages[other].name,
                       "faits": [fact_view(memoire, f) for f in facts[: settings.trail_facts_per_neighbour]]})
    fallback = _newest(memoire, neighbours, settings, trail_ok) if not sections else []
    trail_views = [v for t in trails for v in t["faits"]]
    _emit_read(emit, [v for vs in sections.values() for v in vs], trail_views, fallback, "resolved",
               _future(memoire, trail_views + fallback, today))
    return {"sujet": page.name, "resume": page.summary, "sections": sections, "pistes": trails, "repli": fallback}


def _newest(memoire: Memoire, slugs: list[str], settings: Settings, keep) -> list[dict[str, Any]]:
    facts = [f for s in slugs for f in memoire.pages[s].facts if keep(f) and not withheld(f, settings)]
    facts.sort(key=lambda f: (-_day_number(f), f.id))
    return [fact_view(memoire, f) for f in facts[: settings.fallback_facts]]


def _day_number(fact: Fact) -> int:
    day = fact.shown_date or "0000-00-00"
    return int(day.replace("-", ""))


def _future(memoire: Memoire, views: list[dict[str, Any]], today: str) -> int:
    """How many of these returned facts are dated after the clock (E-4, as observed)."""
    return sum(1 for v in views if is_future(memoire.facts[v["id"]][1], today))


def _emit_read(emit: Emitter, sections: list[dict], trail: list[dict], fallback: list[dict], how: str,
               future: int) -> None:
    views = sections + trail + fallback
    emit("tool.read", "output" if views else "executed", count=len(views), ids=[v["id"] for v in views],
         refs=[r for v in views for r in v["refs"]], reason=how,
         params={"sections": len(sections), "trail": len(trail), "fallback": len(fallback),
                 "future_in_trail_or_fallback": future})
