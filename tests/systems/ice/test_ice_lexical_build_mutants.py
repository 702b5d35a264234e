"""Precise tests of how ICE's exact lexical index is built (`LexicalIndex.from_database`, `add`,
`_phrase_postings`): every slot of the lengths, topics, ids and postings after each turn, the
growth of the arrays, and the work of the phrase cache (only turns added since the last scan
are scanned). Written for the ice-lexical-build mutation session (docs/mutation.md).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord
from lsrep.systems.ice.lexical import LexicalIndex, Tokenizer

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _postings(index: LexicalIndex) -> dict[str, tuple[list[int], list[float]]]:
    out = {}
    for term, post in index.terms.items():
        pos, tf = post.view()
        out[term] = (pos.tolist(), tf.tolist())
    return out


def _want_postings(docs: list[tuple[str, ...]]) -> dict[str, tuple[list[int], list[float]]]:
    out: dict[str, tuple[list[int], list[float]]] = {}
    for i, d in enumerate(docs):
        for t in dict.fromkeys(d):
            p, f = out.setdefault(t, ([], []))
            p.append(i)
            f.append(float(d.count(t)))
    return out


DOCS = [(f"t{i}", ["a", "b", "c"][i % 3] if i % 5 else "a",
         tuple(["x", "y", "z", "x y", "w"][(i + j) % 5].split()[0] for j in range(i % 4))
         + (("x", "y") * (i % 3)) + (("q",) if i % 7 == 0 else ())) for i in range(40)]


def test_add_fills_every_slot_and_grows_by_doubling():
    index = LexicalIndex(Tokenizer())
    assert index._lengths.shape == (16,) and index._topics.shape == (16,)
    docs = []
    for n, (tid, topic, toks) in enumerate(DOCS, start=1):
        index.add(tid, topic, toks)
        docs.append(toks)
        cap = 16 if n <= 16 else 32 if n <= 32 else 64
        assert index._lengths.shape == (cap,) and index._topics.shape == (cap,), n
        assert index._lengths.dtype == np.float64 and index._topics.dtype == np.int64
        assert index._lengths[:n].tolist() == [float(len(d)) for d in docs]
        assert index._lengths[n:].tolist() == [0.0] * (cap - n)
        assert index._topics[n:].tolist() == [0] * (cap - n)
        assert index.total_tokens == sum(len(d) for d in docs)
        assert index.ids == [d[0] for d in DOCS[:n]] and index.docs == docs
        assert _postings(index) == _want_postings(docs), n
    codes = {"a": 0, "b": 1, "c": 2}
    assert index.topic_code == codes
    assert index._topics[:40].tolist() == [codes[d[1]] for d in DOCS]


def test_add_an_empty_turn_and_a_first_topic_seen_late():
    index = LexicalIndex(Tokenizer())
    index.add("e", "late", ())
    index.add("f", "first", ("k", "k", "k"))
    index.add("g", "late", ("k",))
    assert index.topic_code == {"late": 0, "first": 1}
    assert index._topics[:3].tolist() == [0, 1, 0]
    assert index._lengths[:3].tolist() == [0.0, 3.0, 1.0]
    assert index.total_tokens == 4
    assert _postings(index) == {"k": ([1, 2], [3.0, 1.0])}


def _phrase_want(docs, phrase):
    m = len(phrase)
    pos, tf = [], []
    for i, d in enumerate(docs):
        f = sum(1 for s in range(len(d) - m + 1) if d[s:s + m] == phrase)
        if f:
            pos.append(i)
            tf.append(float(f))
    return pos, tf


def test_phrase_postings_scan_only_new_turns():
    """A phrase's postings are built from the turns holding its first token, then extended
    with the turns added since (each turn scanned once); single tokens use the term postings."""
    index = LexicalIndex(Tokenizer())
    scans: list[int] = []
    docs: list[tuple[str, ...]] = []

    class Docs(list):
        def __getitem__(self, i):
            scans.append(i)
            return list.__getitem__(self, i)

    index.docs = Docs()
    phrases = [("x", "y"), ("y", "x"), ("x", "y", "x"), ("q", "x"), ("w", "w"), ("zz", "x")]
    for n, (tid, topic, toks) in enumerate(DOCS, start=1):
        index.add(tid, topic, toks)
        docs.append(toks)
        if n % 6 in (1, 4) or n == 40:
            for ph in phrases:
                before = index._phrases.get(ph, (0, None))[0]
                scans.clear()
                pos, tf = index._phrase_postings(ph)
                assert (pos.tolist(), tf.tolist()) == _phrase_want(docs, ph), (n, ph)
                assert pos.dtype == np.int64 and tf.dtype == np.float64
                assert index._phrases[ph][0] == n
                first = [i for i, d in enumerate(docs) if ph[0] in d and i >= before]
                assert scans == first, (n, ph, scans)
            scans.clear()
            pos, tf = index._phrase_postings(("x", "y"))
            assert scans == [] and (pos.tolist(), tf.tolist()) == _phrase_want(docs, ("x", "y"))
    for tok in ("x", "q", "absent"):
        pos, tf = index._phrase_postings((tok,))
        assert (pos.tolist(), tf.tolist()) == _phrase_want(docs, (tok,))
        assert pos.dtype == np.int64
    assert ("x",) not in index._phrases and ("absent",) not in index._phrases
    assert index._phrase_postings(("absent",))[1].dtype == np.float64


def test_phrase_of_a_token_in_no_turn_is_cached_empty():
    index = LexicalIndex(Tokenizer())
    index.add("a", "t", ("x", "y"))
    pos, tf = index._phrase_postings(("zz", "y"))
    assert pos.tolist() == [] and tf.tolist() == []
    assert index._phrases[("zz", "y")][0] == 1
    index.add("b", "t", ("zz", "y", "zz", "y"))
    pos, tf = index._phrase_postings(("zz", "y"))
    assert pos.tolist() == [1] and tf.tolist() == [2.0]
    assert index._phrases[("zz", "y")][0] == 2


def test_from_database_reads_every_turn_in_storage_order(tmp_path):
    """The index read back from FTS5 equals one built turn by turn from the tokenizer's tokens,
    in rowid order, with each turn's tokens in their offset order and its topic."""
    store = EpisodicStore(tmp_path / "lex.sqlite")
    texts = ["Zebra apple zebra", "", "the apple's apples", "banana", "apple banana zebra zebra yak",
             "yak", "John's caroline's", "zebra"]
    topics = ["t2", "t1", "t2", "t3", "t1", "t2", "t3", "t1"]
    for i, (text, topic) in enumerate(zip(texts, topics, strict=True)):
        rec = TurnRecord(f"r{i}", "c1", "s1", i, T0 + timedelta(minutes=i), "user", text)
        assert store.add(rec, np.ones(4, dtype=np.float32), topic)
    tok = Tokenizer()
    index = LexicalIndex.from_database(store.conn, tok)
    assert index.tokenizer is tok
    want = LexicalIndex(tok)
    for i, (text, topic) in enumerate(zip(texts, topics, strict=True)):
        want.add(f"r{i}", topic, tok.tokens(text))
    assert index.ids == want.ids == [f"r{i}" for i in range(8)]
    assert index.docs == want.docs and index.docs[0] == ("zebra", "appl", "zebra")
    assert index.topic_code == {"t2": 0, "t1": 1, "t3": 2}
    assert index._topics[:8].tolist() == want._topics[:8].tolist()
    assert index._lengths[:8].tolist() == want._lengths[:8].tolist()
    assert index.total_tokens == want.total_tokens
    assert _postings(index) == _postings(want)
    again = LexicalIndex.from_database(store.conn, tok)  # the temp vocab table already exists
    assert again.docs == index.docs


def test_phrase_scan_compares_each_window_once_from_the_first_turn():
    """The first scan starts at turn 0 (which holds the phrase, at its very end), and each
    scanned turn compares exactly its len - m + 1 windows (slices counted)."""
    windows: list[int] = []

    class Toks(tuple):
        def __getitem__(self, key):
            if isinstance(key, slice):
                windows.append(key.start)
            return tuple.__getitem__(self, key)

    index = LexicalIndex(Tokenizer())
    docs = [("p", "x", "y"), ("x",), ("y", "x", "y", "x", "y"), ("q",), ("x", "y"), ("x", "x")]
    for i, d in enumerate(docs):
        index.add(f"d{i}", "t", Toks(d))
    for phrase in [("x", "y"), ("x", "y", "x"), ("p", "x", "y")]:
        windows.clear()
        pos, tf = index._phrase_postings(phrase)
        assert (pos.tolist(), tf.tolist()) == _phrase_want(docs, phrase), phrase
        m = len(phrase)
        want = [s for d in docs if phrase[0] in d for s in range(max(0, len(d) - m + 1))]
        assert windows == want, (phrase, windows)
    assert index._phrase_postings(("x", "y"))[0].tolist() == [0, 2, 4]
