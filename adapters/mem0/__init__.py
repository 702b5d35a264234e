"""Adapter for mem0 (`mem0ai` OSS `Memory`, local in-memory Qdrant): install with `lsrep[mem0]`.

mem0 builds its own OpenAI clients; they are pointed at the condition's memory gateway
(`setup.memory_llm`, `setup.memory_embedder`), so every extraction and embedding call is LSREP's
to cache, limit and record. Per ingested turn mem0 2.2.1 makes one JSON-mode extraction call
(ADD only) and embeds the turn and each extracted fact. See docs/adapters.md, "Wrapping an
LLM-backed library", for what is kept from mem0 and what is switched off and why.
"""

from lsrep.adapters.mem0.adapter import Mem0Adapter

__all__ = ["Mem0Adapter"]
