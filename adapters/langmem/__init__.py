"""Adapter for LangMem (`langmem` memory store manager on a LangGraph `InMemoryStore`):
install with `lsrep[langmem]`.

LangMem's chat model (`ChatOpenAI`) and embeddings (`OpenAIEmbeddings`) are pointed at the
condition's memory gateway (`setup.memory_llm`, `setup.memory_embedder`), so every tool-calling
extraction and every embedding request is LSREP's to cache, limit and record. See
docs/adapters.md, "Wrapping an LLM-backed library".
"""

from lsrep.adapters.langmem.adapter import LangMemAdapter

__all__ = ["LangMemAdapter"]
