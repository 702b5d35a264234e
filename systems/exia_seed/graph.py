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
from .pages import Fact, Page, fact_edits, picked
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


class EdgeBuilder:
    """`build_edges`, kept up to date from one call to the next instead of recomputed.

    It holds each fact's contribution (the other pages it names, the source lines it cites) by
    page and fact object, and the proofs as counts. A call compares the pages' facts with the
    ones it holds (by object; and by text and refs when any fact field was assigned since):
    contributions of facts gone are taken away, new facts are matched against every page's names
    and paired with the other holders of their sources; a page whose names changed is matched
    against every fact again. Only the pairs whose proofs changed are sorted again.
    `tests/systems/exia_seed/test_exia_page_model.py` compares it with `build_edges` on random
    page histories (facts added and removed, aliases, new and deleted pages, shared sources).
    """

    def __init__(self) -> None:
        self._facts: dict[tuple[str, int], tuple[Fact, str, list[str], set[str]]] = {}
        """(slug, id(fact)) -> (fact, its text and refs when counted, the other pages it names)."""
        self._names: dict[str, tuple[str, ...]] = {}
        self._patterns: dict[str, list[re.Pattern[str]]] = {}
        self._proofs: dict[tuple[str, str], dict[str, int]] = {}
        self._holders: dict[str, dict[tuple[str, str], int]] = {}
        self._sorted: dict[tuple[str, str], list[str]] = {}
        self._ids: dict[str, set[int]] = {}
        """Per page, the ids of the fact objects counted."""
        self._edits = fact_edits()

    def build(self, pages: dict[str, Page]) -> list[dict]:
        names = {slug: tuple(fold(n) for n in page.names() if len(fold(n)) >= 3) for slug, page in pages.items()}
        renamed = {s for s in names.keys() | self._names.keys() if names.get(s) != self._names.get(s)}
        for slug in renamed:
            self._names.pop(slug, None)
            self._patterns.pop(slug, None)
            if slug in names:
                self._names[slug] = names[slug]
                self._patterns[slug] = [re.compile(rf"\b{re.escape(n)}\b") for n in names[slug]]
        # Facts in and out, page by page, by object (set differences over ids, in C); a fact
        # whose text or refs were assigned since it was counted is out and in again.
        held = self._facts
        added: list[tuple[tuple[str, int], Fact]] = []
        gone: list[tuple[str, int]] = []
        for slug in self._ids.keys() - pages.keys():
            gone += [(slug, i) for i in self._ids.pop(slug)]
        for slug, page in pages.items():
            ids = set(map(id, page.facts))
            before = self._ids.get(slug, set())
            if ids != before:
                gone += [(slug, i) for i in before - ids]
                new = ids - before
                added += [((slug, id(f)), f) for f in picked(page.facts, new)]
                self._ids[slug] = ids
        edits = fact_edits()
        if edits != self._edits:
            self._edits = edits
            for key, (fact, text, refs, _m) in held.items():
                if fact.text is not text or fact.refs is not refs:
                    gone.append(key)
                    if key[1] in self._ids.get(key[0], ()):  # still on its page
                        added.append((key, fact))
        for key in dict.fromkeys(gone):
            if key in held:
                self._remove(key)
        if renamed:
            for (slug, _i), (fact, _t, _r, mentions) in held.items():
                text = fold(fact.text)
                for other in renamed:
                    now = other != slug and other in self._patterns and any(
                        p.search(text) for p in self._patterns[other])
                    if now != (other in mentions):
                        self._mention(slug, other, fact.id, 1 if now else -1)
                        if now:
                            mentions.add(other)
                        else:
                            mentions.discard(other)
        for key, fact in added:
            if key not in held:
                self._add(key, fact)
        for pair in [p for p, ids in self._proofs.items() if not ids]:
            del self._proofs[pair]
        out = []
        for pair in sorted(self._proofs):
            ids = self._sorted.get(pair)
            if ids is None:
                ids = self._sorted[pair] = sorted(self._proofs[pair])
            out.append({"a": pair[0], "b": pair[1], "preuves": ids})
        return out

    def _mention(self, slug: str, other: str, fid: str, delta: int) -> None:
        self._count(tuple(sorted((slug, other))), fid, delta)

    def _count(self, pair: tuple[str, str], fid: str, delta: int) -> None:
        ids = self._proofs.setdefault(pair, {})
        n = ids.get(fid, 0) + delta
        if n:
            ids[fid] = n
        else:
            del ids[fid]
        self._sorted.pop(pair, None)

    def _add(self, key: tuple[str, int], fact: Fact) -> None:
        slug = key[0]
        text = fold(fact.text)
        mentions = {other for other, pats in self._patterns.items()
                    if other != slug and any(p.search(text) for p in pats)}
        for other in mentions:
            self._mention(slug, other, fact.id, 1)
        for ref in fact.refs:
            holders = self._holders.setdefault(ref, {})
            me = (slug, fact.id)
            if holders.get(me, 0) == 0:
                for (other, other_fid), _n in holders.items():
                    if other != slug:
                        pair = tuple(sorted((slug, other)))
                        self._count(pair, fact.id, 1)
                        self._count(pair, other_fid, 1)
            holders[me] = holders.get(me, 0) + 1
        self._facts[key] = (fact, fact.text, fact.refs, mentions)

    def _remove(self, key: tuple[str, int]) -> None:
        fact, _text, refs, mentions = self._facts.pop(key)
        slug, fid = key[0], fact.id
        for other in mentions:
            self._mention(slug, other, fid, -1)
        for ref in refs:
            holders = self._holders[ref]
            me = (slug, fid)
            holders[me] -= 1
            if holders[me] == 0:
                del holders[me]
                for (other, other_fid), _n in holders.items():
                    if other != slug:
                        pair = tuple(sorted((slug, other)))
                        self._count(pair, fid, -1)
                        self._count(pair, other_fid, -1)
            if not holders:
                del self._holders[ref]


def write_graph(paths: MemoryPaths, pages: dict[str, Page], now: datetime,
                builder: EdgeBuilder | None = None) -> int:
    """Regenerate `aretes.json`; return the number of edges. `builder`: `build_edges` kept up to date."""
    previous = read_json(paths.aretes, {"generation": 0})
    generation = int(previous.get("generation", 0)) + 1
    edges = builder.build(pages) if builder is not None else build_edges(pages)
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
