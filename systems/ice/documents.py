"""User-supplied documents, chunked, searched by vector and FTS5 together."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from .db import Transaction, open_database
from .embedding import Embedder, from_blob, to_blob
from .text import estimate_tokens, fts_query, sentences

MIGRATIONS = [
    ("m001_documents", """
    CREATE TABLE doc_chunks (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL,
        seq INTEGER NOT NULL, text TEXT NOT NULL, added_at TEXT NOT NULL, vec BLOB NOT NULL
    );
    CREATE VIRTUAL TABLE doc_fts USING fts5(text, tokenize='porter unicode61');
    """),
]


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    text: str

    def render(self) -> str:
        return f"[document {self.doc_id}] {self.text}"


def chunk_text(text: str, target_tokens: int) -> list[str]:
    """Consecutive sentences grouped up to about target_tokens each."""
    chunks: list[str] = []
    current: list[str] = []
    for sent in sentences(text):
        if current and estimate_tokens(" ".join([*current, sent])) > target_tokens:
            chunks.append(" ".join(current))
            current = []
        current.append(sent)
    if current:
        chunks.append(" ".join(current))
    return chunks


class DocumentStore:
    """Chunks in `documents.sqlite`."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.conn = open_database(path, MIGRATIONS)
        self.embedder = embedder

    def close(self) -> None:
        self.conn.close()

    def add(self, doc_id: str, text: str, *, target_tokens: int, now: datetime) -> list[str]:
        chunks = chunk_text(text, target_tokens)
        vecs = np.asarray(self.embedder.embed(chunks), dtype=np.float32) if chunks else []
        ids = []
        with Transaction(self.conn) as c:
            for n, (chunk, vec) in enumerate(zip(chunks, vecs, strict=True)):
                cid = f"{doc_id}#{n}"
                cur = c.execute("INSERT INTO doc_chunks (id, doc_id, seq, text, added_at, vec)"
                                " VALUES (?,?,?,?,?,?)",
                                (cid, doc_id, n, chunk, now.isoformat(), to_blob(vec)))
                c.execute("INSERT INTO doc_fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, chunk))
                ids.append(cid)
        return ids

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM doc_chunks").fetchone()[0]

    def get(self, cid: str) -> Chunk | None:
        row = self.conn.execute("SELECT id, doc_id, text FROM doc_chunks WHERE id = ?",
                                (cid,)).fetchone()
        return Chunk(row[0], row[1], row[2]) if row else None

    def search(self, query: str, qvec: np.ndarray, k: int, rrf_k: int,
               wrong_key: bool = False) -> list[str]:
        """Chunk ids by in-leg RRF of vector and lexical ranks, best first.

        `wrong_key` reproduces the audited defect: chunks are looked up by `doc_id` equal to
        the query text, which matches nothing, so the leg runs and returns nothing.
        """
        if wrong_key:
            rows = self.conn.execute("SELECT id FROM doc_chunks WHERE doc_id = ?", (query,))
            return [r[0] for r in rows][:k]
        rows = self.conn.execute("SELECT id, vec FROM doc_chunks ORDER BY rowid").fetchall()
        if not rows:
            return []
        sims = np.vstack([from_blob(r[1]) for r in rows]) @ np.asarray(qvec, dtype=np.float32)
        vector = [rows[i][0] for i in np.argsort(-sims, kind="stable")[:k]]
        lexical: list[str] = []
        if (match := fts_query(query)) is not None:
            lexical = [r[0] for r in self.conn.execute(
                "SELECT c.id FROM doc_fts f JOIN doc_chunks c ON c.rowid = f.rowid"
                " WHERE doc_fts MATCH ? ORDER BY bm25(doc_fts), c.rowid LIMIT ?", (match, k))]
        scores: dict[str, float] = {}
        for ranking in (vector, lexical):
            for rank, cid in enumerate(ranking, start=1):
                scores[cid] = scores.get(cid, 0.0) + 1.0 / (rrf_k + rank)
        return sorted(scores, key=lambda c: (-scores[c], c))[:k]
