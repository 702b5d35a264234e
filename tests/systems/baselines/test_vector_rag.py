"""vector-RAG: top-k by cosine, similarity descending, ties in time order, exact k, no silent change.

The embedder here maps each text to a chosen unit vector, so every similarity is known exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from lsrep.adapters.vector_rag import RETRIEVE, VectorRagAdapter, VectorRagOptions
from lsrep.systems.vector_rag import Hit, VectorRagMemory

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class AngleEmbedder:
    """Text "a<deg>" -> the unit vector at that angle in the plane; anything else -> the x axis."""

    name = "angle"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            deg = float(t.split()[-1][1:]) if t.split() and t.split()[-1].startswith("a") else 0.0
            rad = np.deg2rad(deg)
            rows.append([np.cos(rad), np.sin(rad)])
        return np.asarray(rows)


def memory(angles: list[float], **kw) -> VectorRagMemory:
    m = VectorRagMemory(embedder=AngleEmbedder(), **kw)
    for i, a in enumerate(angles):
        m.add(f"t{i}", f"turn {i} a{a:g}")
    return m


def test_hits_are_ordered_by_similarity_with_exact_values():
    m = memory([60, 0, 30, 90])
    hits = m.search("q a0")
    assert [h.turn_id for h in hits] == ["t1", "t2", "t0", "t3"]
    assert [round(h.similarity, 6) for h in hits] == [1.0, round(np.cos(np.deg2rad(30)), 6), 0.5, 0.0]
    assert hits[0] == Hit("t1", "turn 1 a0", 1.0)


def test_top_k_is_exact():
    m = memory([0, 10, 20, 30, 40], top_k=3)
    assert [h.turn_id for h in m.search("q a0")] == ["t0", "t1", "t2"]
    assert len(memory([0] * 40).search("q a0")) == 30  # the default k is the paper's 30
    assert len(memory([0] * 5, top_k=1).search("q a0")) == 1


def test_ties_keep_time_order_and_chronological_reorders_by_time():
    m = memory([45, 0, 45, 0])
    assert [h.turn_id for h in m.search("q a0")] == ["t1", "t3", "t0", "t2"]
    chrono = memory([45, 0, 45, 0], top_k=3, chronological=True)
    assert [h.turn_id for h in chrono.search("q a0")] == ["t0", "t1", "t3"]  # the top 3, then by time
    assert VectorRagMemory(embedder=AngleEmbedder()).chronological is False


def test_a_repeated_turn_is_stored_once_and_the_embed_text_is_what_is_embedded():
    e = AngleEmbedder()
    m = VectorRagMemory(embedder=e)
    m.add("t0", "shown text", embed_text="embedded a90")
    m.add("t0", "shown text", embed_text="embedded a90")
    assert m.ids == ["t0"] and m.texts == ["shown text"] and e.calls == [["embedded a90"]]
    assert m.search("q a90")[0].similarity == pytest.approx(1.0)
    m.add("t1", "plain a0")  # no embed_text: the text itself
    assert e.calls[-1] == ["plain a0"]


def test_search_after_add_sees_the_new_turn_and_clear_empties():
    m = memory([90])
    assert [h.turn_id for h in m.search("q a0")] == ["t0"]
    m.add("t1", "late a0")
    assert m.search("q a0")[0].turn_id == "t1"  # the cached matrix was rebuilt
    m.clear()
    assert m.search("q a0") == [] and m.ids == [] and m.texts == []
    m.add("t1", "again a0")  # a cleared id may be stored again
    assert [h.turn_id for h in m.search("q a0")] == ["t1"]


def test_dump_and_load_round_trip_without_sharing_state():
    m = memory([0, 90])
    state = m.dump()
    m.add("t2", "after a45")
    other = VectorRagMemory(embedder=AngleEmbedder())
    other.load(state)
    assert other.ids == ["t0", "t1"] and [h.turn_id for h in other.search("q a0")] == ["t0", "t1"]
    other.add("t1", "dup a0")  # held ids survive load
    assert other.ids == ["t0", "t1"]
    state["rows"][0][:] = 0  # the dump is a copy
    assert other.search("q a0")[0].similarity == pytest.approx(1.0)


def _turn(i: int, text: str) -> ReplayTurn:
    return ReplayTurn(turn_id=f"t{i}", session_id="s0", conversation_id="c", index=i,
                      timestamp=T0 + timedelta(minutes=i), role="user", speaker="Ana", content=text)


def test_the_adapter_reports_every_stage_and_returns_scored_fragments():
    adapter = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(top_k=2), embedder=AngleEmbedder()))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    adapter.reset(conversation_id="c", now=T0)
    assert adapter.query("q a0", now=T0).fragments == ()
    assert [(e.stage, e.reason) for e in events] == [("ineligible", "empty store")]
    for i, a in enumerate([90, 0, 30]):
        adapter.ingest(_turn(i, f"note a{a}"), now=T0)
    events.clear()
    result = adapter.query("q a0", now=T0)
    assert [f.source_turn_ids for f in result.fragments] == [("t1",), ("t2",)]
    assert all(f.mechanisms == (RETRIEVE,) for f in result.fragments)
    assert result.fragments[0].score == pytest.approx(1.0)
    assert "Ana" in result.fragments[0].text and "2026-01-05" in result.fragments[0].text  # speaker and date shown
    assert [e.stage for e in events] == ["eligible", "executed", "output", "selected"]
    assert events[1].count == 3 and events[1].params["top_k"] == 2
    assert events[3].source_turn_ids == ("t1", "t2")


def test_snapshot_restore_and_digest():
    adapter = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(), embedder=AngleEmbedder()))
    adapter.reset(conversation_id="c", now=T0)
    adapter.ingest(_turn(0, "one a0"), now=T0)
    before, snap = adapter.state_digest(), adapter.snapshot()
    adapter.ingest(_turn(1, "two a90"), now=T0)
    assert adapter.state_digest() != before
    adapter.restore(snap)
    assert adapter.state_digest() == before
    assert [f.source_turn_ids for f in adapter.query("q a0", now=T0).fragments] == [("t0",)]


def test_options_defaults_bounds_and_declared_capabilities():
    from pydantic import ValidationError

    assert VectorRagOptions().top_k == 30 and VectorRagOptions().chronological is False
    assert VectorRagOptions(top_k=1).top_k == 1
    with pytest.raises(ValidationError):
        VectorRagOptions(top_k=0)
    assert VectorRagAdapter.supports_snapshot is True
    assert [(m.name, m.can_disable) for m in VectorRagAdapter.mechanisms] == [(RETRIEVE, False)]


def test_the_protocol_methods_take_now_by_keyword_only():
    adapter = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(), embedder=AngleEmbedder()))
    with pytest.raises(TypeError):
        adapter.reset("c", T0)
    adapter.reset(conversation_id="c", now=T0)
    with pytest.raises(TypeError):
        adapter.ingest(_turn(0, "x a0"), T0)
    with pytest.raises(TypeError):
        adapter.query("q a0", T0)


def test_the_default_adapter_returns_thirty_turns_by_similarity():
    adapter = VectorRagAdapter(AdapterSetup(options=VectorRagOptions(), embedder=AngleEmbedder()))
    adapter.reset(conversation_id="c", now=T0)
    for i in range(40):
        adapter.ingest(_turn(i, f"note a{i}"), now=T0)  # angle grows with time: older is more similar to a0
    ids = [f.source_turn_ids[0] for f in adapter.query("q a0", now=T0).fragments]
    assert ids == [f"t{i}" for i in range(30)]


def test_hits_are_immutable_and_each_stored_row_is_that_turns_vector():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        Hit("t0", "x", 1.0).similarity = 0.0  # type: ignore[misc]

    class PairEmbedder(AngleEmbedder):
        def embed(self, texts):  # two rows per call: only the first is the text's vector
            return np.vstack([super().embed(texts), [[0.0, -1.0]]])

    m = VectorRagMemory(embedder=PairEmbedder())
    m.add("t0", "x a0")
    assert m.search("q a0")[0].similarity == pytest.approx(1.0)


def test_similarities_equal_to_twelve_decimals_tie_so_float_noise_cannot_reorder():
    class RawEmbedder:
        name = "raw"
        table = {"old": [1.0 - 4e-13, 0.0], "new": [1.0, 0.0], "q": [1.0, 0.0]}

        def embed(self, texts):
            return np.asarray([self.table[t] for t in texts])

    m = VectorRagMemory(embedder=RawEmbedder())
    m.add("t0", "old")
    m.add("t1", "new")
    assert [h.turn_id for h in m.search("q")] == ["t0", "t1"]  # a tie: time order


def test_search_equals_the_stable_full_sort_at_scale_with_ties_and_growth():
    rng = np.random.default_rng(7)

    class TableEmbedder:
        name = "table"
        rows: dict[str, np.ndarray] = {}

        def embed(self, texts):
            return np.asarray([self.rows[t] for t in texts])

    e = TableEmbedder()
    base = rng.normal(size=(50, 128))
    vectors = np.vstack([base, base[:30], rng.normal(size=(120, 128))])  # 200 rows, 30 exact duplicates (ties)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    m = VectorRagMemory(embedder=e, top_k=30)
    for i, v in enumerate(vectors):
        e.rows[f"turn {i}"] = v
        m.add(f"t{i}", f"turn {i}")
        if i in (10, 63, 64, 65, 130, 199):  # searches while the matrix grows past its capacity
            for j in range(3):
                q = vectors[(7 * j + i) % (i + 1)]
                e.rows[f"q{i}-{j}"] = q
                sims = np.round(vectors[: i + 1] @ q, 12)
                want = [f"t{k}" for k in np.argsort(-sims, kind="stable")[:30]]
                assert [h.turn_id for h in m.search(f"q{i}-{j}")] == want


def test_similarities_that_differ_at_the_twelfth_decimal_do_not_tie():
    class RawEmbedder:
        name = "raw"
        table = {"old": [1.0 - 4e-12, 0.0], "new": [1.0, 0.0], "q": [1.0, 0.0]}

        def embed(self, texts):
            return np.asarray([self.table[t] for t in texts])

    m = VectorRagMemory(embedder=RawEmbedder())
    m.add("t0", "old")
    m.add("t1", "new")
    assert [h.turn_id for h in m.search("q")] == ["t1", "t0"]
