"""Adapters declaring conditional determinism (`deterministic = "when-model-is"`)."""

from __future__ import annotations

from tests.conformance.broken_adapters import NondeterministicAdapter, ReferenceAdapter


class ConditionalReference(ReferenceAdapter):
    """Deterministic, declared deterministic only when its model is."""

    deterministic = "when-model-is"


class ConditionalNoisy(NondeterministicAdapter):
    """Noisy although its model (none, or the suite's offline one) is deterministic."""

    deterministic = "when-model-is"


class MaybeDeterministic(ReferenceAdapter):
    """Declares a determinism value the protocol does not know."""

    deterministic = "sometimes"
