"""Adapter for the vector-RAG baseline (LSREP paper): top 30 turns by cosine, no budget."""

from __future__ import annotations

import hashlib
from datetime import datetime

from lsrep.adapters.formatting import embedding_text, turn_line
from lsrep.systems.vector_rag import VectorRagMemory
from pydantic import BaseModel, ConfigDict, Field

from lsrep.contract import Fragment, MechanismSpec, MemoryAdapter, QueryResult, ReplayTurn
from lsrep.embed.hashing import HashingEmbedder

RETRIEVE = "vrag.retrieve"


class VectorRagOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=30, ge=1)
    """Turns retrieved per query (the paper's 30)."""
    chronological: bool = False
    """Order retrieved turns by time instead of similarity."""


class VectorRagAdapter(MemoryAdapter):
    """One vector per turn; the campaign's embedder (hashing by default)."""

    version = "1"
    Options = VectorRagOptions
    supports_snapshot = True
    embeds = "campaign"
    host_reusable = True  # all state in `self.memory`; reset() builds it anew
    mechanisms = (
        MechanismSpec(name=RETRIEVE, description="top-k turns by cosine similarity", can_disable=False,
                      stages=("eligible", "executed", "output", "selected", "in_prompt")),
    )

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        embedder = self.setup.embedder or HashingEmbedder()
        opts = self.setup.options
        self.memory = VectorRagMemory(embedder=embedder, top_k=opts.top_k, chronological=opts.chronological)

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.memory.add(turn.turn_id, turn_line(turn), embedding_text(turn, self.setup.embedding_text))

    def query(self, question: str, *, now: datetime) -> QueryResult:
        eligible = bool(self.memory.ids)
        self.emit(RETRIEVE, "eligible" if eligible else "ineligible", reason=None if eligible else "empty store")
        if not eligible:
            return QueryResult()
        hits = self.memory.search(question)
        ids = tuple(h.turn_id for h in hits)
        self.emit(RETRIEVE, "executed", count=len(self.memory.ids),
                  params={"embedder": self.memory.embedder.name, "top_k": self.memory.top_k})
        if hits:
            self.emit(RETRIEVE, "output", count=len(hits), source_turn_ids=ids)
            self.emit(RETRIEVE, "selected", count=len(hits), source_turn_ids=ids)
        fragments = tuple(
            Fragment(text=h.text, source_turn_ids=(h.turn_id,), mechanisms=(RETRIEVE,), score=h.similarity)
            for h in hits
        )
        return QueryResult(fragments=fragments)

    def snapshot(self) -> dict:
        return self.memory.dump()

    def restore(self, snapshot: dict) -> None:
        self.memory.load(snapshot)

    def state_digest(self) -> str:
        h = hashlib.sha256()
        for tid, text, row in zip(self.memory.ids, self.memory.texts, self.memory._rows, strict=True):
            h.update(f"{tid}\0{text}\0".encode())
            h.update(row.tobytes())
        return h.hexdigest()
