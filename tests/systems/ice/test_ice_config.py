"""Configuration provenance, seed values, embedder parity and the package's boundaries."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from lsrep.systems.ice import HashingEmbedder, IceConfig
from lsrep.systems.ice.text import estimate_tokens
from pydantic import ValidationError

from lsrep.embed.hashing import HashingEmbedder as HarnessEmbedder

PACKAGE = Path(__file__).resolve().parents[3] / "systems" / "ice"


def test_seed_values_are_pinned():
    c = IceConfig()
    assert c.confidence_boost == 1.5
    assert c.empty_conversation_budget == 2000
    assert (c.traversal_depth, c.fuzzy_threshold, c.context_edges) == (3, 0.85, 10)
    assert c.cross_conversation_cap == 3
    assert c.fusion == "rrf"


def test_every_field_has_a_provenance_label():
    labels = IceConfig.provenance()
    assert set(labels) == set(IceConfig.model_fields)
    assert set(labels.values()) <= {"seed", "infer", "chosen", "switch"}
    seeds = {k for k, v in labels.items() if v == "seed"}
    assert seeds == {"confidence_boost", "empty_conversation_budget", "traversal_depth",
                     "fuzzy_threshold", "context_edges", "fusion"}
    assert labels["cross_conversation_cap"] == "infer"
    assert labels["rrf_k"] == labels["decay_half_life_days"] == "chosen"


def test_fingerprint_is_stable_and_sensitive():
    assert IceConfig().fingerprint() == IceConfig().fingerprint()
    assert IceConfig(rrf_k=61).fingerprint() != IceConfig().fingerprint()
    assert (IceConfig(disabled=frozenset({"a", "b"})).fingerprint()
            == IceConfig(disabled=frozenset({"b", "a"})).fingerprint())
    with pytest.raises(ValidationError):
        IceConfig(no_such_field=1)


def test_hashing_embedder_matches_the_harness_algorithm():
    texts = ["I live in Lisbon.", "", "The Obsidian Citadel is in Varn"]
    ours, theirs = HashingEmbedder(512).embed(texts), HarnessEmbedder(512).embed(texts)
    assert np.array_equal(ours, theirs)
    assert HashingEmbedder(512).name == HarnessEmbedder(512).name


def test_token_estimate_is_chars_over_four():
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text())) for p in sorted(PACKAGE.glob("*.py"))]


def test_system_never_imports_the_harness_or_adapters():
    for path, tree in _modules():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in {"lsrep", "adapters"}, f"{path.name}: {name}"


def test_system_never_reads_the_wall_clock():
    banned = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"),
              ("time", "time"), ("time", "monotonic"), ("time", "perf_counter")}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert (node.value.id, node.attr) not in banned, f"{path.name}: {node.attr}"
            if isinstance(node, ast.ImportFrom) and node.module == "time":
                raise AssertionError(f"{path.name} imports from time")


def test_modules_stay_readable_in_one_sitting():
    for path, _tree in _modules():
        assert len(path.read_text().splitlines()) < 400, path.name
