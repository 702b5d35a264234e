"""Identity summaries ("what it is, before the details") and the summary-refresh maintenance.

One model pass per page over bounded excerpts: fact lines are added while
`len(line) + 3 <= remaining` (SEED rule). A summary naming a name, number or path absent from
the page, or longer than `summary_max_chars`, is vetoed and the old summary stays.

The refresh writer (`fiches --ecrire`) takes no lock and rebuilds neither the graph nor the
index (SEED, E-10/E-16); `fix.summary_lock` makes it take the lock and rebuild both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from .events import Emitter
from .files import LockBusy, MemoryPaths, file_lock
from .graph import write_graph, write_index
from .pages import Page, load_pages
from .prompts import summary_messages
from .settings import Settings
from .text import capitalised_names, digit_groups, fold

Complete = Callable[[Sequence[dict[str, str]]], str]
_PATH = re.compile(r"[\w.\-]+/[\w.\-/]+|\b[\w\-]+\.(?:md|json|py|txt)\b|[A-Za-z]:\\")


def excerpt(page: Page, budget: int) -> tuple[list[str], list[str]]:
    """Fact lines (procedural first) that fit the excerpt budget, and their fact ids."""
    lines: list[str] = []
    ids: list[str] = []
    remaining = budget
    for facts in page.sections().values():
        for fact in facts:
            line = f"- {fact.text}"
            if len(line) + 3 > remaining:
                return lines, ids
            lines.append(line)
            ids.append(fact.id)
            remaining -= len(line) + 3
    return lines, ids


def veto(summary: str, page: Page, settings: Settings) -> str | None:
    """Why a proposed summary is refused, or None."""
    if not summary.strip():
        return "résumé vide"
    if len(summary) > settings.summary_max_chars:
        return "résumé trop long"
    page_text = fold(" ".join([page.name, *page.aliases, *(f.text for f in page.facts)]))
    for name in capitalised_names(summary):
        if fold(name) not in page_text:
            return f"nom absent de la fiche: {name}"
    missing = digit_groups(summary) - digit_groups(page_text)
    if missing:
        return f"nombre absent de la fiche: {sorted(missing)[0]}"
    if _PATH.search(summary):
        return "chemin dans le résumé"
    return None


def summarise(page: Page, complete: Complete, settings: Settings, emit: Emitter) -> bool:
    """Propose, control and set a page's summary; return whether it changed."""
    lines, ids = excerpt(page, settings.summary_excerpt_chars)
    if not lines:
        return False
    try:
        reply = _parse(complete(summary_messages(settings.language, page.name, lines)))
    except Exception as exc:  # a failed pass keeps the older summary (SEED)
        emit("summaries", "error", reason=str(exc)[:200], ids=[page.slug])
        return False
    summary = " ".join(str(reply.get("resume", "")).split())
    reason = veto(summary, page, settings)
    if reason:
        emit("summaries", "skipped", reason=reason, ids=[page.slug])
        return False
    keywords = [str(k) for k in reply.get("mots_cles", []) if isinstance(k, str | int)][:8]
    changed = (summary, keywords) != (page.summary, page.keywords)
    page.summary, page.keywords = summary, keywords
    page.summary_sources, page.summary_of = ids, page.hash
    emit("summaries", "output", ids=[page.slug], count=1, params={"changed": changed})
    return changed


def refresh_summaries(
    paths: MemoryPaths, settings: Settings, complete: Complete, emit: Emitter, now: datetime,
    *, write: bool = True, all_pages: bool = False,
) -> dict[str, Any]:
    """`fiches [--ecrire] [--toutes]`: summaries for stale or missing pages (all with `all_pages`)."""
    emit("maintenance.refresh_summaries", "eligible", params={"write": write, "all": all_pages,
                                                              "lock": settings.fix.summary_lock})
    if not settings.fix.summary_lock:
        return _refresh(paths, settings, complete, emit, now, write, all_pages, rebuild=False)
    try:
        with file_lock(paths.lock, blocking=False):
            return _refresh(paths, settings, complete, emit, now, write, all_pages, rebuild=True)
    except LockBusy:
        emit("maintenance.refresh_summaries", "skipped", reason="verrou occupé")
        return {"statut": "verrou occupé"}


def _refresh(
    paths: MemoryPaths, settings: Settings, complete: Complete, emit: Emitter, now: datetime,
    write: bool, all_pages: bool, rebuild: bool,
) -> dict[str, Any]:
    pages = load_pages(paths.fiches)
    chosen = [p for p in pages.values() if all_pages or not p.summary or p.summary_of != p.hash]
    proposed: dict[str, str] = {}
    for page in chosen:
        if summarise(page, complete, settings, emit):
            proposed[page.slug] = page.summary
            if write:
                page.write(paths.fiches)
    if write and rebuild:
        write_index(paths, pages)
        write_graph(paths, pages, now)
    emit("maintenance.refresh_summaries", "executed", count=len(proposed), ids=sorted(proposed))
    return {"statut": "ok", "propositions": proposed, "ecrit": write}


def _parse(reply: str) -> dict[str, Any]:
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("réponse de résumé non conforme")
    return data
