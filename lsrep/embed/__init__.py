"""Build the campaign's embedder from its spec."""

from __future__ import annotations

from lsrep.contract import Embedder
from lsrep.embed.hashing import HashingEmbedder
from lsrep.errors import ConfigError
from lsrep.protocol.campaign import EmbedderSpec


def make_embedder(spec: EmbedderSpec) -> Embedder:
    match spec.kind:
        case "hashing":
            return HashingEmbedder(dim=spec.dim)
        case "openai":
            if spec.endpoint is None:
                raise ConfigError("embedder kind 'openai' needs an [embedder.endpoint] table")
            from lsrep.embed.model import OpenAIEmbedder

            return OpenAIEmbedder.from_endpoint(spec.endpoint)
        case "minilm":
            from lsrep.embed.model import MiniLMEmbedder

            return MiniLMEmbedder()
    raise ConfigError(f"unknown embedder kind {spec.kind!r}")
