"""Test adapters that reach their memory model the way third-party libraries do.

`GatewayClientAdapter` builds its own `openai.OpenAI` client on `setup.memory_llm.base_url` with
the dummy key, inside the adapter host, and per ingested turn makes one JSON-schema chat call
(extract facts) and one embedding request; per query one embedding request and, when `tools` is
on, one tool-calling chat call. It returns the most similar stored facts with their turns.
"""

from __future__ import annotations

import json
import math
import time
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn

FACTS_SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["facts"],
}
SEARCH_TOOL = {"type": "function", "function": {
    "name": "search_memory", "description": "Search stored facts.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer",
                                                                                         "minimum": 1}},
                   "required": ["query", "limit"]}}}


class GatewayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: bool = True
    hold_s: float = 0.0
    """Seconds to wait inside each query (lets a test look at the live host process)."""
    direct: bool = False
    """Use `setup.memory_llm.chat` / `setup.memory_embedder.embed` instead of an OpenAI client."""


class GatewayClientAdapter(MemoryAdapter):
    name = "gateway-client"
    version = "1"
    Options = GatewayOptions

    def __init__(self, setup) -> None:
        super().__init__(setup)
        import openai

        llm, emb = setup.memory_llm, setup.memory_embedder
        if llm is None or emb is None:
            raise RuntimeError("gateway-client needs [memory_llm] and [memory_embedder]")
        self.chat_model, self.embed_model = llm.model, emb.model
        self.client = openai.OpenAI(base_url=llm.base_url, api_key=llm.api_key, max_retries=0)
        self.models = [m.id for m in self.client.models.list().data]

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.facts: list[tuple[str, str, list[float]]] = []

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if self.setup.options.direct:
            return self.setup.memory_embedder.embed(texts)
        rows = self.client.embeddings.create(model=self.embed_model, input=texts).data
        return [r.embedding for r in rows]

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        messages = [{"role": "system", "content": "Extract facts as JSON."},
                    {"role": "user", "content": f"{turn.speaker or turn.role}: {turn.content}"}]
        fmt = {"type": "json_schema", "json_schema": {"name": "facts", "schema": FACTS_SCHEMA}}
        if self.setup.options.direct:
            body = self.setup.memory_llm.chat(messages, response_format=fmt)
            content = body["choices"][0]["message"]["content"]
        else:
            reply = self.client.chat.completions.create(model=self.chat_model, messages=messages,
                                                        response_format=fmt)
            content = reply.choices[0].message.content
        facts = json.loads(content)["facts"]
        for fact, vec in zip(facts, self._embed(facts), strict=True):
            self.facts.append((fact, turn.turn_id, vec))

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if self.setup.options.hold_s and not getattr(self, "_held", False):
            self._held = True  # once: long enough for a test to read the live host's /proc entry
            time.sleep(self.setup.options.hold_s)
        if self.setup.options.tools:
            reply = self.client.chat.completions.create(
                model=self.chat_model, tools=[SEARCH_TOOL], tool_choice="required",
                messages=[{"role": "user", "content": question}])
            call = reply.choices[0].message.tool_calls[0]
            args = json.loads(call.function.arguments)
            assert call.function.name == "search_memory" and isinstance(args["limit"], int)
        (q,) = self._embed([question])
        ranked = sorted(self.facts, key=lambda f: -_cos(q, f[2]))[:5]
        return QueryResult(fragments=tuple(Fragment(text=t, source_turn_ids=(tid,), kind="fact")
                                           for t, tid, _ in ranked))


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
