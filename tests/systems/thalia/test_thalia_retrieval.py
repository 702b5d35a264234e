"""Stage 1: BM25, the hashing lane, weighted RRF, recency, MMR, PRF and the evidence budget."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from lsrep.systems.thalia import DeliveryMode
from lsrep.systems.thalia.fusion import Lane, Scored, apply_recency, mmr_order, weighted_rrf
from lsrep.systems.thalia.lexical import BM25, expansion_terms
from lsrep.systems.thalia.text import content_tokens
from thalia_testkit import T0, feed


def test_bm25_counts_query_occurrences_and_excludes_zero_scores():
    docs = ["wifi password bluefish42", "garden party", "wifi router", "wifi password"]
    bm = BM25(docs)
    once, twice = bm.scores("wifi"), bm.scores("wifi wifi")
    assert twice == pytest.approx([2 * s for s in once])
    assert bm.scores("unknownterm") == [0.0] * 4
    assert [h.doc for h in bm.top_k("wifi", 10)] == [2, 3, 0]  # short docs tie by index; 1 excluded
    tie = BM25(["alpha beta", "alpha beta", "gamma"])
    assert [h.doc for h in tie.top_k("alpha", 5)] == [0, 1]  # ties: ascending index
    n, n_t, f, dl, avg = 4, 3, 1, 3, 9 / 4
    idf = math.log(1 + (n - n_t + 0.5) / (n_t + 0.5))
    assert bm.scores("wifi")[0] == pytest.approx(idf * f * 2.5 / (f + 1.5 * (0.25 + 0.75 * dl / avg)))


def test_rrf_formula_dedup_and_tie_order():
    fused = weighted_rrf([Lane("a", (5, 7, 5, 9), 0.65), Lane("b", (9,), 0.35)], k=60)
    scores = {f.doc: f.score for f in fused}
    assert scores[5] == pytest.approx(0.65 / 61)
    assert scores[7] == pytest.approx(0.65 / 62)
    assert scores[9] == pytest.approx(0.65 / 63 + 0.35 / 61)  # de-duplicated: rank 2, not 3
    tied = weighted_rrf([Lane("a", (4,), 0.5), Lane("b", (2,), 0.5)])
    assert [f.doc for f in tied] == [2, 4]
    assert weighted_rrf([]) == []


def test_recency_formula():
    items = [Scored(0, 0.3, 10), Scored(1, 0.2, 20), Scored(2, 0.25, -1)]
    out = apply_recency(items, 0.5)
    assert [(s.doc, s.score) for s in out] == [(0, 0.375), (1, 0.35), (2, 0.25)]
    assert apply_recency([Scored(0, 0.3, 0), Scored(1, 0.1, -2)], 1.0) == [Scored(0, 0.3, 0),
                                                                         Scored(1, 0.1, -2)]


def test_mmr_first_pick_and_all_equal_scores():
    sim = lambda i, j: 1.0 if {i, j} == {0, 1} else 0.0  # noqa: E731
    assert mmr_order([0.2, 0.9, 0.5], sim, 0.5)[0] == 1
    assert mmr_order([0.4, 0.4, 0.4], sim, 0.0) == [0, 2, 1]  # rel all 1; 1 duplicates 0


def test_mmr_lambda0_evicts_near_duplicate_gold(make, recorder):  # T-13
    """Tight budget (max_evidence 2; top_k 3 so that a third candidate exists): the gold is a
    near-duplicate of the top window. λ = 0 evicts it; the default λ keeps it. On this data the
    smallest λ on the grid that keeps it is 0.5 (the seed's 0.3 is data-dependent)."""
    texts = ["wifi password hunter1", "wifi password hunter2", "wifi password list"]
    kept = {}
    for lam in (0.0, 0.3, 0.5, 0.7, 1.0):
        t = make(f"l{lam}", mmr=True, mmr_lambda=lam, top_k=3, max_evidence=2)
        feed(t, [("user", x) for x in texts])
        recorder.clear()
        out = t.answer("wifi password", timestamp=T0)
        kept[lam] = "line:1" in [r.window.window_id for r in out.retriever.ranked]
        if lam == 0.0:
            assert recorder.of("retriever.mmr", "output")[0].params["evicted"] == ["line:1"]
    assert kept == {0.0: False, 0.3: False, 0.5: True, 0.7: True, 1.0: True}


def test_prf_dilutes_a_precise_query(make):  # T-14
    texts = ["the wifi password is bluefish42", "wifi router guest network password reset",
             "guest router network cabin", "router network guest cabin wifi"]
    ranks = {}
    for prf in (False, True):
        t = make(f"p{prf}", query_expansion=prf, top_k=2, max_evidence=2)
        feed(t, [("user", x) for x in texts])
        out = t.answer("wifi password", timestamp=T0)
        ids = [r.window.window_id for r in out.retriever.full_ranking]
        ranks[prf] = ids.index("line:0") if "line:0" in ids else len(ids)
        if prf:
            assert out.retriever.expansion_terms
    assert ranks[True] >= ranks[False] == 0


def test_prf_terms_rule():
    terms = expansion_terms("wifi password", ["guest router network", "router network ok",
                                              "router is up"], 5)
    assert terms == ["router", "network", "guest"]  # c desc, then alphabetical; len <= 2 dropped


def test_file_based_overflow(make, recorder, tmp_path):  # T-11
    t = make(context_budget_tokens=12, evidence_dir=str(tmp_path / "evidence"))
    feed(t, [("user", f"wifi password note number {n} bluefish42") for n in range(4)])
    out = t.answer("wifi password", timestamp=T0)
    r = out.retriever
    assert r.delivery_mode is DeliveryMode.FILE_BASED and r.evidence_tokens > 12
    assert 0 < len(r.inline) < len(r.ranked)
    selected = recorder.ids("retriever.rrf", "selected")
    in_prompt = recorder.ids("retriever.rrf", "in_prompt")
    assert in_prompt < selected  # selected but not in prompt is visible
    rows = [json.loads(x) for x in Path(r.evidence_file).read_text().splitlines()]
    assert [x["window_id"] for x in rows] == [e.window.window_id for e in r.ranked]
    assert "delivered by file" in out.reasoner.messages[-1]["content"]
    budget = recorder.of("retriever.budget", "executed")[0].params
    assert budget["mode"] == "file_based" and budget["budget"] == 12


def test_budget_boundary_is_inline(make):
    t = make(context_budget_tokens=7)
    feed(t, [("user", "wifi password bluefish42")])  # "[2024-05-01] User: ..." = 7 tokens
    out = t.answer("wifi password", timestamp=T0)
    assert out.retriever.evidence_tokens == 7 and out.retriever.delivery_mode is DeliveryMode.INLINE


def test_lane_and_fusion_ablation(make, recorder):
    texts = ["wifi password bluefish42", "guest wifi", "password hint"]
    t = make(ablate=frozenset({"retriever.hashing"}))
    feed(t, texts)
    out = t.answer("wifi password", timestamp=T0)
    assert recorder.stages("retriever.hashing") == {"eligible", "skipped"}
    assert all(r.semantic_rank is None for r in out.retriever.ranked)
    recorder.clear()
    t2 = make("b", ablate=frozenset({"retriever.rrf"}))
    feed(t2, texts)
    out2 = t2.answer("wifi password", timestamp=T0)
    assert recorder.stages("retriever.rrf") == {"eligible", "skipped"}
    assert out2.retriever.ranked[0].window.window_id == "line:0"


class ConceptEmbedder:
    """A tiny deterministic 'learned' embedder: synonyms share one concept dimension."""

    CONCEPTS = {"wifi": 0, "network": 0, "password": 1, "code": 1, "access": 1, "garden": 2,
                "review": 3}

    def embed(self, texts):
        out = np.zeros((len(texts), 4))
        for row, text in enumerate(texts):
            for tok in content_tokens(text):
                if tok in self.CONCEPTS:
                    out[row, self.CONCEPTS[tok]] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)


def test_hashing_surrogate_misses_paraphrase_and_embedder_plugs_in(make, tmp_path):  # T-5
    from lsrep.systems.thalia import HarnessConfig, Thalia
    from lsrep.systems.thalia.embedding import HashingEmbedder
    from lsrep.systems.thalia.semantic import SemanticIndex

    gold, distractor = "the wifi password is bluefish42", "access to the garden code review"
    query = "access code for the network"
    surrogate = SemanticIndex([gold, distractor], HashingEmbedder()).top_k(query, 2)
    assert [h.doc for h in surrogate][0] == 1  # sub-word overlap wins; the paraphrase ranks low
    learned = SemanticIndex([gold, distractor], ConceptEmbedder()).top_k(query, 2)
    assert learned[0].doc == 0
    # In the pipeline the Inspector's grep already drops the gold (no shared content token).
    t = make()
    feed(t, [("user", gold), ("user", distractor)])
    assert "line:0" not in [w.window_id for w in t.answer(query, timestamp=T0).inspector.windows]
    # With nothing to grep (fallback: every record), the injected embedder ranks the gold first.
    plugged = Thalia(tmp_path / "learned", HarnessConfig(), embedder=ConceptEmbedder())
    feed(plugged, [("user", gold), ("user", "the garden review was lovely")])
    out = plugged.answer("access code for the net", timestamp=T0)
    assert out.inspector.metadata.fallback == "overlap"
    first = [r for r in out.retriever.full_ranking if r.semantic_rank == 0]
    assert first[0].window.window_id == "line:0"
    plugged.close()
