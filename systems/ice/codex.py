"""Codex: the temporal knowledge graph (entities, aliases, edges that are kept when superseded).

Write path (seed-systems 5.6): resolve each name by canonical name, then alias, else create
the entity under a deterministic UUIDv5. A *property* observation expires the current edge
for the same (source, relation); *multi* relations append; *event* relations append with
their date. Every state change is written to `kg_events`.

Read path: resolve the prompt's entities (exact name or alias, then entity-embedding cosine
>= the fuzzy threshold), traverse current edges to depth 3, and render each reached entity
as its context: properties plus the most recent active outgoing edges.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from .db import Transaction, open_database, strength_rows, strength_stats
from .embedding import Embedder, VectorCache, embed_one, to_blob
from .text import ngrams, normalise_name

NAMESPACE = uuid.UUID("6f1c9a52-3b8e-5d7a-9c4e-1e2f3a4b5c6d")
"""Fixed namespace of ICE entity ids (chosen)."""
USER = "user"
USER_ID = str(uuid.uuid5(NAMESPACE, USER))
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})

MIGRATIONS = [
    ("m001_codex", """
    CREATE TABLE entities (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, norm TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
        created_at TEXT NOT NULL, conv_id TEXT, vec BLOB NOT NULL
    );
    CREATE TABLE aliases (alias_norm TEXT PRIMARY KEY, entity_id TEXT NOT NULL);
    CREATE TABLE edges (
        seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, src TEXT NOT NULL,
        relation TEXT NOT NULL, dst TEXT, value TEXT NOT NULL, kind TEXT NOT NULL,
        valid_from TEXT NOT NULL, valid_to TEXT, superseded_by TEXT,
        status TEXT NOT NULL, confidence REAL NOT NULL, strength REAL NOT NULL DEFAULT 1.0,
        strength_at TEXT NOT NULL, source_turn TEXT NOT NULL, conv_id TEXT, event_date TEXT
    );
    CREATE INDEX edges_src ON edges(src, relation, status);
    CREATE TABLE kg_events (
        seq INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, entity_id TEXT,
        edge_id TEXT, turn_id TEXT, detail TEXT NOT NULL
    );
    CREATE TABLE extraction_keys (key TEXT PRIMARY KEY, turn_id TEXT NOT NULL);
    """),
]


@dataclass(frozen=True)
class Triple:
    """One extracted statement (the JSON shape the extractor, model or rules, returns)."""

    subject: str
    relation: str
    object: str
    kind: str = "property"
    """`property` (exclusive, supersedes), `multi` (appends) or `event` (appends, dated)."""
    date: str | None = None
    confidence: float = 0.9
    object_type: str | None = None
    subject_type: str | None = None


@dataclass
class WriteOutcome:
    """What one extraction did to the graph."""

    entities_created: list[str] = field(default_factory=list)
    entities_resolved: list[str] = field(default_factory=list)
    edges_added: list[str] = field(default_factory=list)
    edges_superseded: list[str] = field(default_factory=list)
    edges_confirmed: list[str] = field(default_factory=list)
    duplicates_skipped: int = 0
    events: int = 0


@dataclass(frozen=True)
class Edge:
    id: str
    src: str
    relation: str
    dst: str | None
    value: str
    kind: str
    valid_from: str
    valid_to: str | None
    status: str
    confidence: float
    strength: float
    source_turn: str
    event_date: str | None

    def render(self) -> str:
        rel = self.relation.replace("_", " ")
        when = self.event_date or self.valid_from[:10]
        if self.status == "superseded":
            return f"{rel}: {self.value} (from {self.valid_from[:10]} until {self.valid_to[:10]})"
        if self.kind == "event":
            return f"{rel}: {self.value} (on {when})"
        return f"{rel}: {self.value} (since {when})"


def _edge(row: sqlite3.Row) -> Edge:
    return Edge(id=row["id"], src=row["src"], relation=row["relation"], dst=row["dst"],
                value=row["value"], kind=row["kind"], valid_from=row["valid_from"],
                valid_to=row["valid_to"], status=row["status"], confidence=row["confidence"],
                strength=row["strength"], source_turn=row["source_turn"],
                event_date=row["event_date"])


def entity_id(name: str) -> str:
    """The deterministic UUIDv5 of a (normalised) entity name."""
    return str(uuid.uuid5(NAMESPACE, normalise_name(name)))


GRAM_CACHE = 64  # prompts whose n-gram vectors are kept (about 60 KB each)


class Codex:
    """The temporal knowledge graph in `codex.sqlite`."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.conn = open_database(path, MIGRATIONS)
        self.embedder = embedder
        # Named entities' vectors for fuzzy matching; reloaded after an entity is created
        # (creation may sit inside a transaction that rolls back, so it is not appended).
        self._entity_vectors = VectorCache()
        self._gram_vectors: dict[tuple[str, ...], np.ndarray] = {}  # probes repeat

    def close(self) -> None:
        self.conn.close()

    # -- entity resolution -------------------------------------------------------------------
    def lookup(self, name: str) -> tuple[str, str] | None:
        """(entity id, how) by canonical name, then alias; None if unknown."""
        norm = normalise_name(name)
        row = self.conn.execute("SELECT id FROM entities WHERE norm = ?", (norm,)).fetchone()
        if row:
            return row[0], "name"
        row = self.conn.execute("SELECT entity_id FROM aliases WHERE alias_norm = ?",
                                (norm,)).fetchone()
        return (row[0], "alias") if row else None

    def resolve(self, name: str, *, type_: str | None, now: datetime, conv_id: str | None,
                out: WriteOutcome, turn_id: str | None = None) -> str:
        """Canonical name, then alias, else a new entity under its UUIDv5."""
        found = self.lookup(name)
        if found:
            eid = found[0]
            out.entities_resolved.append(eid)
            if type_:
                row = self.conn.execute("SELECT type FROM entities WHERE id = ?", (eid,)).fetchone()
                if row and row[0] == "entity" and type_ != "entity":
                    self.conn.execute("UPDATE entities SET type = ? WHERE id = ?", (type_, eid))
                    self._event(now, "entity.typed", eid, None, turn_id, {"type": type_})
                    out.events += 1
            return eid
        norm = normalise_name(name)
        eid = entity_id(name)
        display = " ".join(name.split())
        if norm == USER and not type_:
            type_ = "person"
        self.conn.execute(
            "INSERT INTO entities (id, name, norm, type, created_at, conv_id, vec)"
            " VALUES (?,?,?,?,?,?,?)",
            (eid, display, norm, type_ or "entity", now.isoformat(), conv_id,
             to_blob(embed_one(self.embedder, display))),
        )
        self._entity_vectors = VectorCache()
        if norm.startswith("the ") and len(norm) > 4:
            self.conn.execute("INSERT OR IGNORE INTO aliases VALUES (?, ?)", (norm[4:], eid))
        self._event(now, "entity.created", eid, None, turn_id, {"name": display})
        out.entities_created.append(eid)
        out.events += 1
        return eid

    def add_alias(self, eid: str, alias: str, now: datetime, turn_id: str | None) -> None:
        norm = normalise_name(alias)
        if not norm or self.lookup(alias):
            return
        self.conn.execute("INSERT INTO aliases VALUES (?, ?)", (norm, eid))
        self._event(now, "alias.added", eid, None, turn_id, {"alias": alias})

    # -- write path --------------------------------------------------------------------------
    def apply(self, triples: list[Triple], mentions: list[tuple[str, str]], *, turn_id: str,
              conv_id: str | None, now: datetime, dedupe: bool = True) -> WriteOutcome:
        """Write one turn's extraction. With dedupe, a (turn, triple) key applies it once."""
        out = WriteOutcome()
        with Transaction(self.conn):
            for t in triples:  # the user's own name becomes an alias before mentions resolve
                if t.relation == "name" and normalise_name(t.subject) == USER:
                    uid = self.resolve(USER, type_=None, now=now, conv_id=conv_id, out=out,
                                       turn_id=turn_id)
                    self.add_alias(uid, t.object, now, turn_id)
            for name, type_ in mentions:
                self.resolve(name, type_=type_, now=now, conv_id=conv_id, out=out,
                             turn_id=turn_id)
            for t in triples:
                key = hashlib.sha1(
                    f"{turn_id}|{normalise_name(t.subject)}|{t.relation}|"
                    f"{normalise_name(t.object)}".encode()).hexdigest()
                if dedupe:
                    if self.conn.execute("SELECT 1 FROM extraction_keys WHERE key = ?",
                                         (key,)).fetchone():
                        out.duplicates_skipped += 1
                        continue
                    self.conn.execute("INSERT INTO extraction_keys VALUES (?, ?)", (key, turn_id))
                self._write_triple(t, turn_id=turn_id, conv_id=conv_id, now=now, out=out,
                                   guard=dedupe)
        return out

    def _write_triple(self, t: Triple, *, turn_id: str, conv_id: str | None, now: datetime,
                      out: WriteOutcome, guard: bool) -> None:
        src = self.resolve(t.subject, type_=t.subject_type, now=now, conv_id=conv_id, out=out,
                           turn_id=turn_id)
        dst = None
        if t.object_type is not None:
            dst = self.resolve(t.object, type_=t.object_type, now=now, conv_id=conv_id, out=out,
                               turn_id=turn_id)
        if t.relation == "name" and src == USER_ID:
            self.add_alias(src, t.object, now, turn_id)
        value_norm = normalise_name(t.object)
        current = [_edge(r) for r in self.conn.execute(
            "SELECT * FROM edges WHERE src = ? AND relation = ? AND status = 'current'"
            " ORDER BY seq", (src, t.relation))]
        same = [e for e in current if normalise_name(e.value) == value_norm
                and (t.kind != "event" or e.event_date == t.date)]
        if same and guard:
            out.edges_confirmed.append(same[-1].id)
            self._event(now, "edge.confirmed", src, same[-1].id, turn_id, {})
            out.events += 1
            return
        seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM edges").fetchone()[0]
        new_id = f"edge-{seq:07d}"
        stamp = now.isoformat()
        self.conn.execute(
            "INSERT INTO edges (seq, id, src, relation, dst, value, kind, valid_from, status,"
            " confidence, strength_at, source_turn, conv_id, event_date)"
            " VALUES (?,?,?,?,?,?,?,?,'current',?,?,?,?,?)",
            (seq, new_id, src, t.relation, dst, " ".join(t.object.split()), t.kind, stamp,
             t.confidence, stamp, turn_id, conv_id, t.date if t.kind == "event" else None),
        )
        out.edges_added.append(new_id)
        self._event(now, "edge.added", src, new_id, turn_id,
                    {"relation": t.relation, "value": t.object, "kind": t.kind})
        out.events += 1
        if t.kind != "property":
            return
        for old in current:
            self.conn.execute(
                "UPDATE edges SET status = 'superseded', valid_to = ?, superseded_by = ?"
                " WHERE id = ?", (stamp, new_id, old.id))
            out.edges_superseded.append(old.id)
            self._event(now, "edge.superseded", src, old.id, turn_id, {"superseded_by": new_id})
            out.events += 1

    def _event(self, now: datetime, kind: str, eid: str | None, edge: str | None,
               turn_id: str | None, detail: dict) -> None:
        self.conn.execute(
            "INSERT INTO kg_events (at, kind, entity_id, edge_id, turn_id, detail)"
            " VALUES (?,?,?,?,?,?)",
            (now.isoformat(), kind, eid, edge, turn_id, json.dumps(detail, sort_keys=True)))

    # -- read path ---------------------------------------------------------------------------
    def is_empty(self) -> bool:
        return self.conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0] == 0

    def entity_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0]

    def find_entities(self, text: str, threshold: float) -> list[tuple[str, str]]:
        """Named entities of a prompt: exact name or alias n-grams, then fuzzy cosine.

        The user entity is not matched here (first-person words are self-reference, not a
        named entity; MERA's gate looks at named entities only).
        """
        found: dict[str, str] = {}
        grams = ngrams(text)
        for gram in grams:
            hit = self.lookup(gram)
            if hit and hit[0] != USER_ID and hit[0] not in found:
                found[hit[0]] = hit[1]
        if found:
            return list(found.items())
        cache = self._entity_vectors
        if cache.ids is None:
            cache.load(self.conn.execute(
                "SELECT id, vec FROM entities WHERE id != ? ORDER BY rowid", (USER_ID,)).fetchall())
        if not cache.ids or not grams:
            return []
        if (qmat := self._gram_vectors.get(key := tuple(grams))) is None:
            qmat = self._gram_vectors[key] = np.asarray(self.embedder.embed(grams), dtype=np.float32)
            if len(self._gram_vectors) > GRAM_CACHE:
                del self._gram_vectors[next(iter(self._gram_vectors))]
        best = (qmat @ cache.matrix().T).max(axis=0)
        return [(cache.ids[i], "fuzzy") for i in np.flatnonzero(best >= threshold)]

    def entity(self, eid: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM entities WHERE id = ?", (eid,)).fetchone()

    def outgoing(self, eid: str, *, limit: int, history: bool,
                 conv_scope: str | None = None) -> list[Edge]:
        """The most recent current outgoing edges (and, with history, superseded ones)."""
        scope = " AND conv_id = ?" if conv_scope else ""
        args: tuple = (eid, conv_scope, limit) if conv_scope else (eid, limit)
        rows = self.conn.execute(
            "SELECT * FROM edges WHERE src = ? AND status = 'current'" + scope
            + " ORDER BY seq DESC LIMIT ?", args).fetchall()
        edges = [_edge(r) for r in rows]
        if history:
            args = (eid, conv_scope, limit) if conv_scope else (eid, limit)
            edges += [_edge(r) for r in self.conn.execute(
                "SELECT * FROM edges WHERE src = ? AND status = 'superseded'" + scope
                + " ORDER BY seq DESC LIMIT ?", args)]
        return edges

    def incoming(self, eid: str, limit: int) -> list[Edge]:
        rows = self.conn.execute("SELECT * FROM edges WHERE dst = ? AND status = 'current'"
                                 " ORDER BY seq DESC LIMIT ?", (eid, limit)).fetchall()
        return [_edge(r) for r in rows]

    def traverse(self, seeds: list[str], depth: int,
                 conv_scope: str | None = None) -> dict[str, tuple[int, list[Edge]]]:
        """Breadth-first over current edges: entity -> (hop, edges on its first path).

        Edge strength and confidence are not consulted (the seed's traversal ignores them).
        """
        reached: dict[str, tuple[int, list[Edge]]] = {s: (0, []) for s in seeds}
        frontier = list(seeds)
        for hop in range(1, depth + 1):
            nxt: list[str] = []
            for eid in frontier:
                path = reached[eid][1]
                scope = " AND conv_id = ?" if conv_scope else ""
                args = (eid, conv_scope) if conv_scope else (eid,)
                for row in self.conn.execute(
                        "SELECT * FROM edges WHERE src = ? AND status = 'current'"
                        " AND dst IS NOT NULL" + scope + " ORDER BY seq", args):
                    e = _edge(row)
                    if e.dst not in reached:
                        reached[e.dst] = (hop, [*path, e])
                        nxt.append(e.dst)
            frontier = nxt
        return reached

    def enumerate_category(self, category: str, limit: int) -> list[str]:
        """Entities whose type is the category (MERA's enumeration)."""
        rows = self.conn.execute("SELECT id FROM entities WHERE type = ? ORDER BY rowid LIMIT ?",
                                 (category, limit)).fetchall()
        return [r[0] for r in rows]

    def edge_count(self, status: str | None = None) -> int:
        if status is None:
            return self.conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM edges WHERE status = ?",
                                 (status,)).fetchone()[0]

    def events(self) -> list[sqlite3.Row]:
        return self.conn.execute("SELECT * FROM kg_events ORDER BY seq").fetchall()

    def current_value(self, eid: str, relation: str) -> str | None:
        row = self.conn.execute("SELECT value FROM edges WHERE src = ? AND relation = ? AND"
                                " status = 'current' ORDER BY seq DESC", (eid, relation)).fetchone()
        return row[0] if row else None

    # -- decay -------------------------------------------------------------------------------
    def strengths(self, above: float | None = None) -> list[tuple[str, float, str]]:
        return strength_rows(self.conn, "edges", "id", "seq", above)

    def strength_stats(self) -> tuple[int, float]:
        return strength_stats(self.conn, "edges")

    def set_strengths(self, updates: list[tuple[str, float]], now: datetime) -> None:
        stamp = now.isoformat()
        with Transaction(self.conn) as c:
            c.executemany("UPDATE edges SET strength = ?, strength_at = ? WHERE id = ?",
                          [(s, stamp, eid) for eid, s in updates])


def render_entity(name: str, type_: str, edges: list[Edge], incoming: list[tuple[str, Edge]]
                  = ()) -> str:
    """An entity context string: `name (type): relation: value (since date); ...`."""
    parts = [e.render() for e in edges]
    parts += [f"{src} {e.relation.replace('_', ' ')} {name} ({(e.event_date or e.valid_from)[:10]})"
              for src, e in incoming]
    body = "; ".join(parts) if parts else "no recorded facts"
    return f"{name} ({type_}): {body}"
