"""`adapter_host = "in-process"`: the gateway runs in the harness, and calls are attributed here.

The adapter is built with handles on a gateway whose requests go straight to the unit's relay;
:class:`AttributedAdapter` wraps it so every model request made during an adapter call is booked
to that call, as the host client does for hosted adapters.
"""

from __future__ import annotations

from typing import Any

METHODS = ("reset", "ingest", "query", "end_session", "maintain", "snapshot", "restore", "state_digest")


class AttributedAdapter:
    """The adapter with its methods bracketed by the relay's attribution; everything else passes through."""

    def __init__(self, adapter: Any, relay: Any, gateway: Any) -> None:
        self._adapter, self._relay, self._gateway = adapter, relay, gateway
        self.cls = type(adapter)
        """The wrapped adapter's class (as a hosted adapter names its class)."""
        for name in METHODS:
            setattr(self, name, self._bracket(name, getattr(adapter, name)))

    def _bracket(self, method: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self._relay.begin(method, args, kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                self._relay.end()

        return call

    def close(self) -> None:
        self._relay.begin("close")
        try:
            self._adapter.close()
        finally:
            self._relay.end()
            if self._gateway is not None:
                self._gateway.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


def build_attributed(build: Any, relay: Any) -> Any:
    """`build(memory_llm=..., memory_embedder=...)` with handles on an in-process gateway, wrapped."""
    from lsrep.memory_model.handles import open_handles

    gateway, llm, embedder = open_handles(relay.serve, relay.public())
    relay.begin("build")
    try:
        adapter = build(memory_llm=llm, memory_embedder=embedder)
    except BaseException:
        if gateway is not None:
            gateway.close()
        raise
    finally:
        relay.end()
    return AttributedAdapter(adapter, relay, gateway)
