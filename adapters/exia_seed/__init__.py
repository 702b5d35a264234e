"""EXIA SEED adapter: the provider in `systems.exia_seed`, run inside a Hermes-style host."""

from .adapter import MECHANISMS, ExiaSeedAdapter, Options
from .host import HermesHost, build_memory_context_block

__all__ = ["MECHANISMS", "ExiaSeedAdapter", "HermesHost", "Options", "build_memory_context_block"]
