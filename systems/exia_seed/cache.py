"""The shared recall cache (`Memoire`): pages, facts, edges, aliases and an in-memory FTS5 index.

Automatic recall, search and read share one `RecallCache`. It rebuilds only when
`graphe/aretes.json`'s modification time changes (SEED): a page-only change, such as a summary
refresh, leaves it stale (E-10). `fix.cache_key_pages` adds the pages' bytes to the key;
switching the `recall.cache` mechanism off rebuilds on every use.
"""

from __future__ import annotations

import difflib
import hashlib
import sqlite3

from .events import Emitter
from .files import MemoryPaths
from .graph import load_edges
from .pages import Fact, Page, load_pages
from .settings import Settings
from .text import fold


class Memoire:
    """A read-only view of the memory, built once per cache key."""

    def __init__(self, paths: MemoryPaths) -> None:
        self.pages: dict[str, Page] = load_pages(paths.fiches)
        self.facts: dict[str, tuple[str, Fact]] = {
            f.id: (slug, f) for slug, page in self.pages.items() for f in page.facts
        }
        self.names: dict[str, str] = {}
        for slug, page in self.pages.items():
            for name in page.names():
                self.names.setdefault(fold(name), slug)
        self.edges = {(e["a"], e["b"]): list(e["preuves"]) for e in load_edges(paths)
                      if e["a"] in self.pages and e["b"] in self.pages}
        heaviest = max((len(p) for p in self.edges.values()), default=1)
        self.neighbours: dict[str, dict[str, float]] = {slug: {} for slug in self.pages}
        for (a, b), proofs in self.edges.items():
            weight = len(proofs) / heaviest
            self.neighbours[a][b] = weight
            self.neighbours[b][a] = weight
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        tokenizer = "tokenize='unicode61 remove_diacritics 2'"
        self.db.execute(f"CREATE VIRTUAL TABLE faits USING fts5(fid UNINDEXED, node UNINDEXED, texte, {tokenizer})")
        self.db.execute(f"CREATE VIRTUAL TABLE noms USING fts5(node UNINDEXED, libelles, {tokenizer})")
        self.db.executemany("INSERT INTO faits VALUES (?, ?, ?)",
                            [(fid, slug, f.text) for fid, (slug, f) in self.facts.items()])
        self.db.executemany("INSERT INTO noms VALUES (?, ?)",
                            [(slug, " ; ".join(p.names())) for slug, p in self.pages.items()])

    def nodes_with(self, term: str) -> set[str]:
        """Pages whose name, aliases or facts contain the term."""
        query = _fts_or([term])
        rows = self.db.execute("SELECT node FROM faits WHERE faits MATCH ?", (query,)).fetchall()
        rows += self.db.execute("SELECT node FROM noms WHERE noms MATCH ?", (query,)).fetchall()
        return {r[0] for r in rows}

    def bm25(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Top facts for any of the terms, best first, as (fact id, positive score)."""
        if not terms:
            return []
        rows = self.db.execute(
            "SELECT fid, bm25(faits) FROM faits WHERE faits MATCH ? ORDER BY bm25(faits), fid LIMIT ?",
            (_fts_or(terms), limit),
        ).fetchall()
        return [(fid, -score) for fid, score in rows]

    def neighbours_of(self, slug: str) -> list[tuple[str, float]]:
        return sorted(self.neighbours.get(slug, {}).items(), key=lambda kv: (-kv[1], kv[0]))

    def resolve(self, subject: str) -> str | None:
        """A page by slug, exact name or alias, else by the closest name (difflib, cutoff 0.75)."""
        if subject in self.pages:
            return subject
        key = fold(subject)
        if key in self.names:
            return self.names[key]
        close = difflib.get_close_matches(key, sorted(self.names), n=1, cutoff=0.75)
        return self.names[close[0]] if close else None


def _fts_or(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


class RecallCache:
    """Holds one `Memoire` and decides when to rebuild it."""

    def __init__(self, paths: MemoryPaths, settings: Settings, emit: Emitter) -> None:
        self.paths = paths
        self.settings = settings
        self.emit = emit
        self.memoire: Memoire | None = None
        self.key: tuple | None = None

    def current_key(self) -> tuple:
        mtime = self.paths.aretes.stat().st_mtime_ns if self.paths.aretes.exists() else None
        if not self.settings.fix.cache_key_pages:
            return (mtime,)
        digest = hashlib.sha256()
        for page in sorted(self.paths.fiches.glob("*.md")):
            digest.update(page.name.encode() + b"\0" + page.read_bytes())
        return (mtime, digest.hexdigest())

    def get(self) -> Memoire:
        key = self.current_key()
        self.emit("recall.cache", "eligible")
        if self.memoire is not None and key == self.key and self.settings.on("recall.cache"):
            self.emit("recall.cache", "executed", reason="reused")
        else:
            self.memoire, self.key = Memoire(self.paths), key
            self.emit("recall.cache", "executed", reason="rebuilt", count=len(self.memoire.facts))
        return self.memoire

    def drop(self) -> None:
        self.memoire, self.key = None, None
