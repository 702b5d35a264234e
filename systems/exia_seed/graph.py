"""The subject graph (`graphe/aretes.json`) and the page index (`index.md`), regenerated from pages.

An edge links two pages when a fact on one names the other (name or alias, whole words), or
when facts on both cite the same source line. Its proofs are the supporting fact ids.

The recall cache is keyed on this file's modification time (SEED). So that the key is
deterministic and never comes from the wall clock, each regeneration stamps the file's mtime
with the simulated time plus a generation counter, which strictly increases.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

from .files import MemoryPaths, read_json, write_json
from .pages import Page
from .text import fold


def build_edges(pages: dict[str, Page]) -> list[dict]:
    """Undirected edges `{a, b, preuves}` with `a < b`, sorted."""
    proofs: dict[tuple[str, str], set[str]] = {}
    patterns = {
        slug: [re.compile(rf"\b{re.escape(fold(n))}\b") for n in page.names() if len(fold(n)) >= 3]
        for slug, page in pages.items()
    }
    by_ref: dict[str, set[tuple[str, str]]] = {}
    for slug, page in pages.items():
        for fact in page.facts:
            text = fold(fact.text)
            for other, pats in patterns.items():
                if other != slug and any(p.search(text) for p in pats):
                    proofs.setdefault(tuple(sorted((slug, other))), set()).add(fact.id)
            for ref in fact.refs:
                by_ref.setdefault(ref, set()).add((slug, fact.id))
    for holders in by_ref.values():
        for a_slug, a_fact in holders:
            for b_slug, b_fact in holders:
                if a_slug < b_slug:
                    proofs.setdefault((a_slug, b_slug), set()).update({a_fact, b_fact})
    return [{"a": a, "b": b, "preuves": sorted(ids)} for (a, b), ids in sorted(proofs.items())]


def write_graph(paths: MemoryPaths, pages: dict[str, Page], now: datetime) -> int:
    """Regenerate `aretes.json`; return the number of edges."""
    previous = read_json(paths.aretes, {"generation": 0})
    generation = int(previous.get("generation", 0)) + 1
    edges = build_edges(pages)
    write_json(paths.aretes, {"generation": generation, "genere_le": now.isoformat(), "aretes": edges})
    aware = now if now.tzinfo else now.replace(tzinfo=UTC)
    stamp = int(aware.timestamp()) * 1_000_000_000 + generation
    os.utime(paths.aretes, ns=(stamp, stamp))
    return len(edges)


def load_edges(paths: MemoryPaths) -> list[dict]:
    return list(read_json(paths.aretes, {"aretes": []})["aretes"])


def write_index(paths: MemoryPaths, pages: dict[str, Page]) -> None:
    lines = ["# Index", ""]
    for slug, page in pages.items():
        summary = f" — {page.summary}" if page.summary else ""
        lines.append(f"- [{page.name}](fiches/{slug}.md){summary} ({len(page.facts)} faits)")
    paths.index.write_text("\n".join(lines) + "\n", encoding="utf-8")
