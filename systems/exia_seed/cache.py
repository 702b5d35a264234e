"""The shared recall cache (`Memoire`): pages, facts, edges, aliases and an in-memory FTS5 index.

Automatic recall, search and read share one `RecallCache`. It rebuilds only when
`graphe/aretes.json`'s modification time changes (SEED): a page-only change, such as a summary
refresh, leaves it stale (E-10). `fix.cache_key_pages` adds the pages' bytes to the key;
switching the `recall.cache` mechanism off rebuilds on every use.

A rebuild starts from the previous `Memoire` when there is one (`previous=`): pages whose parsed
object is the same (`PageReader` returns the same object for an unchanged file) keep their
facts, index rows and recall index; a changed page's facts are compared by object (the reader
shares unchanged lines' facts), and only removed and added facts leave or enter the FTS5 table
and the recall index. The new `Memoire` takes the previous one's FTS5 connection; the previous
one, should it be used again (a host restoring a snapshot hands it back), rebuilds its own from
its pages. `tests/systems/exia_seed/test_exia_page_model.py` compares derived and fresh ones.

`nodes_with(term)` (the recall seeds) is `SELECT DISTINCT node FROM faits WHERE faits MATCH
'"term"'` (`nodes_with_plain`), which steps over every fact holding the term. Beside the table,
`Postings` keeps, per token, how many rows of each page hold it; the tokens are FTS5's own (each
row's text goes once through a scratch FTS5 table with the same tokenizer and is read back from
its `fts5vocab`), so a one-token phrase matches exactly the rows holding that token, and the pages
come from the counts. A term FTS5 reads as several tokens (or none) goes to the table as before.
`tests/systems/exia_seed/test_exia_postings.py` compares both on random and real-shaped texts.
"""

from __future__ import annotations

import difflib
import hashlib
import heapq
import math
import sqlite3
import threading

from .events import Emitter
from .files import MemoryPaths
from .graph import load_edges
from .pages import Fact, Page, PageReader, load_pages, picked
from .recall_index import PageIndex
from .settings import Settings
from .text import fold

TOKENIZER = "tokenize='unicode61 remove_diacritics 2'"
TERMS_KEPT = 50_000
"""Query terms whose tokens `Postings` keeps (then forgets them all and starts again)."""


class Postings:
    """Per FTS5 token, the number of `faits` rows of each page that hold it (see the module
    docstring). Every row written to or deleted from `faits` goes through `add`/`remove`."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        db.execute(f"CREATE VIRTUAL TABLE jetons USING fts5(texte, {TOKENIZER})")
        db.execute("CREATE VIRTUAL TABLE jetons_v USING fts5vocab(jetons, instance)")
        self.nodes: dict[str, dict[str, int]] = {}
        self.rows: dict[int, tuple[str, str, int, dict[str, int]]] = {}
        """Row id → (page, fact id, its token count, its tokens' counts)."""
        self.groups: dict[str, dict[tuple[int, int], set[int]]] = {}
        """Token → (count in the row, row's token count) → row ids: rows one BM25 term scores alike."""
        self.total = 0
        """Tokens in all rows (FTS5's column total size)."""
        self.scored = 0
        """Rows `top` scored (work counter)."""
        self.terms: dict[str, tuple[str, ...]] = {}
        """Query term → its tokens in order (a cache)."""
        self.tokenized = 0
        """Texts sent through the scratch table (work counter)."""
        self._lock = threading.Lock()
        """The scratch table holds one batch at a time (the cache is shared between threads)."""

    def tokens(self, texts: list[str]) -> list[list[str]]:
        """Each text's tokens in order, as FTS5 reads them."""
        out: list[list[tuple[int, str]]] = [[] for _ in texts]
        if not texts:
            return []
        self.tokenized += len(texts)
        with self._lock:
            self.db.executemany("INSERT INTO jetons (rowid, texte) VALUES (?, ?)", enumerate(texts, start=1))
            for term, doc, offset in self.db.execute("SELECT term, doc, offset FROM jetons_v"):
                out[doc - 1].append((offset, term))
            self.db.execute("DELETE FROM jetons")
        return [[t for _o, t in sorted(found)] for found in out]

    def add(self, rows: list[tuple[int, str, str, str]]) -> None:
        """Rows inserted into `faits`: (row id, fact id, page, text)."""
        for (row, fid, node, _text), found in zip(rows, self.tokens([r[3] for r in rows]), strict=True):
            tfs: dict[str, int] = {}
            for token in found:
                tfs[token] = tfs.get(token, 0) + 1
            size = len(found)
            self.rows[row] = (node, fid, size, tfs)
            self.total += size
            for token, tf in tfs.items():
                counts = self.nodes.setdefault(token, {})
                counts[node] = counts.get(node, 0) + 1
                self.groups.setdefault(token, {}).setdefault((tf, size), set()).add(row)

    def remove(self, row: int) -> None:
        """A row deleted from `faits`."""
        node, _fid, size, tfs = self.rows.pop(row)
        self.total -= size
        for token, tf in tfs.items():
            groups = self.groups[token]
            groups[(tf, size)].discard(row)
            if not groups[(tf, size)]:
                del groups[(tf, size)]
                if not groups:
                    del self.groups[token]
            counts = self.nodes[token]
            counts[node] -= 1
            if not counts[node]:
                del counts[node]
                if not counts:
                    del self.nodes[token]

    def term_tokens(self, term: str) -> tuple[str, ...]:
        """The tokens of the phrase `_fts_or([term])` (cached)."""
        found = self.terms.get(term)
        if found is None:
            if len(self.terms) >= TERMS_KEPT:
                self.terms.clear()
            found = self.terms[term] = tuple(self.tokens([term.replace('"', "")])[0])
        return found

    def top(self, terms: list[str], limit: int) -> list[tuple[str, float]] | None:
        """`Memoire.bm25_plain(terms, limit)`, when every term is one token and `limit` > 0; else None.

        FTS5's `bm25()` (fts5_aux.c) with k1 = 1.2, b = 0.75: per phrase i (a term), IDF_i =
        log((N − n_i + 0.5) / (n_i + 0.5)), 1e-6 when not positive (N rows, n_i rows holding it);
        a row's score sums, phrase by phrase from 0.0, IDF_i · tf·(k1 + 1) / (tf + k1·(1 − b + b·D /
        avgdl)) (D its tokens, avgdl = all tokens / N), in the same float operations, so the same
        doubles. Rows with the same (tf, D) for a token score alike for that term: each term's
        groups are read best first, the row read is scored in full, and reading stops once `limit`
        rows score strictly above the best any unread row can reach (per term the best unread
        group's score, summed in phrase order: float rounding is monotone, so no unread row
        passes it, nor ties it). The order is (−score, fact id), as the plain query's. Gives up
        (None) after scoring a third of the rows the terms match (and 4 · `limit`): the query is then
        cheaper."""
        if limit <= 0:
            return None
        tokens = []
        for term in terms:
            found = self.term_tokens(term)
            if len(found) != 1:
                return None
            tokens.append(found[0])
        n_rows = len(self.rows)
        if not n_rows:
            return []
        k1, b = 1.2, 0.75
        avgdl = float(self.total) / float(n_rows)
        lists: list[list[tuple[float, set[int]]]] = []
        scores: list[dict[tuple[int, int], float]] = []
        matched = 0
        for token in tokens:
            hits = sum(self.nodes.get(token, {}).values())
            matched += hits
            idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            by_shape = {shape: idf * ((shape[0] * (k1 + 1.0)) / (shape[0] + k1 * (1 - b + b * shape[1] / avgdl)))
                        for shape in self.groups.get(token, {})}
            scores.append(by_shape)
            lists.append(sorted(((v, self.groups[token][shape]) for shape, v in by_shape.items()),
                                key=lambda g: -g[0]))
        budget = max(matched // 3, 4 * limit)
        seen: dict[int, float] = {}
        best: list[float] = []  # the `limit` best scores so far (a min-heap)
        at = [0] * len(lists)
        while True:
            bound = 0.0
            pick, pick_score = -1, -1.0
            for i, groups in enumerate(lists):
                if at[i] < len(groups):
                    bound += groups[at[i]][0]
                    if groups[at[i]][0] > pick_score:
                        pick, pick_score = i, groups[at[i]][0]
            if pick < 0 or (len(best) >= limit and best[0] > bound):
                break
            for row in lists[pick][at[pick]][1]:
                if row in seen:
                    continue
                _node, _fid, size, tfs = self.rows[row]
                score = 0.0
                for token, by_shape in zip(tokens, scores, strict=True):
                    tf = tfs.get(token)
                    if tf:
                        score += by_shape[(tf, size)]
                seen[row] = score
                if len(best) < limit:
                    heapq.heappush(best, score)
                elif score > best[0]:
                    heapq.heapreplace(best, score)
            at[pick] += 1
            if len(seen) > budget:
                return None
        self.scored += len(seen)
        ranked = sorted((-score, self.rows[row][1]) for row, score in seen.items())
        return [(fid, -neg) for neg, fid in ranked[:limit]]


class Memoire:
    """A read-only view of the memory, built once per cache key."""

    def __init__(self, paths: MemoryPaths, reader: PageReader | None = None, previous: Memoire | None = None) -> None:
        self.pages: dict[str, Page] = reader.load(paths.fiches) if reader is not None else load_pages(paths.fiches)
        self._index: dict[str, PageIndex] = {}
        self._rowid: dict[str, int] = {}
        self._db: sqlite3.Connection | None = None
        self._postings: Postings | None = None
        if previous is None or previous._db is None or not previous.unique_ids or not self._derive(previous):
            self.facts: dict[str, tuple[str, Fact]] = {
                f.id: (slug, f) for slug, page in self.pages.items() for f in page.facts
            }
        self.total = sum(len(p.facts) for p in self.pages.values())
        self.unique_ids = len(self.facts) == self.total
        """No fact id on two lines: what `select`'s index and the derivation above rely on."""
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
        if self._db is not None:
            self._db.execute("DELETE FROM noms")
            self._db.executemany("INSERT INTO noms VALUES (?, ?)",
                                 [(slug, " ; ".join(p.names())) for slug, p in self.pages.items()])

    @property
    def db(self) -> sqlite3.Connection:
        """The FTS5 tables of the facts and of the page names (built on first use)."""
        if self._db is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            db.execute(f"CREATE VIRTUAL TABLE faits USING fts5(fid UNINDEXED, node UNINDEXED, texte, {TOKENIZER})")
            db.execute(f"CREATE VIRTUAL TABLE noms USING fts5(node UNINDEXED, libelles, {TOKENIZER})")
            self._rowid = {fid: n for n, fid in enumerate(self.facts, start=1)}
            rows = [(n, fid, self.facts[fid][0], self.facts[fid][1].text) for fid, n in self._rowid.items()]
            db.executemany("INSERT INTO faits (rowid, fid, node, texte) VALUES (?, ?, ?, ?)", rows)
            self._postings = Postings(db)
            self._postings.add(rows)
            self._db = db
            self._db.executemany("INSERT INTO noms VALUES (?, ?)",
                                 [(slug, " ; ".join(p.names())) for slug, p in self.pages.items()])
        return self._db

    def _derive(self, previous: Memoire) -> bool:
        """Take the previous memory's facts, FTS5 rows and indexes, changing what the pages changed.
        False (nothing taken) when a fact id would be on two lines."""
        removed: list[tuple[str, Fact]] = []
        added: list[tuple[str, Fact]] = []
        changed: dict[str, tuple[list[Fact], list[Fact]]] = {}
        for slug in previous.pages.keys() | self.pages.keys():
            old, new = previous.pages.get(slug), self.pages.get(slug)
            if old is new:
                continue
            old_facts = old.facts if old is not None else []
            new_facts = new.facts if new is not None else []
            old_ids, new_ids = set(map(id, old_facts)), set(map(id, new_facts))  # in C
            out, came_in = old_ids - new_ids, new_ids - old_ids
            gone = picked(old_facts, out) if out else []
            came = picked(new_facts, came_in) if came_in else []
            removed += [(slug, f) for f in gone]
            added += [(slug, f) for f in came]
            if new is not None:
                changed[slug] = (gone, came)
        facts = dict(previous.facts)
        for _slug, fact in removed:
            del facts[fact.id]
        for slug, fact in added:
            if fact.id in facts:
                return False
            facts[fact.id] = (slug, fact)
        self.facts = facts
        db, rowid, postings = previous._db, dict(previous._rowid), previous._postings
        next_row = max(rowid.values(), default=0) + 1
        before = {fact.id: (slug, fact.text) for slug, fact in removed}
        stale = [fid for fid in before if facts.get(fid, (None, None))[0] is None
                 or (facts[fid][0], facts[fid][1].text) != before[fid]]
        gone = [rowid.pop(fid) for fid in stale]
        db.executemany("DELETE FROM faits WHERE rowid = ?", [(row,) for row in gone])
        for row in gone:
            postings.remove(row)
        rows = []
        for slug, fact in added:
            if fact.id not in rowid:
                rowid[fact.id] = next_row
                rows.append((next_row, fact.id, slug, fact.text))
                next_row += 1
        db.executemany("INSERT INTO faits (rowid, fid, node, texte) VALUES (?, ?, ?, ?)", rows)
        postings.add(rows)
        previous._db, previous._rowid, previous._postings = None, {}, None
        self._db, self._rowid, self._postings = db, rowid, postings
        for slug in self.pages:
            index = previous._index.get(slug)
            if index is None:
                continue
            if slug not in changed:
                self._index[slug] = index
            else:
                self._index[slug] = index.derive(*changed[slug])
        return True

    def index(self, slug: str) -> PageIndex:
        """The recall index of a page (built on first use)."""
        index = self._index.get(slug)
        if index is None:
            index = self._index[slug] = PageIndex(self.pages[slug].facts)
        return index

    def nodes_with(self, term: str) -> set[str]:
        """Pages whose name, aliases or facts contain the term (`nodes_with_plain`'s set)."""
        db = self.db
        tokens = self._postings.term_tokens(term)
        if len(tokens) != 1:
            return self.nodes_with_plain(term)
        query = _fts_or([term])
        nodes = set(self._postings.nodes.get(tokens[0], ()))
        nodes.update(r[0] for r in db.execute("SELECT DISTINCT node FROM noms WHERE noms MATCH ?", (query,)))
        return nodes

    def nodes_with_plain(self, term: str) -> set[str]:
        """Pages whose name, aliases or facts contain the term: the plain rule (FTS5 queries)."""
        query = _fts_or([term])
        # DISTINCT: the same set, without a row per matching fact crossing into Python.
        rows = self.db.execute("SELECT DISTINCT node FROM faits WHERE faits MATCH ?", (query,)).fetchall()
        rows += self.db.execute("SELECT DISTINCT node FROM noms WHERE noms MATCH ?", (query,)).fetchall()
        return {r[0] for r in rows}

    def bm25(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Top facts for any of the terms, best first, as (fact id, positive score): `bm25_plain`'s
        list, from the postings when they can give it (`Postings.top`)."""
        if not terms:
            return []
        _ = self.db  # the tables and postings, built on first use
        ranked = self._postings.top(terms, limit)
        return self.bm25_plain(terms, limit) if ranked is None else ranked

    def bm25_plain(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Top facts for any of the terms, best first, as (fact id, positive score): the FTS5 query."""
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

    def __init__(self, paths: MemoryPaths, settings: Settings, emit: Emitter,
                 reader: PageReader | None = None) -> None:
        self.paths = paths
        self.settings = settings
        self.emit = emit
        self.reader = reader
        """Parses only changed pages, and lets a rebuild start from the previous `Memoire`."""
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
            previous = self.memoire if self.reader is not None else None
            self.memoire, self.key = Memoire(self.paths, self.reader, previous), key
            self.emit("recall.cache", "executed", reason="rebuilt", count=len(self.memoire.facts))
        return self.memoire

    def drop(self) -> None:
        self.memoire, self.key = None, None
