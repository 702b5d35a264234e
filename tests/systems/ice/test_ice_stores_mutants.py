"""ICE's stores' own searches and filters pinned by exact outputs and work counts, on real SQLite
stores with hand-placed vectors: procedural patterns (revocation match, support on re-adding,
the trigger search's threshold, stem bonus, support and storage order, the wrong-field defect),
documents (chunking, in-leg RRF of vector and FTS5 ranks, ties, the wrong-key defect) and
overlays (summary ids, covered turns, the cached vector search, memory slots)
(scripts/mutation/ice-stores.toml)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from lsrep.systems.ice.documents import Chunk, DocumentStore, chunk_text
from lsrep.systems.ice.overlays import SlotStore, Summary, SummaryStore
from lsrep.systems.ice.procedures import Pattern, ProcedureStore, overlaps

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
DIM = 4


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def unit(*xs: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(xs)] = xs
    return v


class TableEmbedder:
    """Vectors placed by hand: each known text maps to a chosen vector, others to zero."""

    def __init__(self, table: dict[str, np.ndarray] | None = None) -> None:
        self.table = dict(table or {})
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.extend(texts)
        return np.vstack([self.table.get(t, np.zeros(DIM, dtype=np.float32)) for t in texts]
                         ) if texts else np.zeros((0, DIM))


def traced(conn: sqlite3.Connection) -> list[str]:
    """Every SQL statement the connection runs from now on (a work count)."""
    log: list[str] = []
    conn.set_trace_callback(log.append)
    return log


# ---------------------------------------------------------------------------------------------
# procedures.py


def test_pattern_render_and_fields(tmp_path: Path):
    store = ProcedureStore(tmp_path / "p.sqlite", TableEmbedder())
    pid, new = store.add("when cooking", "Always give metric units", turn_id="t1", now=at(2.5))
    assert (pid, new) == ("proc-00001", True)
    p = store.get(pid)
    assert p == Pattern(id="proc-00001", trigger="when cooking", instruction="Always give metric units",
                        support_count=1, source_turns=("t1",), active=True, strength=1.0,
                        created_at=at(2.5).isoformat())
    assert isinstance(p.active, bool)
    assert p.render() == "User instruction (since 2024-03-03): Always give metric units"
    assert store.get("proc-00009") is None


@pytest.mark.parametrize(("about", "text", "expected"), [
    ("", "", False),                                   # nothing shared, nothing to name
    ("zebra", "giraffe", False),                       # one stem each, none shared
    ("metric units", "metric recipes", True),          # one of two: half of its own
    ("metric units pizza", "metric recipes", False),   # one of three: less than half
    ("metric", "metric recipes", True),                # one of one
    ("metric units pizza oven bread", "metric units", True),  # two shared of five
    ("metric units pizza oven", "metric", False),      # one of four
    ("metric units pizza oven bread salt pepper", "metric units pizza", True),  # three of seven
])
def test_overlaps_rule(about: str, text: str, expected: bool):
    assert overlaps(about, text) is expected


def test_add_raises_support_once_per_turn_and_ignores_revoked(tmp_path: Path):
    store = ProcedureStore(tmp_path / "p.sqlite", TableEmbedder())
    a, new_a = store.add("", "Use metric units!", turn_id="t1", now=at(0))
    b, new_b = store.add("recipes", "use  METRIC units", turn_id="t2", now=at(1))
    c, new_c = store.add("recipes", "Use metric units", turn_id="t2", now=at(2))
    assert (a, new_a, b, new_b, c, new_c) == ("proc-00001", True, "proc-00001", False,
                                              "proc-00001", False)
    p = store.get(a)
    assert p.support_count == 3
    assert p.source_turns == ("t1", "t2")
    assert p.trigger == "" and p.created_at == at(0).isoformat()
    d, new_d = store.add("", "Answer in French", turn_id="t3", now=at(3))
    assert (d, new_d) == ("proc-00002", True)
    assert store.revoke("metric units", turn_id="t4") == ["proc-00001"]
    e, new_e = store.add("", "Use metric units", turn_id="t5", now=at(5))
    assert (e, new_e) == ("proc-00003", True)
    assert store.get(a).support_count == 3 and store.get(e).support_count == 1
    assert [p.id for p in store.active()] == ["proc-00002", "proc-00003"]
    assert store.count_active() == 2


def test_add_embeds_trigger_or_instruction(tmp_path: Path):
    emb = TableEmbedder()
    store = ProcedureStore(tmp_path / "p.sqlite", emb)
    store.add("when cooking", "Give metric units", turn_id="t1", now=at(0))
    store.add("", "Answer in French", turn_id="t2", now=at(1))
    assert emb.calls == ["when cooking", "Answer in French"]


def test_revoke_deactivates_only_named_patterns_with_reason(tmp_path: Path):
    store = ProcedureStore(tmp_path / "p.sqlite", TableEmbedder())
    store.add("", "Use metric units in recipes", turn_id="t1", now=at(0))
    store.add("", "Answer in French", turn_id="t2", now=at(1))
    store.add("", "Keep metric answers short", turn_id="t3", now=at(2))
    assert store.revoke("the zebra", turn_id="t4") == []
    assert store.count_active() == 3
    hit = store.revoke("metric units recipes", turn_id="t5")   # one of three for proc-00003
    assert hit == ["proc-00001"]
    row = store.conn.execute("SELECT active, deactivated_reason FROM procedures WHERE id = ?",
                             ("proc-00001",)).fetchone()
    assert tuple(row) == (0, "revoked by t5: metric units recipes")
    assert store.get("proc-00001").active is False
    assert [p.id for p in store.active()] == ["proc-00002", "proc-00003"]
    assert store.revoke("units recipes", turn_id="t6") == []   # revoked ones are not named again
    assert store.revoke("metric", turn_id="t7") == ["proc-00003"]
    assert store.count_active() == 1


def _procedures(tmp_path: Path, specs: list[tuple[str, str, np.ndarray]]) -> ProcedureStore:
    emb = TableEmbedder({trigger: vec for trigger, _, vec in specs})
    store = ProcedureStore(tmp_path / "p.sqlite", emb)
    for n, (trigger, instruction, _) in enumerate(specs):
        store.add(trigger, instruction, turn_id=f"t{n}", now=at(n))
    return store


def test_procedure_search_threshold_is_inclusive_and_stems_admit(tmp_path: Path):
    store = _procedures(tmp_path, [
        ("alpha", "i1", unit(0.5, 0.75)),     # cosine 0.5 exactly
        ("beta", "i2", unit(0.25, 1.0)),      # cosine 0.25, no shared stem
        ("gamma ovens", "i3", unit(0.0, 1.0)),  # cosine 0, one shared stem
        ("", "i4", unit(1.0)),               # no trigger: never matched
    ])
    q = unit(1.0)
    assert store.search("oven", q, 10, 0.5) == ["proc-00003", "proc-00001"]
    assert store.search("oven", q, 10, 0.51) == ["proc-00003"]
    assert store.search("oven", q, 10, 0.25) == ["proc-00003", "proc-00001", "proc-00002"]
    assert store.search("zzz", q, 10, 0.5) == ["proc-00001"]
    assert store.search("zzz", q, 10, 0.0) == ["proc-00001", "proc-00002", "proc-00003"]
    assert store.search("oven", q, 1, 0.0) == ["proc-00003"]
    assert store.search("oven", q, 0, 0.0) == []
    # A revoked pattern is not searched.
    store.revoke("i3 gamma", turn_id="x")
    store.conn.execute("UPDATE procedures SET active = 0 WHERE id = 'proc-00003'")
    assert store.search("oven", q, 10, 0.0) == ["proc-00001", "proc-00002"]


def test_procedure_search_orders_by_stems_plus_cosine_then_support_then_seq(tmp_path: Path):
    store = _procedures(tmp_path, [
        ("oven timer", "i1", unit(0.25)),
        ("oven light", "i2", unit(0.5)),
        ("oven timer light", "i3", unit(0.0)),
        ("kettle", "i4", unit(0.75)),
        ("oven fan", "i5", unit(0.5)),
        ("oven door", "i6", unit(0.5)),
        ("oven lid", "i7", unit(0.5)),
    ])
    store.add("", "i5", turn_id="again", now=at(9))
    assert store.get("proc-00005").support_count == 2
    q = unit(1.0)
    # Shared stems + cosine: i3 3, i2 2.5, i1 2.25, then i5 i6 i7 at 1.5 (support, then seq),
    # i4 0.75 (cosine alone, above the threshold 0.7).
    assert store.search("oven timer light", q, 10, 0.7) == [
        "proc-00003", "proc-00002", "proc-00001", "proc-00005", "proc-00006", "proc-00007",
        "proc-00004"]
    assert store.search("light timer oven", q, 3, 0.7) == ["proc-00003", "proc-00002", "proc-00001"]
    assert store.search("kettle", q, 10, 0.6) == ["proc-00004"]
    # i1 1.25, i3 1, i4 0.75, then 0.5: i5 (support 2), i2, i6, i7 (seq).
    assert store.search("timer", q, 10, 0.2) == [
        "proc-00001", "proc-00003", "proc-00004", "proc-00005", "proc-00002", "proc-00006",
        "proc-00007"]


def test_procedure_search_wrong_field_reads_the_empty_reason(tmp_path: Path):
    store = _procedures(tmp_path, [("oven", "i1", unit(1.0)), ("kettle", "i2", unit(1.0))])
    q = unit(1.0)
    assert store.search("oven", q, 10, 0.0) == ["proc-00001", "proc-00002"]
    assert store.search("oven", q, 10, 0.0, wrong_field=True) == []
    assert store.search("oven", q, 10, -1.0, wrong_field=True) == []


def test_procedure_reinforce_and_strengths(tmp_path: Path):
    store = _procedures(tmp_path, [("a", "i1", unit(1.0)), ("b", "i2", unit(1.0)),
                                   ("c", "i3", unit(1.0))])
    store.set_strengths([("proc-00001", 0.25), ("proc-00002", 0.5)], at(10))
    assert store.strengths() == [("proc-00001", 0.25, at(10).isoformat()),
                                 ("proc-00002", 0.5, at(10).isoformat()),
                                 ("proc-00003", 1.0, at(2).isoformat())]
    assert store.strengths(above=0.25) == [("proc-00002", 0.5, at(10).isoformat()),
                                           ("proc-00003", 1.0, at(2).isoformat())]
    assert store.strength_stats() == (3, 1.75)
    store.reinforce(["proc-00001"], at(11))
    row = store.conn.execute("SELECT strength, strength_at, last_access FROM procedures"
                             " WHERE id = 'proc-00001'").fetchone()
    assert tuple(row) == (1.0, at(11).isoformat(), at(11).isoformat())
    assert store.strength_stats() == (3, 2.5)
    assert store.get("proc-00002").strength == 0.5
    store.close()


# ---------------------------------------------------------------------------------------------
# documents.py


def test_chunk_render():
    assert Chunk("d#0", "d", "Some text.").render() == "[document d] Some text."


def test_chunk_text_groups_sentences_up_to_target():
    # "aaaa." is 5 chars = 2 tokens; "aaaa. bbbb." is 11 chars = 3 tokens.
    text = "aaaa. bbbb. cccc. dddd."
    assert chunk_text(text, 3) == ["aaaa. bbbb.", "cccc. dddd."]
    assert chunk_text(text, 2) == ["aaaa.", "bbbb.", "cccc.", "dddd."]
    assert chunk_text(text, 6) == ["aaaa. bbbb. cccc. dddd."]   # 23 chars = 6 tokens
    assert chunk_text(text, 5) == ["aaaa. bbbb. cccc.", "dddd."]   # 17 chars = 5 tokens
    assert chunk_text(text, 1) == ["aaaa.", "bbbb.", "cccc.", "dddd."]  # too long alone: kept
    assert chunk_text("", 5) == []
    assert chunk_text("one sentence only", 1) == ["one sentence only"]


def _documents(tmp_path: Path, texts: dict[str, np.ndarray], docs: list[tuple[str, str]],
               target: int = 1) -> DocumentStore:
    store = DocumentStore(tmp_path / "d.sqlite", TableEmbedder(texts))
    for n, (doc_id, text) in enumerate(docs):
        store.add(doc_id, text, target_tokens=target, now=at(n))
    return store


def test_document_add_ids_rows_and_get(tmp_path: Path):
    store = _documents(tmp_path, {}, [("manual", "First part. Second part."), ("empty", "")])
    assert store.count() == 2
    assert store.get("manual#0") == Chunk("manual#0", "manual", "First part.")
    assert store.get("manual#1") == Chunk("manual#1", "manual", "Second part.")
    assert store.get("empty#0") is None
    rows = store.conn.execute("SELECT id, seq, added_at FROM doc_chunks ORDER BY rowid").fetchall()
    assert [tuple(r) for r in rows] == [("manual#0", 0, at(0).isoformat()),
                                        ("manual#1", 1, at(0).isoformat())]
    assert store.add("late", "Third part.", target_tokens=1, now=at(4)) == ["late#0"]
    fts = store.conn.execute("SELECT rowid, text FROM doc_fts ORDER BY rowid").fetchall()
    assert [tuple(r) for r in fts] == [(1, "First part."), (2, "Second part."), (3, "Third part.")]
    store.close()


def test_document_search_empty_store(tmp_path: Path):
    store = DocumentStore(tmp_path / "d.sqlite", TableEmbedder())
    assert store.search("anything", unit(1.0), 5, 60) == []


def test_document_search_rrf_exact(tmp_path: Path):
    # Sentences are chunks of their own (target 1 token).
    texts = {"Zebra notes.": unit(1.0), "Yak notes.": unit(0.75), "Xerus oven.": unit(0.5),
             "Wombat oven.": unit(0.25), "Vole.": unit(0.0, 1.0)}
    store = _documents(tmp_path, texts, [("d", " ".join(texts))])
    q = unit(1.0)
    # Vector ranks: d#0 1, d#1 2, d#2 3, d#3 4, d#4 5. Lexical "oven": d#2, d#3 (bm25 tie: rowid).
    # rrf_k 0: d#0 1, d#1 1/2, d#2 1/3 + 1 = 4/3, d#3 1/4 + 1/2 = 3/4, d#4 1/5.
    assert store.search("oven", q, 5, 0) == ["d#2", "d#0", "d#3", "d#1", "d#4"]
    # rrf_k 1: d#0 1/2, d#1 1/3, d#2 1/4 + 1/2, d#3 1/5 + 1/3, d#4 1/6.
    assert store.search("oven", q, 5, 1) == ["d#2", "d#3", "d#0", "d#1", "d#4"]
    # k limits both rankings and the result: vector d#0, d#1; lexical d#2, d#3.
    # rrf_k 0: d#0 1, d#2 1, d#1 1/2, d#3 1/2 -> ties by id.
    assert store.search("oven", q, 2, 0) == ["d#0", "d#2"]
    assert store.search("oven", q, 4, 0) == ["d#2", "d#0", "d#3", "d#1"]
    # A stopword-only query has no lexical ranking: the vector order alone.
    assert store.search("the of", q, 3, 0) == ["d#0", "d#1", "d#2"]
    assert store.search("vole", unit(0.0, 1.0), 2, 60) == ["d#4", "d#0"]


def test_document_search_vector_ties_keep_storage_order(tmp_path: Path):
    texts = {"Bbb.": unit(0.5), "Aaa.": unit(0.5), "Ccc.": unit(1.0)}
    store = _documents(tmp_path, texts, [("z", "Bbb. Aaa."), ("a", "Ccc.")])
    # Vector: a#0, then z#0 and z#1 tied (storage order z#0, z#1); k 2 drops z#1.
    assert store.search("none", unit(1.0), 2, 0) == ["a#0", "z#0"]
    assert store.search("none", unit(1.0), 3, 0) == ["a#0", "z#0", "z#1"]
    # All tied in the vector ranking: storage order z#0, z#1, a#0 is kept through RRF.
    assert store.search("none", unit(0.0, 0.0, 1.0), 3, 0) == ["z#0", "z#1", "a#0"]


def test_document_search_lexical_limit(tmp_path: Path):
    texts = {f"Oven {c}.": unit(0.0, 1.0) for c in "abcd"}
    store = _documents(tmp_path, texts, [("d", " ".join(texts))])
    q = unit(1.0)       # every vector scores 0: vector order is storage order
    # Lexical ranks by bm25 then rowid; with k 2 only two chunks are fused from each side.
    assert store.search("oven", q, 2, 0) == ["d#0", "d#1"]
    assert store.search("oven", q, 3, 0) == ["d#0", "d#1", "d#2"]


def test_document_search_wrong_key(tmp_path: Path):
    store = _documents(tmp_path, {"One.": unit(1.0)}, [("q", "One. Two. Three."), ("x", "One.")])
    assert store.search("q", unit(1.0), 5, 60) != []
    assert store.search("q", unit(1.0), 2, 60, wrong_key=True) == ["q#0", "q#1"]
    assert store.search("q", unit(1.0), 5, 60, wrong_key=True) == ["q#0", "q#1", "q#2"]
    assert store.search("oven", unit(1.0), 5, 60, wrong_key=True) == []


# ---------------------------------------------------------------------------------------------
# overlays.py


def _summary(store: SummaryStore, conv: str, turns: list[str], vec: np.ndarray, n: int) -> str:
    return store.add(conv, n, n + len(turns) - 1, at(n).isoformat(), at(n + 1).isoformat(),
                     f"text {n}", turns, vec, at(n + 2))


def test_summary_add_get_render_and_covered_turns(tmp_path: Path):
    store = SummaryStore(tmp_path / "s.sqlite")
    assert store.covered_turns("c1") == 0
    assert _summary(store, "c1", ["t1", "t2"], unit(1.0), 0) == "summary-00001"
    assert _summary(store, "c2", ["u1"], unit(1.0), 1) == "summary-00002"
    assert _summary(store, "c1", ["t3", "t4", "t5"], unit(1.0), 2) == "summary-00003"
    assert store.count() == 3
    assert store.covered_turns("c1") == 5
    assert store.covered_turns("c2") == 1
    assert store.covered_turns("c3") == 0
    s = store.get("summary-00003")
    assert s == Summary("summary-00003", "c1", at(2).isoformat(), at(3).isoformat(), "text 2",
                        ("t3", "t4", "t5"))
    assert s.render() == "Summary (2024-03-03 to 2024-03-04): text 2"
    assert store.get("summary-00009") is None
    store.close()


def test_summary_search_ranks_with_stable_ties_and_k(tmp_path: Path):
    store = SummaryStore(tmp_path / "s.sqlite")
    ids = [_summary(store, "c1", [f"t{n}"], v, n)
           for n, v in enumerate([unit(0.5), unit(1.0), unit(0.5), unit(0.0, 1.0)])]
    q = unit(1.0)
    assert store.search(q, 10) == [ids[1], ids[0], ids[2], ids[3]]
    assert store.search(q, 2) == [ids[1], ids[0]]
    assert store.search(unit(0.0, 1.0), 1) == [ids[3]]


def test_summary_search_empty_then_added_and_reopened(tmp_path: Path):
    path = tmp_path / "s.sqlite"
    store = SummaryStore(path)
    log = traced(store.conn)
    assert store.search(unit(1.0), 5) == []
    assert store.search(unit(1.0), 5) == []
    loads = [s for s in log if s.startswith("SELECT id, vec")]
    assert len(loads) == 1                      # loaded once, even when empty
    a = _summary(store, "c1", ["t1"], unit(0.5), 0)
    b = _summary(store, "c1", ["t2"], unit(1.0), 1)
    log.clear()
    assert store.search(unit(1.0), 5) == [b, a]  # appended to the loaded cache
    assert log == []                             # no read of the table
    store.close()
    again = SummaryStore(path)
    log = traced(again.conn)
    assert again.search(unit(1.0), 5) == [b, a]
    assert again.search(unit(0.5), 1) == [b]
    assert sum(s.startswith("SELECT id, vec") for s in log) == 1
    again.close()


def test_slots_set_overwrite_delete_and_order(tmp_path: Path):
    store = SlotStore(tmp_path / "slots.sqlite")
    assert store.items() == []
    store.set("name", "Ada", at(0))
    store.set("city", "Paris", at(1))
    store.set("name", "Ada L.", at(2))
    assert store.items() == [("city", "Paris"), ("name", "Ada L.")]
    row = store.conn.execute("SELECT updated FROM slots WHERE key = 'name'").fetchone()
    assert row[0] == at(2).isoformat()
    store.delete("city")
    store.delete("absent")
    assert store.items() == [("name", "Ada L.")]
    store.close()


def test_procedure_search_skips_an_empty_trigger_and_goes_on(tmp_path: Path):
    store = _procedures(tmp_path, [("", "i1", unit(1.0)), ("oven", "i2", unit(1.0)),
                                   ("", "i3", unit(1.0)), ("kettle", "i4", unit(0.5))])
    assert store.search("zzz", unit(1.0), 10, 0.0) == ["proc-00002", "proc-00004"]


def test_document_add_refuses_an_embedder_that_drops_rows(tmp_path: Path):
    class Short(TableEmbedder):
        def embed(self, texts):
            return super().embed(texts)[:1]

    store = DocumentStore(tmp_path / "d.sqlite", Short())
    with pytest.raises(ValueError):
        store.add("d", "One. Two.", target_tokens=1, now=at(0))
    assert store.count() == 0


def test_document_search_rrf_sums_from_zero(tmp_path: Path):
    # d#1: vector rank 1, lexical rank 3; d#0: vector rank 3, lexical rank 1; d#2: rank 2 in both.
    # With rrf_k 0 both d#0 and d#1 score 1/3 + 1 (the same float, whichever term comes first):
    # a tie, broken by id. Starting a sum at 1 or -1 instead of 0 breaks the tie in floats
    # ((1 + 1) + 1/3 != (1 + 1/3) + 1), so the order would change.
    texts = {"Oven oven oven.": unit(0.0, 1.0), "Oven.": unit(1.0), "Oven oven.": unit(0.5, 0.5)}
    store = _documents(tmp_path, texts, [("d", " ".join(texts))])
    lexical = [r[0] for r in store.conn.execute(
        "SELECT c.id FROM doc_fts f JOIN doc_chunks c ON c.rowid = f.rowid"
        " WHERE doc_fts MATCH 'oven' ORDER BY bm25(doc_fts)")]
    assert lexical == ["d#0", "d#2", "d#1"]
    assert store.search("oven", unit(1.0), 3, 0) == ["d#0", "d#1", "d#2"]


def test_records_are_frozen_and_hashable(tmp_path: Path):
    import dataclasses

    store = ProcedureStore(tmp_path / "p.sqlite", TableEmbedder())
    pid, _ = store.add("", "Use metric units", turn_id="t1", now=at(0))
    records = [store.get(pid), Chunk("d#0", "d", "x"),
               Summary("summary-00001", "c1", "2024", "2024", "x", ("t1",))]
    for record in records:
        assert hash(record) == hash(dataclasses.replace(record))
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.id = "other"


def test_store_commands_take_keyword_arguments_only(tmp_path: Path):
    procedures = ProcedureStore(tmp_path / "p.sqlite", TableEmbedder())
    with pytest.raises(TypeError):
        procedures.add("", "Use metric units", "t1", at(0))
    procedures.add("", "Use metric units", turn_id="t1", now=at(0))
    with pytest.raises(TypeError):
        procedures.revoke("metric units", "t2")
    assert procedures.count_active() == 1
    documents = DocumentStore(tmp_path / "d.sqlite", TableEmbedder())
    with pytest.raises(TypeError):
        documents.add("d", "One.", 5, at(0))
    assert documents.count() == 0
