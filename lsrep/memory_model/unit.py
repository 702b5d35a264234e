"""A unit's memory-model plumbing: its relay, and the campaign embedder cached and booked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsrep.memory_model.accounting import CallBook
from lsrep.memory_model.relay import MemoryRelay


def unit_relay(task: Any, where: Callable[[], dict[str, Any]]) -> MemoryRelay:
    """The relay for one unit (`lsrep.engine.UnitTask`); inactive when the condition has no memory model."""
    return MemoryRelay(CallBook(task.run_id, task.unit_id, task.condition), llm=task.memory_llm,
                       embedder=task.memory_embedder, store_path=task.store_path,
                       refresh_before=task.refresh_cache_before, where=where)


def unit_embedder(task: Any, relay: MemoryRelay, make_embedder: Callable[[Any], Any]) -> Any:
    """The campaign's embedder for one unit; an endpoint embedder caches beside the store and books
    every call (role `embedder`) in the unit's `memory_calls`."""
    spec = task.embedder
    if spec.kind != "openai" or spec.endpoint is None:
        return make_embedder(spec)
    from lsrep.embed.model import OpenAIEmbedder
    from lsrep.judge.campaign import make_client

    client = make_client(spec.endpoint, task.store_path, refresh_before=task.refresh_cache_before)
    client.add_sink(relay.record_embedder_call)
    return OpenAIEmbedder(client)
