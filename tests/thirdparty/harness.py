"""Build a bundled third-party adapter in-process on the offline memory model (the real gateway,
the real offline responder and its profiles), for tests that drive it directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from lsrep.contract import AdapterSetup, ReplayTurn
from lsrep.memory_model.accounting import CallBook
from lsrep.memory_model.inprocess import build_attributed
from lsrep.memory_model.relay import MemoryRelay
from lsrep.protocol.campaign import MemoryModelSpec
from lsrep.registry import load_adapter_class

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def offline_relay() -> MemoryRelay:
    return MemoryRelay(CallBook("test", "test", "test"), llm=MemoryModelSpec(kind="offline"),
                       embedder=MemoryModelSpec(kind="offline", dimensions=64))


def build(system: str, relay: MemoryRelay, **options: Any) -> Any:
    cls = load_adapter_class(system)
    opts = cls.Options.model_validate(options)

    def make(**models: Any) -> Any:
        return cls(AdapterSetup(options=opts, **models))

    return build_attributed(make, relay)


def turns(*lines: tuple[str, str], session: str = "s1", start: datetime = START) -> list[ReplayTurn]:
    """Turns from (speaker, content) pairs, an hour apart."""
    return [ReplayTurn(turn_id=f"t{i}", session_id=session, conversation_id="c", index=i,
                       timestamp=start + timedelta(hours=i), role="user", speaker=speaker, content=content)
            for i, (speaker, content) in enumerate(lines)]


def wraps_library(name: str) -> bool:
    """A registered adapter that wraps a third-party library (it declares `distributions`): it needs
    the library's extra and a memory model, so campaign tests over every system leave it to
    tests/thirdparty."""
    return bool(getattr(load_adapter_class(name), "distributions", ()))


def missing_distributions(name: str) -> list[str]:
    """The distributions a registered adapter declares that are not installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    missing = []
    for dist in getattr(load_adapter_class(name), "distributions", ()):
        try:
            distribution(dist)
        except PackageNotFoundError:
            missing.append(dist)
    return missing
