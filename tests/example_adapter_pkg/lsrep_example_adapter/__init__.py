"""A keyword memory for LSREP: the system (`memory`) and its adapter (`adapter`)."""

from lsrep_example_adapter.adapter import KeywordMemoryAdapter
from lsrep_example_adapter.memory import KeywordMemory

__all__ = ["KeywordMemory", "KeywordMemoryAdapter"]
