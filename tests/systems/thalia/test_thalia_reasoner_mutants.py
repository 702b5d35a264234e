"""Recall, MEMORY.md and the Reasoner pinned by exact values (the `thalia-reasoner` mutation
session)."""

from __future__ import annotations

from lsrep.systems.thalia.memory import jaccard


def test_jaccard_exact():
    assert jaccard("", "") == 0.0
    assert jaccard("office Berlin tower", "office Munich tower") == 0.5
