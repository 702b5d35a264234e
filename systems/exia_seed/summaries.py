"""Identity summaries ("what it is, before the details") and the summary-refresh maintenance.

One model pass per page over bounded excerpts: fact lines are added while
`len(line) + 3 <= remaining` (SEED rule). A summary naming a name, number or path absent from
the page, or longer than `summary_max_chars`, is vetoed and the old summary stays.

The refresh writer (`fiches --ecrire`) takes no lock and rebuilds neither the graph nor the
index (SEED, E-10/E-16); `fix.summary_lock` makes it take the lock and rebuild both.

E-16 detector: before writing a page, the writer rereads it; if another writer (a consolidation)
changed the file since this pass read it, writing would overwrite that change. The write still
happens (the seed's behaviour) but is reported as an `error` of the refresh with the fact ids it
erased, so a lost write is never silent. `concurrent`, when given, runs between the pass's read
and its writes: the deterministic interleaving of the seed's race (`fiches --ecrire` while a
consolidation runs).
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
from .text import capitalised_names, digit_groups, fold, fold_joined

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
    # The page's text is folded, and its numbers read, only when the summary has names or numbers.
    page_text = None
    for name in capitalised_names(summary):
        if page_text is None:
            page_text = fold_joined([page.name, *page.aliases, *(f.text for f in page.facts)])
        if fold(name) not in page_text:
            return f"nom absent de la fiche: {name}"
    numbers = digit_groups(summary)
    if numbers and page_text is None:
        page_text = fold_joined([page.name, *page.aliases, *(f.text for f in page.facts)])
    missing = numbers - digit_groups(page_text) if numbers else set()
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
    *, write: bool = True, all_pages: bool = False, concurrent: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """`fiches [--ecrire] [--toutes]`: summaries for stale or missing pages (all with `all_pages`)."""
    emit("maintenance.refresh_summaries", "eligible", params={"write": write, "all": all_pages,
                                                              "lock": settings.fix.summary_lock})
    if not settings.fix.summary_lock:
        return _refresh(paths, settings, complete, emit, now, write, all_pages, rebuild=False, concurrent=concurrent)
    try:
        with file_lock(paths.lock, blocking=False):
            return _refresh(paths, settings, complete, emit, now, write, all_pages, rebuild=True,
                            concurrent=concurrent)
    except LockBusy:
        emit("maintenance.refresh_summaries", "skipped", reason="verrou occupé")
        return {"statut": "verrou occupé"}


def _refresh(
    paths: MemoryPaths, settings: Settings, complete: Complete, emit: Emitter, now: datetime,
    write: bool, all_pages: bool, rebuild: bool, concurrent: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    pages = load_pages(paths.fiches)
    read = {slug: _disk_text(paths, slug) for slug in pages}  # what this pass read, for the E-16 detector
    chosen = [p for p in pages.values() if all_pages or not p.summary or p.summary_of != p.hash]
    proposed: dict[str, str] = {}
    for page in chosen:
        if summarise(page, complete, settings, emit):
            proposed[page.slug] = page.summary
    if concurrent is not None:
        concurrent()
    lost: dict[str, list[str]] = {}
    if write:
        for slug in proposed:
            overwritten = _overwritten_facts(paths, pages[slug], read[slug])
            if overwritten is not None:
                lost[slug] = overwritten
                emit("maintenance.refresh_summaries", "error", ids=overwritten,
                     params={"page": slug, "lost_facts": len(overwritten)},
                     reason=f"E-16: écriture concurrente écrasée sur {slug} ({len(overwritten)} fait(s) perdu(s))")
            pages[slug].write(paths.fiches)
    if write and rebuild:
        write_index(paths, pages)
        write_graph(paths, pages, now)
    emit("maintenance.refresh_summaries", "executed", count=len(proposed), ids=sorted(proposed))
    return {"statut": "ok", "propositions": proposed, "ecrit": write, "ecrasements": lost}


def _disk_text(paths: MemoryPaths, slug: str) -> str | None:
    path = paths.fiches / f"{slug}.md"
    return path.read_text(encoding="utf-8") if path.exists() else None


def _overwritten_facts(paths: MemoryPaths, page: Page, read: str | None) -> list[str] | None:
    """None when the page file is as this pass read it; else the fact ids on disk the write erases."""
    now_text = _disk_text(paths, page.slug)
    if now_text == read or now_text is None:
        return None
    mine = {f.id for f in page.facts}
    return sorted(f.id for f in Page.read(paths.fiches / f"{page.slug}.md").facts if f.id not in mine)


def _parse(reply: str) -> dict[str, Any]:
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("réponse de résumé non conforme")
    return data
