"""Stage 0: grep, relevance, fallbacks, partitioning, adaptive windows, the recall bottleneck."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from lsrep.systems.thalia.config import HarnessConfig
from lsrep.systems.thalia.events import EventRelay
from lsrep.systems.thalia.inspector import Inspector
from lsrep.systems.thalia.lexical import BM25
from lsrep.systems.thalia.transcript import token_pattern
from thalia_testkit import (
    BOTTLENECK_QUERY,
    T0,
    Recorder,
    bottleneck_haystack,
    feed,
    filler,
    open_thalia,
    transcript_of,
)

_transcript = transcript_of


def _inspect(lines: list[str], query: str, **config) -> tuple:
    rec = Recorder()
    out = Inspector(HarnessConfig(**config), EventRelay(rec)).inspect(query, _transcript(lines))
    return out, rec


def test_relevance_and_fine_ranking():
    lines = ["wifi router", "the password is here", "wifi password bluefish42", "nothing", "wifi"]
    out, rec = _inspect(lines, "What is the wifi password?")
    meta = out.metadata
    assert meta.query_tokens == ("password", "wifi")
    assert [w.source_index for w in out.windows] == [2, 0, 1, 4]  # ρ desc, then index
    assert [w.rho for w in out.windows] == [1.0, 0.5, 0.5, 0.5]
    assert meta.confidence == 1.0 and meta.fallback == "none"
    assert rec.ids("inspector.grep", "selected") == {"line:2", "line:0", "line:1", "line:4"}


def test_grep_index_matches_regex_scan():
    rng = random.Random(1)
    lines = [filler(rng, 6) + rng.choice(["", " wifi-password", " wifi_x", " Wifi."]) for _ in range(80)]
    t = _transcript(lines)
    for token in ["wifi", "password", "coffee", "garden"]:
        assert sorted(t.overlap_counts([token])) == t.grep(token_pattern(token))


def test_fallback_order_for_stopword_query():  # T-12
    lines = [f"line number {i}" for i in range(30)]
    out, rec = _inspect(lines, "what is the")
    assert out.metadata.fallback == "order"
    assert [w.source_index for w in out.windows] == list(range(15))
    assert rec.stages("inspector.fallback_order") >= {"eligible", "executed", "output", "selected"}
    assert rec.stages("inspector.grep") == {"ineligible"}


def test_fallback_overlap_when_grep_finds_nothing():  # T-12
    lines = [f"line number {i}" for i in range(30)]
    out, rec = _inspect(lines, "tell me about zebras")
    assert out.metadata.fallback == "overlap" and out.metadata.n_matches == 0
    assert [w.source_index for w in out.windows] == list(range(15))
    assert rec.stages("inspector.fallback_overlap") >= {"eligible", "executed", "selected"}
    assert rec.of("inspector.grep", "executed")[0].count == 0


def test_partition_discards_matching_gold():  # T-2
    lines = [f"filler {i}" for i in range(300)]
    lines[250] = "cabin network passphrase is bluefish42"  # gold: the best single line (ρ = 3/4)
    for i in range(40, 60):                                 # a dense region of weak matches
        lines[i] = "the cabin was cold"
    out, rec = _inspect(lines, "cabin network router passphrase")
    meta = out.metadata
    assert meta.partitioned and meta.kept_blocks == (8, 9, 10, 11)
    assert 250 in meta.discarded_matches
    assert 250 not in meta.selected_indices  # unreachable downstream, though grep matched it
    executed = rec.of("inspector.partition", "executed")[0]
    assert 250 in executed.params["discarded_matches"]
    assert executed.params["records_discarded"] == 280
    unpartitioned, _ = _inspect(lines, "cabin network router passphrase", partition_threshold=1000)
    assert 250 in unpartitioned.metadata.selected_indices


def test_partition_ablation_and_threshold():
    lines = [f"filler {i}" for i in range(250)]
    _, rec = _inspect(lines, "filler", ablate=frozenset({"inspector.partition"}))
    assert rec.stages("inspector.partition") == {"eligible", "skipped"}
    _, rec = _inspect(lines[:200], "filler")
    assert rec.stages("inspector.partition") == {"ineligible"}


def test_adaptive_windows_leave_compact_contexts_unchanged():
    rng = random.Random(2)
    lines = [filler(rng, 8) for _ in range(70)]
    base, _ = _inspect(lines, "garden coffee piano")
    wide, rec = _inspect(lines, "garden coffee piano", adaptive_windows=True)
    assert base.windows == wide.windows
    assert rec.stages("inspector.adaptive_windows") == {"eligible", "executed"}  # no widening


@pytest.fixture(scope="module")
def haystack_dir(tmp_path_factory) -> tuple[Path, int]:
    """The T-1 haystack ingested once; tests copy the state directory."""
    texts, gold = bottleneck_haystack()
    path = tmp_path_factory.mktemp("t1") / "state"
    with open_thalia(path) as t:
        feed(t, texts)
    return path, gold


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def test_inspector_recall_bottleneck(haystack_dir, tmp_path):  # T-1
    src, gold = haystack_dir
    gold_id = f"line:{gold}"
    # Full-haystack ranking finds the gold: the harness-side "ranking recall".
    default_rec, adaptive_rec = Recorder(), Recorder()
    with open_thalia(_copy(src, tmp_path / "a"), default_rec) as t:
        lines = [r.text for r in t.transcript.records]
        assert gold in [h.doc for h in BM25(lines).top_k(BOTTLENECK_QUERY, 10)]
        out = t.answer(BOTTLENECK_QUERY, timestamp=T0)
    # Default 15 windows: the gold never reaches the Retriever.
    assert out.inspector.metadata.effective_max_windows == 15
    assert gold_id not in default_rec.ids("inspector.grep", "selected")
    assert gold in default_rec.of("inspector.partition", "executed")[0].params["discarded_matches"]
    assert gold_id not in default_rec.ids("retriever.bm25", "output")
    assert "bluefish42" not in out.reasoner.answer
    # Adaptive windows: it does, and the pipeline answers from it.
    with open_thalia(_copy(src, tmp_path / "b"), adaptive_rec, adaptive_windows=True) as t:
        out = t.answer(BOTTLENECK_QUERY, timestamp=T0)
    assert out.inspector.metadata.effective_max_windows == 300
    assert gold_id in adaptive_rec.ids("inspector.grep", "selected")
    assert gold_id in adaptive_rec.ids("retriever.bm25", "output")
    assert "bluefish42" in out.reasoner.answer
    assert adaptive_rec.of("inspector.adaptive_windows", "output")[0].count == 300
    assert gold_id in adaptive_rec.ids("inspector.adaptive_windows", "selected")


def test_recall_bypasses_the_bottleneck_when_enabled(haystack_dir, tmp_path):
    src, gold = haystack_dir
    rec = Recorder()
    with open_thalia(_copy(src, tmp_path / "c"), rec, recall=True) as t:
        out = t.answer(BOTTLENECK_QUERY, timestamp=T0)
    recalled = [w for w in out.recalled if "bluefish42" in w.text]
    assert recalled and recalled[0].source_index < 0
    assert rec.of("recall.fts", "output") and "bluefish42" in out.reasoner.answer
