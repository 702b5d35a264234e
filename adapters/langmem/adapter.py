"""The LangMem adapter: `create_memory_store_manager` over a LangGraph `InMemoryStore`.

Each turn goes to LangMem's store manager as one message `[YYYY-MM-DD HH:MM] Speaker: content`
(LangMem's prompt has no date of its own), in the owner's namespace `("memories", owner)`. The
manager searches the store for related memories, asks the model (tool calls: `Memory` to insert,
`PatchDoc` to update, `RemoveDoc` to delete) and writes the result. A memory cites the turn
whose ingest last wrote it and is returned as `[date] content`, the date of that turn (LangGraph
stamps items with the machine's clock, so the adapter keeps the turn's own time).

The synchronous `invoke` path is used: one call per turn, finished before `ingest` returns (the
async path would need an event loop of its own per adapter, and gains nothing here). LangMem and
trustcall draw ids from `uuid.uuid4()`, including a session tag inside the prompt; they are
seeded per reset so a replay sends the same requests (and a re-run hits the cache).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from datetime import datetime
from typing import Any

from lsrep.adapters.thirdparty import (
    PrivateDir,
    SeededUuid,
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

EXTRACT = "langmem.extract"
INSERT = "langmem.insert"
UPDATE = "langmem.update"
DELETE = "langmem.delete"
SEARCH = "langmem.search"
DEFAULT_DIMS = 1536
NOT_CHOSEN = "offered to the model, not chosen"


class LangMemOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=10, ge=1)
    """Memories returned per query (`store.search(limit=...)`)."""
    query_limit: int = Field(default=5, ge=1)
    """Related memories the manager shows the model per turn (LangMem's default 5)."""
    enable_deletes: bool = True
    """Offer the model the `RemoveDoc` tool (LangMem's default for the store manager)."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature sent to the memory model (0 keeps an endpoint model repeatable)."""


def _imports() -> dict[str, Any]:
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
    try:
        import langmem.knowledge.extraction as extraction
        import trustcall._base as trustcall_base
        from langchain_openai import ChatOpenAI, OpenAIEmbeddings
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager
    except ImportError as exc:
        raise RuntimeError(f"the langmem adapter needs langmem: pip install 'lsrep[langmem]' ({exc})") from None
    return {"extraction": extraction, "trustcall": trustcall_base, "ChatOpenAI": ChatOpenAI,
            "OpenAIEmbeddings": OpenAIEmbeddings, "InMemoryStore": InMemoryStore,
            "create": create_memory_store_manager}


class LangMemAdapter(MemoryAdapter):
    """LangMem's memory store manager: tool-calling extraction, insert/update/delete, semantic search."""

    version = "1"
    Options = LangMemOptions
    supports_snapshot = True
    deterministic = WHEN_MODEL_IS
    """Deterministic when its memory model is (the offline responder, or an endpoint at temperature 0
    that repeats itself); LangMem's and trustcall's ids are seeded per reset."""
    honours_budget = True
    mechanisms = (
        MechanismSpec(name=EXTRACT, description="one tool-calling LLM call per turn over the related memories",
                      can_disable=False, stages=("eligible", "executed", "output")),
        MechanismSpec(name=INSERT, description="the Memory tool: a new memory", can_disable=False),
        MechanismSpec(name=UPDATE, description="the PatchDoc tool: a related memory rewritten", can_disable=False),
        MechanismSpec(name=DELETE, description="the RemoveDoc tool: a related memory deleted"),
        MechanismSpec(name=SEARCH, description="semantic search of the owner's namespace (InMemoryStore)",
                      can_disable=False, stages=("eligible", "executed", "output", "selected", "in_prompt")),
    )
    distributions = ("langmem", "langgraph", "langchain-openai", "trustcall", "openai")
    """Third-party distributions whose versions matter to this adapter's results."""

    def __init__(self, setup) -> None:
        super().__init__(setup)
        self.llm, self.embedder = require_models(setup, "langmem")
        self._dir = PrivateDir(setup, "langmem")
        self._lib = _imports()
        self._seeded = (self._lib["extraction"], self._lib["trustcall"])
        self.store: Any = None

    def reset(self, *, conversation_id: str, now: datetime, owner: str | None = None,
              participants: Participants | None = None, **_: Any) -> None:
        lib, opts = self._lib, self.setup.options
        self.namespace = ("memories", owner_id(conversation_id, owner, participants))
        self.config = {"configurable": {"langgraph_user_id": self.namespace[1]}}
        self.ids = SeededUuid(f"{self.setup.seed}:{conversation_id}")
        chat = lib["ChatOpenAI"](model=self.llm.model, base_url=self.llm.base_url, api_key=self.llm.api_key,
                                 temperature=opts.temperature)
        embeddings = lib["OpenAIEmbeddings"](
            model=self.embedder.model, base_url=self.embedder.base_url, api_key=self.embedder.api_key,
            dimensions=self.embedder.dimensions,
            check_embedding_ctx_length=False)  # else LangChain fetches a tiktoken file to count tokens
        dims = self.embedder.dimensions or DEFAULT_DIMS
        self.store = lib["InMemoryStore"](index={"dims": dims, "embed": embeddings, "fields": ["content.content"]})
        deletes = opts.enable_deletes and self.enabled(DELETE)
        self.manager = lib["create"](chat, namespace=("memories", "{langgraph_user_id}"), store=self.store,
                                     enable_deletes=deletes, query_limit=opts.query_limit)
        self.seen: set[str] = set()
        self.written: dict[str, tuple[str, datetime]] = {}
        """Memory key -> (turn id, turn time) of the ingest that last wrote it."""

    def _keys(self) -> set[str]:
        return set(self.store._data.get(self.namespace, {}))

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        if turn.turn_id in self.seen:
            return  # a redelivered turn (a retry): LangMem would extract it again
        self.seen.add(turn.turn_id)
        before = self._keys()
        offered = {INSERT: True, UPDATE: bool(before), DELETE: bool(before) and self.manager.enable_deletes}
        self.emit(EXTRACT, "eligible", source_turn_ids=(turn.turn_id,))
        message = {"role": "assistant" if turn.role == "assistant" else "user", "content": turn_text(turn)}
        with seeded_ids(self._seeded, self.ids):
            puts = self.manager.invoke({"messages": [message]}, config=self.config)
        after = self._keys()
        written = [p["key"] for p in puts]
        chosen = {INSERT: [k for k in written if k not in before], UPDATE: [k for k in written if k in before],
                  DELETE: sorted(before - after)}
        self.emit(EXTRACT, "executed", source_turn_ids=(turn.turn_id,), params={"model": self.llm.model})
        if written or chosen[DELETE]:
            self.emit(EXTRACT, "output", count=len(written) + len(chosen[DELETE]), source_turn_ids=(turn.turn_id,))
        for mechanism, keys in chosen.items():
            if keys:
                self.emit(mechanism, "eligible")
                self.emit(mechanism, "executed", count=len(keys), ids=tuple(keys))
            elif mechanism == DELETE and not self.manager.enable_deletes:
                self.emit(mechanism, "skipped", reason="disabled: RemoveDoc is not offered in this condition")
            elif offered[mechanism]:
                self.emit(mechanism, "skipped", reason=NOT_CHOSEN)
            else:
                self.emit(mechanism, "ineligible", reason="no stored memory to revise yet")
        for key in written:
            self.written[key] = (turn.turn_id, turn.timestamp)
        for key in chosen[DELETE]:
            self.written.pop(key, None)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self._keys():
            self.emit(SEARCH, "ineligible", reason="empty store")
            return QueryResult()
        self.emit(SEARCH, "eligible")
        hits = self.store.search(self.namespace, query=question, limit=self.setup.options.top_k)
        self.emit(SEARCH, "executed", count=len(hits), params={"top_k": self.setup.options.top_k})
        fragments = [self._fragment(item) for item in hits]
        if fragments:
            self.emit(SEARCH, "output", count=len(fragments),
                      source_turn_ids=tuple(t for f in fragments for t in f.source_turn_ids))
        kept, dropped = within_budget(fragments, self.setup.retrieval_budget)
        if kept:
            self.emit(SEARCH, "selected", count=len(kept), source_turn_ids=tuple(t for f in kept for t in f.source_turn_ids))
        return QueryResult(fragments=kept, truncated_tokens=dropped)

    def _fragment(self, item: Any) -> Fragment:
        content = item.value.get("content")
        text = content.get("content") if isinstance(content, dict) and "content" in content else json.dumps(content)
        turn_id, when = self.written.get(item.key, (None, None))
        date = f"[{when:%Y-%m-%d}] " if when else ""
        return Fragment(text=f"{date}{text}", source_turn_ids=(turn_id,) if turn_id else (),
                        mechanisms=(SEARCH, EXTRACT), score=item.score, kind="fact")

    # -- state ------------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        if not hasattr(self.store, "_data") or not hasattr(self.store, "_vectors"):
            raise SnapshotNotSupported("this langgraph InMemoryStore keeps its state elsewhere")
        return {"data": copy.deepcopy(dict(self.store._data)), "vectors": copy.deepcopy(
            {ns: {k: dict(v) for k, v in keys.items()} for ns, keys in self.store._vectors.items()}),
            "written": dict(self.written), "seen": set(self.seen), "ids": self.ids._rng.getstate()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.store._data.clear()
        self.store._data.update(copy.deepcopy(snapshot["data"]))
        self.store._vectors.clear()
        for ns, keys in snapshot["vectors"].items():
            for key, paths in keys.items():
                self.store._vectors[ns][key].update(copy.deepcopy(paths))
        self.written = dict(snapshot["written"])
        self.seen = set(snapshot["seen"])
        self.ids._rng.setstate(snapshot["ids"])

    def state_digest(self) -> str:
        """SHA-256 over every stored item (namespace, key, value, vectors) and each item's citing turn
        (not LangGraph's wall-clock `created_at`/`updated_at`)."""
        h = hashlib.sha256()
        for ns in sorted(self.store._data):
            for key in sorted(self.store._data[ns]):
                item = self.store._data[ns][key]
                vectors = self.store._vectors.get(ns, {}).get(key, {})
                h.update(json.dumps([list(ns), key, item.value, vectors, self.written.get(key, (None,))[0]],
                                    sort_keys=True, default=str).encode())
        return h.hexdigest()

    def close(self) -> None:
        self.store = None
        self._dir.close()
