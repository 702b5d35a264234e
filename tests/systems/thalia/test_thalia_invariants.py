"""The executable invariants of the THALIA paper, section 15.1, one test (or more) each."""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from lsrep.systems.thalia import CallableLM, DuplicateEpisodeError, Thalia
from lsrep.systems.thalia.contracts import Episode
from lsrep.systems.thalia.embedding import HashingEmbedder
from lsrep.systems.thalia.fusion import Lane, Scored, apply_recency, mmr_order, weighted_rrf
from lsrep.systems.thalia.lexical import BM25, expand_query, expansion_terms
from lsrep.systems.thalia.text import distinct_tokens, tokenize
from thalia_testkit import T0, feed, filler, open_thalia

SYSTEM_DIR = Path(__file__).resolve().parents[3] / "systems" / "thalia"


def _corpus(rng: random.Random, n: int) -> list[str]:
    return [filler(rng, rng.randint(1, 15)) for _ in range(n)]


def test_bm25_idf_nonnegative():
    rng = random.Random(1)
    for n in (1, 2, 7, 40):
        bm25 = BM25(_corpus(rng, n) + ["garden"] * 3)  # a term in (nearly) every document too
        for term in bm25.df:
            assert bm25.idf(term) >= 0
        assert all(s >= 0 for s in bm25.scores("garden garden coffee unknownterm"))


def test_rrf_monotonic_in_rank():
    rng = random.Random(2)
    for _ in range(50):
        a = rng.sample(range(30), 12)
        b = rng.sample(range(30), 12)
        fused = {f.doc: f.score for f in weighted_rrf([Lane("a", tuple(a), 0.65),
                                                       Lane("b", tuple(b), 0.35)])}
        only_a = [d for d in a if d not in b]
        for x, y in zip(only_a, only_a[1:], strict=False):
            assert fused[x] >= fused[y]
        single = weighted_rrf([Lane("a", tuple(a), 1.0)])
        assert [f.doc for f in single] == a
        assert all(p.score >= q.score for p, q in zip(single, single[1:], strict=False))


def test_rrf_agreement_boost():
    rng = random.Random(3)
    for _ in range(50):
        rest = rng.sample(range(1, 40), 20)
        a, b = (0, *rest[:10]), (0, *rest[10:])
        fused = weighted_rrf([Lane("a", a, 0.65), Lane("b", b, 0.35)])
        assert fused[0].doc == 0
        single = [f for f in fused if (f.doc in a) != (f.doc in b)]
        assert all(fused[0].score > f.score for f in single)


def test_embedding_determinism():
    texts = ["My wifi password is bluefish42", "", "  spaced\tout  TEXT ", "ünïcödé trigram"]
    one, two = HashingEmbedder(), HashingEmbedder()
    assert np.array_equal(one.embed(texts), two.embed(texts))
    assert np.array_equal(one.embed(texts[:1])[0], one.embed(texts)[0])
    assert not one.embed([""]).any()  # empty input: the zero vector
    assert np.isclose(np.linalg.norm(one.embed(texts[:1])[0]), 1.0)


def test_mmr_lambda1_is_relevance():
    rng = random.Random(4)
    emb = HashingEmbedder()
    for _ in range(30):
        n = rng.randint(1, 12)
        texts = [filler(rng, 5) for _ in range(n)]
        vecs = emb.embed(texts)
        lanes = [Lane("a", tuple(rng.sample(range(n), n)), 0.65),
                 Lane("b", tuple(rng.sample(range(n), n)), 0.35)]
        fused = weighted_rrf(lanes)
        docs = [f.doc for f in fused]

        def sim(i: int, j: int, v=vecs, d=docs) -> float:
            return float(v[d[i]] @ v[d[j]])

        order = mmr_order([f.score for f in fused], sim, 1.0)
        assert order == list(range(len(fused)))
    assert mmr_order([0.5, 0.5, 0.5], lambda i, j: 1.0, 1.0) == [0, 1, 2]  # exact ties


def test_mmr_lambda1_is_relevance_in_retriever(make):
    plain, diverse = make("a"), make("b", mmr=True, mmr_lambda=1.0)
    texts = [f"my {w} password is bluefish{n}" for n, w in enumerate(["wifi", "router", "wifi",
                                                                     "cabin", "wifi"])]
    feed(plain, texts), feed(diverse, texts)
    q = "what is the wifi password"
    assert ([r.window.window_id for r in plain.answer(q, timestamp=T0).retriever.ranked]
            == [r.window.window_id for r in diverse.answer(q, timestamp=T0).retriever.ranked])


def test_episode_append_only(make):
    t = make()
    feed(t, ["my wifi password is bluefish42"])
    with pytest.raises(DuplicateEpisodeError):
        t.append_turn("again", role="user", session_id="s1", timestamp=T0, source_id="t0")
    dup = Episode(turn_id=1, source_id="other", session_id="s1", timestamp=T0, role="user",
                  speaker="", query="overwrite", answer="")
    with pytest.raises(DuplicateEpisodeError):
        t.store.append(dup)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        t.store.conn.execute("UPDATE episodes SET query = 'x'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        t.store.conn.execute("DELETE FROM episodes")
    assert [e.query for e in t.store.episodes()] == ["my wifi password is bluefish42"]
    assert len(t.transcript) == 1  # the rejected turn never reached the transcript


def test_consolidation_gate_strict(make):
    rng = random.Random(5)
    templates = ["I now work at {w}", "remember that my {w} is blue", "the {w} was nice",
                 "what is my {w}", "I switched to {w}", "note that {w} matters", "{w} {w}"]
    t = make()
    outs = []
    for i in range(120):
        text = rng.choice(templates).format(w=rng.choice(["garden", "piano", "office", "cat"]))
        role = "user" if i % 3 else "assistant"
        outs.append(t.append_turn(text, role=role, session_id=f"s{i // 10}",
                                  timestamp=T0 + timedelta(minutes=i), source_id=f"t{i}"))
        if i % 10 == 9:
            end = t.end_session(f"s{i // 10}", timestamp=T0 + timedelta(minutes=i))
            if end is not None:
                outs.append(end)
    for out in outs:
        fired = out.action != "none"
        dual_key = out.requires_consolidation and any(out.criteria.values())
        assert not fired or dual_key  # consolidation only under the dual key
        if out.episode is not None:  # per turn, the dual key is also sufficient
            assert fired == dual_key
    assert any(o.action != "none" for o in outs)
    assert sum(o.action != "none" for o in outs) < len(outs) / 2  # never "every turn"
    assistant = [o for o in outs if o.episode is not None and o.episode.role == "assistant"]
    assert all(o.action == "none" for o in assistant)


def test_harness_determinism(tmp_path):
    rng = random.Random(6)
    texts = [filler(rng, 8) for _ in range(60)] + ["my wifi password is bluefish42"]
    answers = []
    for n in range(2):
        with open_thalia(tmp_path / f"h{n}") as t:
            feed(t, texts)
            out = t.answer("what is the wifi password", timestamp=T0)
            answers.append((out.reasoner.answer, out.reasoner.citations, out.reasoner.messages))
    assert answers[0] == answers[1]
    assert "bluefish42" in answers[0][0]


def test_answer_grounded(make):
    t = make()
    rng = random.Random(7)
    feed(t, [filler(rng, 8) for _ in range(30)])
    for q in ["garden coffee", "what about the piano", "the", "museum pottery river"]:
        out = t.answer(q, timestamp=T0)
        if out.retriever.inline:
            assert out.reasoner.citations
    off_topic = Thalia(t.state_dir / "x", lm=CallableLM(lambda m: "zzz nothing shared"))
    feed(off_topic, ["garden coffee museum"])
    out = off_topic.answer("garden", timestamp=T0)
    assert out.reasoner.citations and out.reasoner.citation_fallback
    off_topic.close()


def test_query_expansion_superset():
    rng = random.Random(8)
    for _ in range(40):
        q = filler(rng, rng.randint(1, 6)) + " What's up?"
        docs = [filler(rng, 10) for _ in range(3)]
        expanded = expand_query(q, expansion_terms(q, docs, 5))
        assert distinct_tokens(q) <= distinct_tokens(expanded)
        assert tokenize(expanded)[: len(tokenize(q))] == tokenize(q)


def test_query_expansion_superset_in_retriever(make, recorder):
    t = make(query_expansion=True)
    feed(t, ["my wifi password is bluefish42", "the wifi router sits in the hallway closet"])
    out = t.answer("wifi password?", timestamp=T0)
    assert distinct_tokens("wifi password?") <= distinct_tokens(out.retriever.query)
    assert out.retriever.expansion_terms
    assert recorder.of("retriever.prf", "output")


def test_recall_readonly(make):
    from lsrep.systems.thalia.events import EventRelay
    from lsrep.systems.thalia.recall import recall_windows

    from lsrep.contract import digest_directory

    t = make(recall=True)
    feed(t, ["my wifi password is bluefish42", "noted", "remember that the cabin code is 4411"])
    before = digest_directory(t.state_dir)
    rows = len(t.store)
    hits = recall_windows("What's the wifi password?", t.store, set(), t.config, EventRelay())
    assert hits and hits[0].source_index == -1
    t.answer("What's the wifi password?", timestamp=T0)
    assert digest_directory(t.state_dir) == before
    assert len(t.store) == rows


def test_recency_zero_noop():
    rng = random.Random(9)
    for _ in range(30):
        items = [Scored(d, rng.choice([0.1, 0.2, 0.2, 0.3]), rng.randint(-3, 50)) for d in range(10)]
        assert apply_recency(items, 0.0) == items
    active = apply_recency([Scored(0, 0.3, 1), Scored(1, 0.2, 40)], 0.5)
    assert [s.doc for s in active] == [1, 0]  # the later window overtakes: an active branch


def test_recency_zero_noop_in_retriever(make):
    texts = ["my office is in Berlin", "lunch was fine", "my office is in Munich now"]
    a, b = make("a"), make("b", recency_weight=0.0)
    feed(a, texts), feed(b, texts)
    ra = a.answer("where is my office", timestamp=T0).retriever.ranked
    rb = b.answer("where is my office", timestamp=T0).retriever.ranked
    assert [(r.window.window_id, r.score) for r in ra] == [(r.window.window_id, r.score) for r in rb]


FORBIDDEN = {
    "wall clock": re.compile(r"datetime\.now|datetime\.utcnow|date\.today|time\.time\(|"
                             r"time\.monotonic|perf_counter|time\.localtime|import time\b"),
    "network": re.compile(r"import (requests|httpx|socket|urllib)|from (requests|httpx|urllib)|"
                          r"http\.client"),
    "model SDK": re.compile(r"import (openai|anthropic|ollama)|from (openai|anthropic)"),
    "mock framework": re.compile(r"unittest\.mock|MagicMock|import mock\b"),
    "harness import": re.compile(r"^\s*(from|import) (lsrep|adapters)\b", re.MULTILINE),
    "unseeded randomness": re.compile(r"^\s*import random|from random import", re.MULTILINE),
}


def test_static_determinism_guard():
    sources = sorted(SYSTEM_DIR.glob("*.py"))
    assert len(sources) >= 10
    for path in sources:
        text = path.read_text()
        for what, pattern in FORBIDDEN.items():
            assert not pattern.search(text), f"{path.name}: {what} ({pattern.search(text)})"
