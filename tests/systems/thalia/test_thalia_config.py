"""Every [SEED] value pinned; every [CHOICE] value labelled `chosen`; precedence rules."""

from __future__ import annotations

import json
import math

import pytest
from lsrep.systems.thalia.config import (
    CATEGORIES,
    TIGHT_BUDGET_PRESET,
    ConfigError,
    HarnessConfig,
    resolve_config,
)
from lsrep.systems.thalia.fusion import RECENCY_DECIMALS
from lsrep.systems.thalia.inspector import effective_max_windows, kept_block_count
from lsrep.systems.thalia.lexical import ORDER_DECIMALS, bm25_idf
from lsrep.systems.thalia.routing import REACT_CATEGORIES

SEED_VALUES = {
    "top_k": 8, "max_evidence": 5, "rrf_k": 60, "lexical_weight": 0.65, "semantic_weight": 0.35,
    "task_conditioned_weights": True, "bm25_k1": 1.5, "bm25_b": 0.75, "query_expansion": False,
    "recency_weight": 0.0, "mmr": False, "max_windows": 15, "adaptive_windows": False,
    "adaptive_window_ratio": 5, "verify": False,
}
CHOSEN = {
    "category_weights", "hash_dim", "context_budget_tokens", "prf_feedback_docs", "prf_top_terms",
    "mmr_lambda", "evidence_dir", "partition_threshold", "partition_size", "window_radius",
    "render_dates", "recall", "recall_limit", "recall_drop_stopwords", "snapshot_refresh",
    "memory_update_jaccard", "sqlite_synchronous", "sqlite_journal_mode", "grounding_threshold",
    "citation_min_overlap",
}


def test_seed_values_pinned():
    cfg = HarnessConfig()
    assert {k for k, v in HarnessConfig.provenance().items() if v == "seed"} == set(SEED_VALUES)
    for name, value in SEED_VALUES.items():
        assert getattr(cfg, name) == value, name
        assert HarnessConfig.provenance()[name] == "seed", name
    assert TIGHT_BUDGET_PRESET == {"top_k": 2, "max_evidence": 2}
    assert CATEGORIES == ("temporal", "preference", "code", "multi-session", "knowledge-update",
                          "single-session")
    assert REACT_CATEGORIES == {"multi-session", "code", "knowledge-update"}
    assert ORDER_DECIMALS == 12 and RECENCY_DECIMALS == 8


def test_seed_formulas_pinned():
    assert bm25_idf(10, 3) == pytest.approx(math.log(1 + (10 - 3 + 0.5) / (3 + 0.5)))
    assert bm25_idf(5, 5) > 0
    assert kept_block_count(15, 5) == 4
    assert kept_block_count(3, 5) == 1
    cfg = HarnessConfig()
    assert effective_max_windows(cfg, 1500, True) == 300
    assert effective_max_windows(cfg, 76, True) == 16  # ceiling
    assert effective_max_windows(cfg, 60, True) == 15  # compact contexts keep the floor
    assert effective_max_windows(cfg, 1500, False) == 15


def test_chosen_values_labelled():
    prov = HarnessConfig.provenance()
    assert {k for k, v in prov.items() if v == "chosen"} == CHOSEN
    assert set(prov.values()) <= {"seed", "infer", "chosen", "switch"}
    assert prov["ablate"] == "switch" and prov["fts"] == "switch"
    chosen_defaults = {k: getattr(HarnessConfig(), k) for k in ("partition_threshold", "partition_size",
                                                               "hash_dim", "context_budget_tokens",
                                                               "recall_limit", "mmr_lambda")}
    assert chosen_defaults == {"partition_threshold": 200, "partition_size": 5, "hash_dim": 512,
                               "context_budget_tokens": 4096, "recall_limit": 5, "mmr_lambda": 0.7}


def test_task_conditioned_weights_direction():
    cfg = HarnessConfig()
    lex = {c: cfg.lane_weights(c)[0] / sum(cfg.lane_weights(c)) for c in CATEGORIES}
    assert lex["temporal"] > lex["code"] and lex["single-session"] > lex["multi-session"]
    assert lex["preference"] < lex["code"] and lex["knowledge-update"] < lex["multi-session"]
    assert cfg.lane_weights("code") == (0.65, 0.35)
    flat = HarnessConfig(task_conditioned_weights=False)
    assert {flat.lane_weights(c) for c in CATEGORIES} == {(0.65, 0.35)}


def test_precedence_file_env_explicit(tmp_path):
    toml = tmp_path / "harness.toml"
    toml.write_text('[harness]\ntop_k = 3\nmax_windows = 40\nunknown_key = 1\n')
    env = {"THALIA_MAX_WINDOWS": "50", "THALIA_MMR": "true", "THALIA_OPENROUTER_API_KEY": "x",
           "THALIA_ABLATE": "retriever.mmr, retriever.prf"}
    assert resolve_config(file=toml).top_k == 3
    cfg = resolve_config(file=toml, env=env, explicit={"mmr": False})
    assert (cfg.top_k, cfg.max_windows, cfg.mmr) == (3, 50, False)
    assert cfg.ablate == {"retriever.mmr", "retriever.prf"}
    as_json = tmp_path / "harness.json"
    as_json.write_text(json.dumps({"top_k": 4}))
    assert resolve_config(file=as_json).top_k == 4
    assert resolve_config().top_k == 8  # no environment unless given


@pytest.mark.parametrize("layer", ["file", "env", "explicit"])
def test_lane_weights_both_or_neither(tmp_path, layer):
    kwargs = {}
    if layer == "file":
        path = tmp_path / "c.toml"
        path.write_text("lexical_weight = 0.9\n")
        kwargs["file"] = path
    elif layer == "env":
        kwargs["env"] = {"THALIA_LEXICAL_WEIGHT": "0.9"}
    else:
        kwargs["explicit"] = {"semantic_weight": 0.1}
    with pytest.raises(ConfigError, match="both or neither"):
        resolve_config(**kwargs)
    both = resolve_config(explicit={"lexical_weight": 0.9, "semantic_weight": 0.1})
    assert both.lane_weights("code") == (0.9, 0.1)


def test_config_round_trip_and_validation():
    cfg = HarnessConfig(top_k=3, ablate=frozenset({"retriever.mmr"}))
    assert HarnessConfig.from_dict({**cfg.to_dict(), "stray": 1}) == cfg
    assert cfg.fingerprint() == HarnessConfig.from_dict(cfg.to_dict()).fingerprint()
    assert cfg.fingerprint() != HarnessConfig().fingerprint()
    with pytest.raises(ValueError):
        HarnessConfig(ablate=frozenset({"inspector.grep"}))
    with pytest.raises(ValueError):
        resolve_config(explicit={"no_such_field": 1})
