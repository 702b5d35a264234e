"""The mem0 adapter: mem0's OSS `Memory` on an in-memory Qdrant, its models on the memory gateway.

What reaches mem0: every turn as one message `[YYYY-MM-DD HH:MM] Speaker: content` (mem0's
prompt keeps no speaker name of its own and dates observations by the wall clock), scoped to the
owner (`user_id`) and the turn's session (`run_id`, mem0's notion of a session: it feeds the last
messages of the same run to the extractor). Memories are stamped with the turn's time
(`created_at` metadata, which mem0 keeps when given) and returned as `[date] memory`, citing the
turn whose ingest extracted them.

What is switched off, and said so through fidelity events (`skipped`, reason `disabled: ...`):
mem0's BM25 lane (fastembed downloads its `Qdrant/bm25` model from a hub) and its entity lane
(spaCy downloads `en_core_web_sm`). mem0 2.2.1's `add()` is ADD-only: updates and deletes are API
calls mem0 never offers its extractor, reported as `ineligible`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sqlite3
from datetime import datetime
from typing import Any

from lsrep.adapters.thirdparty import (
    PrivateDir,
    SeededUuid,
    chat_role,
    owner_id,
    require_models,
    seeded_ids,
    turn_text,
    within_budget,
)
from pydantic import BaseModel, ConfigDict, Field

from lsrep.contract import (
    WHEN_MODEL_IS,
    Fragment,
    MechanismSpec,
    MemoryAdapter,
    Participants,
    QueryResult,
    ReplayTurn,
    SnapshotNotSupported,
)

EXTRACT = "mem0.extract"
SEARCH = "mem0.search"
BM25 = "mem0.search.bm25"
ENTITIES = "mem0.entities"
REVISE = "mem0.update_delete"
COLLECTION = "lsrep"
DIGESTED = (
    "SELECT memory_id, old_memory, new_memory, event, created_at, is_deleted FROM history ORDER BY rowid",
    "SELECT session_scope, role, content, name FROM messages ORDER BY rowid",
)
"""mem0's SQLite rows that are state (its `messages.created_at` and `history.updated_at` are wall clock)."""
DEFAULT_DIMS = 1536
"""mem0's own default vector size, used when `[memory_embedder]` names none."""
BM25_OFF = ("disabled: degraded lane, mem0's BM25 keyword scoring needs fastembed's Qdrant/bm25 model, "
            "which it downloads from a model hub at run time")
ENTITIES_OFF = ("disabled: degraded lane, mem0's entity linking needs spaCy's en_core_web_sm, which it "
                "downloads at run time")
REVISE_NOT_OFFERED = ("not offered: mem0 2.2.1's add() pipeline is ADD-only (Memory.update and delete are "
                      "API calls its extractor never chooses)")


class Mem0Options(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=10, ge=1)
    """Memories returned per query (`Memory.search(top_k=...)`; mem0's default is 20)."""
    threshold: float = Field(default=0.1, ge=0.0, le=1.0)
    """Minimum similarity of a returned memory (mem0's default 0.1)."""
    infer: bool = True
    """Extract facts with the memory model (mem0's default); False stores each turn verbatim."""
    sessions: bool = True
    """Scope each turn to its session (`run_id`), so mem0's extractor sees that session's last messages."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature mem0 sends (mem0's default is 0.1; 0 keeps an endpoint model repeatable)."""


def _import_mem0(home: str) -> Any:
    """Import mem0 with telemetry off and its folder (`MEM0_DIR`, default ~/.mem0) in `home`."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", home)
    try:
        import mem0.memory.main as main
        import mem0.utils.spacy_models as spacy_models
    except ImportError as exc:
        raise RuntimeError(f"the mem0 adapter needs mem0ai: pip install 'lsrep[mem0]' ({exc})") from None
    import mem0.memory.telemetry as telemetry

    # Imported earlier with telemetry on (another import in this process): switch off both flags mem0
    # reads (`capture_event` and the notices read the telemetry module's, `Memory.__init__` its own copy).
    telemetry.MEM0_TELEMETRY = main.MEM0_TELEMETRY = False
    # The entity and BM25-lemma lanes load spaCy, downloading its model when absent: mark both as
    # failed so mem0 takes its documented fallback (no entities, plain text) without a download.
    spacy_models._load_failed_full = True
    spacy_models._load_failed_lemma = True
    return main


class Mem0Adapter(MemoryAdapter):
    """mem0 `Memory` (OSS): LLM fact extraction per turn, semantic search over the facts."""

    version = "1"
    Options = Mem0Options
    supports_snapshot = True
    deterministic = WHEN_MODEL_IS
    """Deterministic when its memory model is (the offline responder, or an endpoint at temperature 0
    that repeats itself); mem0's own ids are seeded per reset."""
    honours_budget = True
    mechanisms = (
        MechanismSpec(name=EXTRACT, description="one JSON-mode LLM call per turn extracting facts to ADD",
                      stages=("eligible", "executed", "output")),
        MechanismSpec(name=SEARCH, description="semantic search over the extracted facts (Memory.search)",
                      can_disable=False, stages=("eligible", "executed", "output", "selected", "in_prompt")),
        MechanismSpec(name=BM25, description="BM25 keyword scoring blended into search (degraded: off)",
                      can_disable=False),
        MechanismSpec(name=ENTITIES, description="spaCy entity linking boosting search (degraded: off)",
                      can_disable=False),
        MechanismSpec(name=REVISE, description="update or delete of stored memories (not offered by mem0 2.2.1)",
                      can_disable=False),
    )
    distributions = ("mem0ai", "qdrant-client", "openai")
    """Third-party distributions whose versions matter to this adapter's results."""

    def __init__(self, setup) -> None:
        super().__init__(setup)
        self.llm, self.embedder = require_models(setup, "mem0")
        self._dir = PrivateDir(setup, "mem0")
        self._main = _import_mem0(str(self._dir.path / "home"))
        import mem0.memory.storage as storage

        self._seeded = (self._main, storage)
        self.memory: Any = None
        self.turns: dict[str, ReplayTurn] = {}

    # -- building ---------------------------------------------------------------------------------
    def _build(self) -> Any:
        from qdrant_client import QdrantClient

        dims = self.embedder.dimensions or DEFAULT_DIMS
        embedder_config: dict[str, Any] = {"model": self.embedder.model, "api_key": self.embedder.api_key,
                                           "openai_base_url": self.embedder.base_url}
        if self.embedder.dimensions:
            embedder_config["embedding_dims"] = self.embedder.dimensions
        config = self._main.MemoryConfig(
            llm={"provider": "openai", "config": {
                "model": self.llm.model, "api_key": self.llm.api_key, "openai_base_url": self.llm.base_url,
                "temperature": self.setup.options.temperature}},
            embedder={"provider": "openai", "config": embedder_config},
            vector_store={"provider": "qdrant", "config": {
                "collection_name": COLLECTION, "embedding_model_dims": dims,
                "client": QdrantClient(location=":memory:"), "path": str(self._dir.path / "qdrant")}},
            history_db_path=":memory:",
        )
        with seeded_ids(self._seeded, self.ids):
            memory = self._main.Memory(config)
        memory.vector_store._bm25_encoder = False  # fastembed would fetch Qdrant/bm25 from a hub
        return memory

    def reset(self, *, conversation_id: str, now: datetime, owner: str | None = None,
              participants: Participants | None = None, **_: Any) -> None:
        if self.memory is not None:
            self.memory.close()
        self.user = owner_id(conversation_id, owner, participants)
        self.ids = SeededUuid(f"{self.setup.seed}:{conversation_id}")
        self.memory = self._build()
        self.turns = {}
        self._infer = self.setup.options.infer and self.enabled(EXTRACT)
        self.emit(REVISE, "ineligible", reason=REVISE_NOT_OFFERED)

    # -- ingest and query -------------------------------------------------------------------------
    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if turn.turn_id in self.turns:
            return  # a redelivered turn (a retry): mem0 would store its message twice
        self.turns[turn.turn_id] = turn
        message = {"role": chat_role(turn), "content": turn_text(turn)}
        metadata = {"lsrep_turn_id": turn.turn_id, "created_at": turn.timestamp.isoformat()}
        infer = self._infer
        if infer:
            self.emit(EXTRACT, "eligible", source_turn_ids=(turn.turn_id,))
        else:
            self.emit(EXTRACT, "skipped", reason="disabled: infer is off, turns are stored verbatim")
        with seeded_ids(self._seeded, self.ids):
            result = self.memory.add([message], user_id=self.user, metadata=metadata, infer=infer,
                                     run_id=turn.session_id if self.setup.options.sessions else None)
        added = [r for r in result.get("results", []) if r.get("event") == "ADD"]
        if infer:
            self.emit(EXTRACT, "executed", source_turn_ids=(turn.turn_id,), params={"model": self.llm.model})
            if added:
                self.emit(EXTRACT, "output", count=len(added), source_turn_ids=(turn.turn_id,))
        self.emit(ENTITIES, "skipped", reason=ENTITIES_OFF)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        self.emit(BM25, "skipped", reason=BM25_OFF)
        if not self.turns:
            self.emit(SEARCH, "ineligible", reason="empty store")
            return QueryResult()
        self.emit(SEARCH, "eligible")
        opts = self.setup.options
        with seeded_ids(self._seeded, self.ids):
            hits = self.memory.search(question, top_k=opts.top_k, threshold=opts.threshold,
                                      filters={"user_id": self.user}).get("results", [])
        self.emit(SEARCH, "executed", count=len(hits), params={"top_k": opts.top_k, "threshold": opts.threshold})
        fragments = [self._fragment(hit) for hit in hits]
        if fragments:
            cited = tuple(t for f in fragments for t in f.source_turn_ids)
            self.emit(SEARCH, "output", count=len(fragments), source_turn_ids=cited)
        kept, dropped = within_budget(fragments, self.setup.retrieval_budget)
        if kept:
            self.emit(SEARCH, "selected", count=len(kept), source_turn_ids=tuple(t for f in kept for t in f.source_turn_ids))
        return QueryResult(fragments=kept, truncated_tokens=dropped)

    def _fragment(self, hit: dict[str, Any]) -> Fragment:
        meta = hit.get("metadata") or {}
        turn_id = meta.get("lsrep_turn_id")
        turn = self.turns.get(turn_id)
        date = f"[{turn.timestamp:%Y-%m-%d}] " if turn else ""
        return Fragment(text=f"{date}{hit['memory']}", source_turn_ids=(turn_id,) if turn else (),
                        mechanisms=(SEARCH, EXTRACT) if self._infer else (SEARCH,),
                        score=hit.get("score"), kind="fact" if self._infer else "memory")

    # -- state ------------------------------------------------------------------------------------
    def _points(self) -> list[Any]:
        client = self.memory.vector_store.client
        points, offset = [], None
        while True:
            batch, offset = client.scroll(COLLECTION, limit=256, offset=offset, with_payload=True, with_vectors=True)
            points.extend(batch)
            if offset is None:
                return sorted(points, key=lambda p: str(p.id))

    def _collections(self) -> dict[str, Any]:
        """The local Qdrant's collections (copied whole: a re-upsert would re-normalise vectors in float32)."""
        local = getattr(self.memory.vector_store.client, "_client", None)
        collections = getattr(local, "collections", None)
        if not isinstance(collections, dict) or COLLECTION not in collections:
            raise SnapshotNotSupported("mem0's vector store is not the local in-memory Qdrant this adapter copies")
        return collections

    def snapshot(self) -> dict[str, Any]:
        db = sqlite3.connect(":memory:")
        with self.memory.db._lock:
            self.memory.db.connection.backup(db)
        return {"collection": copy.deepcopy(self._collections()[COLLECTION]), "db": db,
                "turns": dict(self.turns), "ids": self.ids._rng.getstate()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._collections()[COLLECTION] = copy.deepcopy(snapshot["collection"])
        with self.memory.db._lock:
            snapshot["db"].backup(self.memory.db.connection)
        self.turns = dict(snapshot["turns"])
        self.ids._rng.setstate(snapshot["ids"])

    def state_digest(self) -> str:
        """SHA-256 over every stored memory (id, payload, vector) and mem0's history and message tables
        (without the wall-clock stamps mem0 puts on its own rows)."""
        h = hashlib.sha256()
        for p in self._points():
            h.update(json.dumps([str(p.id), p.payload, p.vector], sort_keys=True, default=str).encode())
        with self.memory.db._lock:
            for sql in DIGESTED:
                for row in self.memory.db.connection.execute(sql):
                    h.update(json.dumps(row, default=str).encode())
        return h.hexdigest()

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
        self._dir.close()
