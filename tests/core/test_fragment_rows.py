"""A unit's fragment rows are the same whether built afresh or from memoised parts, and the
store writes them the same way on its one-pass path as on its general one."""

from __future__ import annotations

from lsrep.context_audit import audit_context
from lsrep.contract import Fragment
from lsrep.fragment_rows import FragmentRows
from lsrep.provenance import TurnIndex
from lsrep.references import Expected
from lsrep.store import RunStore
from tests.reports.synthetic import RUN_ID, manifest, unit_rows

TURNS = [
    "I moved to Lisbon in May and started at the new office near the river.",
    "Thanks! Sounds great, what is the office like?",
    "It has a long terrace over the river and a small library on the third floor.",
    "My sister Ana is visiting Porto next week for the jazz festival.",
    "Ana plays the saxophone in a quartet that tours every summer.",
]
TURN_IDS = [f"t{i}" for i in range(len(TURNS))]


def _contexts():
    # Fragments that recur across checkpoints: copied turns (one copied from a later turn: a
    # leak at the early prefix, sourced later), a summary, an unknown citation, an uncited one.
    frags = [
        Fragment(text=TURNS[0], source_turn_ids=("t0",), mechanisms=("vec",), score=0.9),
        Fragment(text=TURNS[3], source_turn_ids=("t3",), mechanisms=("vec", "fuse")),
        Fragment(text="Ana tours with a quartet.", source_turn_ids=("t4",), kind="summary", mechanisms=("sum",)),
        Fragment(text=TURNS[2], source_turn_ids=("t2", "t9"), mechanisms=("vec",), derived=True),
        Fragment(text="nothing said anywhere", mechanisms=()),
    ]
    rescored = frags[0].model_copy(update={"score": 0.4})  # the same fragment under another query
    return [(2, frags[:3]), (4, frags), (5, [frags[1], rescored, frags[3]]), (5, frags[::-1])]


def _index():
    return TurnIndex(TURNS), {t: i for i, t in enumerate(TURN_IDS)}


def test_memoised_rows_equal_fresh_rows_at_every_checkpoint():
    index, turn_index = _index()
    rows = FragmentRows(turn_index, TURN_IDS)
    seen_leak = seen_unknown = 0
    scores = set()
    for prefix_len, frags in _contexts():
        audit = audit_context(frags, prefix_len, Expected(ask=True), index, turn_index)
        for rank, (frag, verdict, cites, carried) in enumerate(
                zip(frags, audit.verdicts, audit.citation_leaks, audit.carried, strict=True)):
            got = rows.row(f"o{prefix_len}", rank, frag, verdict, cites, carried)
            want = rows.fresh_row(f"o{prefix_len}", rank, frag, verdict, cites, carried)
            assert got == want and list(got) == list(want)
            scores.add(got["score"])
            seen_leak += got["leak"]
            seen_unknown += got["unknown_source"]
    assert seen_leak and seen_unknown and {0.9, 0.4} <= scores  # the contexts exercise these columns
    # And the reference itself, column by column, for the over-citing derived fragment at prefix 5.
    frag = _contexts()[-1][1][1]
    audit = audit_context([frag], 5, Expected(ask=True), index, turn_index)
    row = rows.row("o", 1, frag, audit.verdicts[0], audit.citation_leaks[0], audit.carried[0])
    assert {k: row[k] for k in ("obs_id", "rank", "source_turn_ids", "tokens", "mechanisms", "kind", "score",
                                "leak", "unknown_source", "derived", "carried_turn_ids", "content_leak")} == {
        "obs_id": "o", "rank": 1, "source_turn_ids": '["t2", "t9"]', "tokens": (len(TURNS[2]) + 3) // 4,
        "mechanisms": '["vec"]', "kind": "memory", "score": None, "leak": 0, "unknown_source": 1, "derived": 1,
        "carried_turn_ids": '["t2"]', "content_leak": 0}


def test_a_new_verdict_for_a_recurring_fragment_gives_its_own_columns():
    index, turn_index = _index()
    rows = FragmentRows(turn_index, TURN_IDS)
    frag = Fragment(text=TURNS[4], source_turn_ids=("t4",))
    early, late = index.verdict(frag.text, 2, (4,)), index.verdict(frag.text, 5, (4,))
    assert early != late
    first, second = rows.row("o", 0, frag, early, False, ()), rows.row("o", 0, frag, late, False, ())
    assert first == rows.fresh_row("o", 0, frag, early, False, ())
    assert second == rows.fresh_row("o", 0, frag, late, False, ())
    assert first["content_leak"] == 1 and second["content_leak"] == 0


def _write(path):
    store = RunStore(path)
    store.create_run(RUN_ID, "synthetic", "synthetic.toml", "cd" * 32, "ef" * 32, manifest())
    tables = unit_rows("toy")
    frags = tables["fragments"]
    frags[1] = {**frags[1], "text": None}  # a row without text
    frags[2] = {**frags[2], "text": frags[0]["text"]}  # a text shared with another row
    store.write_unit({"run_id": RUN_ID, "unit_id": "toy/traj/r0", "condition": "toy", "trajectory": "traj",
                      "repetition": 0, "seed": 1, "plan_digest": "ef" * 32, "status": "finished", "error": None,
                      "elapsed_s": 0.1}, tables)
    frag_rows = [tuple(r) for r in store.db.conn.execute("select * from fragments order by obs_id, rank")]
    texts = [tuple(r) for r in store.db.conn.execute("select * from fragment_texts order by sha256")]
    return store, frags, frag_rows, texts


def test_the_one_pass_fragment_write_equals_the_general_write(tmp_path, monkeypatch):
    store, written, *fast = _write(tmp_path / "fast.sqlite")
    monkeypatch.setattr(RunStore, "_insert_fragments",
                        lambda self, rows: self._insert_rows("fragments", self._share_texts(rows)))
    _, _, *general = _write(tmp_path / "general.sqlite")
    assert fast == general
    frag_rows, texts = fast
    assert 0 < len(texts) < len(frag_rows)  # each distinct text once
    first = written[0]["obs_id"]
    assert [r["text"] for r in store.fragment_rows(first)] == [r["text"] for r in written if r["obs_id"] == first]


def test_a_secret_repeated_in_event_reasons_is_masked_in_every_row(tmp_path):
    from lsrep.redact import MASK, register_secret

    register_secret("repeatedkey9876zz")
    store = RunStore(tmp_path / "s.sqlite")
    store.create_run(RUN_ID, "synthetic", "synthetic.toml", "cd" * 32, "ef" * 32, manifest())
    tables = unit_rows("toy")
    reasons = ["echoed repeatedkey9876zz", None, "plain reason", "echoed repeatedkey9876zz", "", "again repeatedkey9876zz"]
    tables["events"] = [{**tables["events"][0], "seq": i, "reason": r} for i, r in enumerate(reasons)]
    store.write_unit({"run_id": RUN_ID, "unit_id": "toy/traj/r0", "condition": "toy", "trajectory": "traj",
                      "repetition": 0, "seed": 1, "plan_digest": "ef" * 32, "status": "finished", "error": None,
                      "elapsed_s": 0.1}, tables)
    stored = [r[0] for r in store.db.conn.execute("select reason from events order by seq")]
    assert stored == [f"echoed {MASK}", None, "plain reason", f"echoed {MASK}", "", f"again {MASK}"]
