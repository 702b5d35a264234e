"""Precise tests of ICE's exact lexical top-k (`LexicalIndex`): small hand-built corpora, each
answer compared with FTS5's own `ORDER BY bm25(turns_fts), rowid LIMIT k` and each score with
FTS5's `bm25()` (ties, topic filter, multi-token phrases, k boundaries, absent words), plus the
work the max-score cut does. Written for the ice-lexical mutation session (docs/mutation.md).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord, content_words
from lsrep.systems.ice.lexical import LexicalIndex, Tokenizer

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _store(tmp_path, rows: list[tuple[str, str]]) -> EpisodicStore:
    store = EpisodicStore(tmp_path / "lex.sqlite")
    for i, (text, topic) in enumerate(rows):
        rec = TurnRecord(f"t{i:03d}", "c1", "s1", i, T0 + timedelta(minutes=i), "user", text)
        assert store.add(rec, np.ones(4, dtype=np.float32), topic)
    return store


def _fts_scores(store: EpisodicStore, query: str) -> dict[str, float]:
    from lsrep.systems.ice.episodic import fts_query
    sql = ("SELECT t.turn_id, bm25(turns_fts) FROM turns_fts f JOIN turns t ON t.rowid = f.rowid"
           " WHERE turns_fts MATCH ?")
    return {r[0]: -r[1] for r in store.conn.execute(sql, (fts_query(query),))}


def _check(store: EpisodicStore, query: str, ks, topics=(None,)) -> None:
    index = store.lexical_index()
    for topic in topics:
        for k in ks:
            want = store.lexical_search_fts(query, k, topic)
            assert index.search(content_words(query), k, topic) == want, (query, k, topic)


CORPUS = [
    ("apple banana apple", "food"),
    ("banana split", "food"),
    ("cherry apple", "garden"),
    ("apple", "garden"),
    ("banana banana banana cherry", "food"),
    ("durian", "garden"),
    ("apple banana", "food"),
    ("apple banana", "garden"),
    ("John's apple was caroline's", "people"),
    ("john s apple", "people"),
    ("caroline s john", "people"),
    ("nothing in common here at all", "food"),
]


@pytest.mark.parametrize("query", ["apple", "banana", "apple banana", "banana apple", "cherry durian",
                                   "john's", "caroline's apple", "zzzabsent", "zzzabsent apple",
                                   "apple banana cherry durian john's"])
def test_top_k_equals_fts5_on_a_small_corpus(tmp_path, query):
    store = _store(tmp_path, CORPUS)
    _check(store, query, ks=range(0, len(CORPUS) + 3), topics=(None, "food", "garden", "people", "absent"))


def test_scores_equal_fts5_bm25(tmp_path):
    store = _store(tmp_path, CORPUS)
    index = store.lexical_index()
    for query in ["apple", "apple banana", "caroline's apple", "cherry durian john's", "banana"]:
        want = _fts_scores(store, query)
        phrases = []
        n = len(index.ids)
        for order, word in enumerate(content_words(query)):
            pos, tf = index._phrase_postings(index.tokenizer.phrase(word))
            if pos.shape[0]:
                import math
                idf = math.log((n - pos.shape[0] + 0.5) / (pos.shape[0] + 0.5))
                phrases.append((order, idf if idf > 0 else 1e-6, pos, tf))
        lengths = index._lengths[:n]
        avgdl = index.total_tokens / n
        cand = np.array(sorted(index.ids.index(t) for t in want), dtype=np.int64)
        for sub in (cand, cand[:1], cand[-2:]):
            got = LexicalIndex._scores(phrases, sub, lengths, avgdl)
            assert got.tolist() == pytest.approx([want[index.ids[i]] for i in sub], rel=1e-12, abs=1e-15)


def test_empty_index_and_k(tmp_path):
    index = LexicalIndex(Tokenizer())
    assert index.search(["apple"], 3, None) == []
    index.add("a", "x", ("appl",))
    assert index.search(["apple"], 0, None) == []
    assert index.search(["apple"], -1, None) == []
    assert index.search(["apple"], -1, None) == []
    assert index.search(["apple"], 1, None) == ["a"]
    assert index.search(["apple"], 1, "y") == []
    assert index.search(["apple"], 1, "") == ["a"]


def test_growth_and_phrase_cache_follow_new_turns(tmp_path):
    """Past the initial 16 slots the lengths, topics and postings grow; cached phrase postings
    are extended with the turns added after they were first scanned, never rescanned."""
    store = _store(tmp_path, CORPUS[:3])
    index = store.lexical_index()
    _check(store, "john's caroline's", ks=(1, 3, 50))
    for i in range(40):
        text = ["John's dog", "john s cat s", "caroline's john's", "dog cat", "cat"][i % 5]
        rec = TurnRecord(f"u{i:03d}", "c1", "s2", 100 + i, T0 + timedelta(hours=1, minutes=i), "user",
                         text + " and" + " filler" * (i % 7))
        assert store.add(rec, np.ones(4, dtype=np.float32), ["pets", "people"][i % 2])
        if i % 9 == 0:
            _check(store, "john's caroline's dog", ks=(1, 4, 60), topics=(None, "pets"))
    assert store.lexical_index() is index
    assert len(index.ids) == 43 and index._lengths.shape[0] >= 43
    assert index.total_tokens == sum(len(d) for d in index.docs)
    assert index._lengths[:43].tolist() == [len(d) for d in index.docs]
    for q in ("john's", "caroline's", "john's caroline's dog cat", "filler dog", "cat"):
        _check(store, q, ks=(1, 2, 5, 13, 21, 22, 60), topics=(None, "pets", "people"))
    scanned, post = index._phrases[("john", "s")]
    assert scanned == 43
    pos, tf = post.view()
    want = [i for i, d in enumerate(index.docs)
            if any(d[s:s + 2] == ("john", "s") for s in range(len(d) - 1))]
    assert pos.tolist() == want
    assert tf.tolist() == [sum(1 for s in range(len(index.docs[p]) - 1) if index.docs[p][s:s + 2] == ("john", "s"))
                           for p in want]
    single_pos, single_tf = index._phrase_postings(("cat",))
    assert single_pos.tolist() == [i for i, d in enumerate(index.docs) if "cat" in d]
    assert single_tf.tolist() == [index.docs[i].count("cat") for i in single_pos.tolist()]
    empty_pos, empty_tf = index._phrase_postings(("zzzabsent",))
    assert empty_pos.shape == (0,) and empty_tf.shape == (0,)


def _spy(index: LexicalIndex) -> list[int]:
    scored: list[int] = []
    original = index._scores

    def spy(phrases, cand, lengths, avgdl):
        scored.append(int(cand.shape[0]))
        return original(phrases, cand, lengths, avgdl)

    index._scores = spy
    return scored


def test_cut_rounds_and_work(tmp_path):
    """A rare word decides: only its postings are scored; with k above them the next round
    takes the common word too; a topic filter counts only its own turns."""
    rows = [("common filler" + (" rareword" if i % 10 == 3 else "") + (" mid" if i % 4 == 0 else ""),
             "a" if i % 2 else "b") for i in range(60)]
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for k, topic, want_work in [(3, None, [6]), (6, None, [6]), (7, None, [60]),
                                (2, "a", [6]), (6, "a", [6]), (7, "a", [30])]:
        scored.clear()
        want = store.lexical_search_fts("rareword common", k, topic)
        assert index.search(["rareword", "common"], k, topic) == want, (k, topic)
        assert scored == want_work, (k, topic, scored)


def test_idf_exactly_zero_is_clipped_to_a_tie_breaker(tmp_path):
    """A word in exactly half the turns has idf log(1) = 0, which FTS5 (and the index) clip to
    1e-6: the turn holding both words then ranks above the one holding only the first."""
    rows = [("yak wren", "t"), ("xeno zulu", "t"), ("yak xeno", "t"), ("zulu wren", "t")]
    store = _store(tmp_path, rows)
    want = store.lexical_search_fts("xeno yak", 4)
    assert want == ["t002", "t000", "t001"]
    _check(store, "xeno yak", ks=(1, 2, 3, 4))
    _check(store, "yak xeno", ks=(1, 2, 3, 4))


def test_k_zero_and_no_match_do_no_work(tmp_path):
    store = _store(tmp_path, CORPUS)
    index = store.lexical_index()
    scored = _spy(index)
    assert index.search(["apple"], 0, None) == []
    assert index.search(["apple"], -1, None) == []
    assert index.search(["zzzabsent", "qqqnone"], 5, None) == []
    assert index.search(["apple"], 5, "nosuchtopic") == []
    assert scored == []
    assert index.search(["apple"], 5, "food") == store.lexical_search_fts("apple", 5, "food")
    assert scored == [2]  # the 2 food turns holding "apple": every match in scope, scored once


def test_rarest_phrase_is_taken_first(tmp_path):
    """Three words of different rarity: the cut takes the rarest first, then the next."""
    rows = []
    for i in range(80):
        words = ["filler"] + (["mid"] if i % 4 == 1 else []) + (["rare"] if i % 20 == 1 else []) \
            + (["often"] if i % 2 else [])
        rows.append((" ".join(words), "t"))
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for words, k, work in [(["often", "mid", "rare"], 2, [4]), (["mid", "rare", "often"], 4, [4]),
                           (["often", "rare", "mid"], 5, [20]), (["rare", "often", "mid"], 21, [40]),
                           (["mid", "often"], 3, [20])]:
        scored.clear()
        want = store.lexical_search_fts(" ".join(words), k)
        assert index.search(words, k, None) == want, (words, k)
        assert scored == work, (words, k, scored)


class _CountingNumpy:
    """numpy as `lexical` sees it, recording the size of every `np.zeros` score array."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __getattr__(self, name):
        return getattr(np, name)

    def zeros(self, shape, dtype=float):
        self.sizes.append(int(shape))
        return np.zeros(shape, dtype=dtype)


def test_scores_take_the_whole_array_path_from_a_quarter(tmp_path, monkeypatch):
    """`_scores` adds over every turn's slot once the candidates are a quarter of the turns or
    more (one array of all turns), else scores only the candidates: same scores, other work."""
    import lsrep.systems.ice.lexical as lexical
    rows = [(" ".join((["wide"] if i < 25 else []) + (["narrow"] if i < 24 else [])
                      + (["wider"] if i % 3 == 0 else []) + ["pad"] * (1 + i % 3)), "t") for i in range(100)]
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    counting = _CountingNumpy()
    monkeypatch.setattr(lexical, "np", counting)
    for word, size in [("wide", 100), ("narrow", 24), ("wider", 100)]:
        counting.sizes.clear()
        assert index.search([word], 30, None) == store.lexical_search_fts(word, 30)
        assert counting.sizes == [size], (word, counting.sizes)
    monkeypatch.undo()
    assert index.search(["narrow", "wide"], 30, None) == store.lexical_search_fts("narrow wide", 30)


def test_equal_bounds_skip_the_first_round(tmp_path):
    """Two words as rare as each other: the first word's bound does not exceed the second's,
    so no cut is tried before both are taken (one scoring of the union)."""
    rows = [(("aa" if i % 10 == 0 else "bb" if i % 10 == 5 else "cc") + " pad" * (i % 4), "t")
            for i in range(100)]
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for k in (1, 3, 10, 25):
        scored.clear()
        assert index.search(["aa", "bb"], k, None) == store.lexical_search_fts("aa bb", k)
        assert scored == [20], (k, scored)


def test_counts_above_the_small_int_cache(tmp_path):
    """k and the candidate counts above 256 (Python's cached small ints): the cut still returns
    after one round, and a topic whose turns are exactly the rare word's is scored once."""
    rows = []
    for i in range(1200):
        a = i % 4 == 3                     # 300 turns, all in topic "x" (the second topic seen)
        b = i % 4 == 1 or i % 8 == 2       # 450 turns, none in "x"
        words = (["alpha"] if a else []) + (["beta"] if b else []) + (["gamma"] if i % 3 else []) \
            + ["pad"] * (6 + i % 5)
        rows.append((" ".join(words), "x" if a else "y"))
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for words, k, topic, work in [("alpha gamma", 257, None, [300]), ("alpha beta", 257, None, [300, 750]),
                                  ("alpha beta", 300, "x", [300]), ("alpha beta", 299, "x", [300])]:
        scored.clear()
        assert index.search(words.split(), k, topic) == store.lexical_search_fts(words, k, topic)
        assert scored == work, (words, k, topic, scored)


def test_a_query_of_more_than_256_matching_words(tmp_path):
    """300 words in the same two turns, k = 3: no round can return before the last, the 300th."""
    words = [f"w{i}x" for i in range(300)]
    store = _store(tmp_path, [(" ".join(words), "t"), ("pad", "t"), (" ".join(words) + " pad", "t"), ("pad pad", "t")])
    index = store.lexical_index()
    scored = _spy(index)
    want = store.lexical_search_fts(" ".join(words), 3)
    assert want == ["t000", "t002"]
    assert index.search(words, 3, None) == want  # fewer matches than k: only the last round scores
    assert scored == [2]


def test_cut_margin_holds_a_kth_score_within_1e9_of_rest(tmp_path):
    """The cut's margin at work: 149 turns (393 tokens), "alpha" twice in one turn of 17 tokens,
    "beta" alone in 36 turns. That turn's score exceeds "beta"'s bound (`rest`) by 9.39e-10
    relative: above `rest` and above `rest ** (1 + 1e-9)` (rest = 2.496 < e), not above
    `rest * (1 + 1e-9)`, so the first round (the one turn) cannot return and the last round
    scores the union. Found by a search over (turns, tokens, frequency, length)."""
    rows = [("alpha alpha" + " pad" * 15, "t")] + [("beta", "t")] * 36 \
        + [("pad pad pad", "t")] * 108 + [("pad pad pad pad", "t")] * 4
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    assert index.total_tokens == 393 and len(index.ids) == 149
    scored = _spy(index)
    phrases = [(0, *index._phrase_postings(("alpha",))), (1, *index._phrase_postings(("beta",)))]
    idf = [math.log((149 - p[1].shape[0] + 0.5) / (p[1].shape[0] + 0.5)) for p in phrases]
    rest = idf[1] * (1.2 + 1.0)
    kth = float(LexicalIndex._scores([(0, idf[0], *phrases[0][1:])], np.array([0]),
                                     index._lengths[:149], 393 / 149)[0])
    assert rest < rest ** (1 + 1e-9) < kth <= rest * (1 + 1e-9)
    want = store.lexical_search_fts("alpha beta", 1)
    assert want == ["t000"]
    assert index.search(["alpha", "beta"], 1, None) == want
    assert scored == [1, 37], scored


def test_round_margin_holds_a_bound_within_1e9_of_rest(tmp_path):
    """The round test's margin at work: 98 turns, "aa" in 5, "bb" in 16, "cc" in 22. In
    rationals (93.5 / 5.5) = (82.5 / 16.5) * (76.5 / 22.5) = 17, so "aa"'s bound equals the sum
    of the others'; in floats it exceeds it by one ulp, within `rest * (1 + 1e-9)`: the first
    round is skipped (never scored), the second scores "aa" and "bb"'s 21 turns and returns."""
    rows = [("aa" if i < 5 else "bb" if i < 21 else "cc" if i < 43 else "pad", "t") for i in range(98)]
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    b = [math.log((98 - n + 0.5) / (n + 0.5)) * (1.2 + 1.0) for n in (5, 16, 22)]
    rest = math.fsum(b[1:])
    assert rest < b[0] <= rest * (1 + 1e-9)
    for k in (1, 5):
        scored.clear()
        assert index.search(["aa", "bb", "cc"], k, None) == store.lexical_search_fts("aa bb cc", k)
        assert scored == [21], (k, scored)


def test_topic_scope_counts_only_its_own_turns_when_it_is_the_first_topic(tmp_path):
    """The filtered topic is the first seen (code 0) and every one of its 10 turns holds the
    rare word: the first round's candidates are the whole topic, the last round, scored once,
    although the k-th score (long turns) stays below the other word's bound. Counting turns
    of later topics as in scope too would score a second round."""
    rows = [("rare" + " pad" * 29, "a")] * 10 + [("common", "b")] * 30 + [("pad", "b")] * 60
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for k in (1, 3, 10):
        scored.clear()
        assert index.search(["rare", "common"], k, "a") == store.lexical_search_fts("rare common", k, "a")
        assert scored == [10], (k, scored)


def test_round_test_takes_a_bound_less_than_one_above_rest(tmp_path):
    """"rare" (10 turns, bound 4.73) exceeds "mid"'s bound (15 turns, 3.75) by less than 1 and
    less than twice: the first round is tried and returns for k = 1 (a rare turn of three
    "rare" scores above 3.75), scoring only the 10 rare turns."""
    rows = [("rare rare rare", "t")] * 10 + [("mid", "t")] * 15 + [("pad" + " pad" * 9, "t")] * 75
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    bounds = [math.log((100 - n + 0.5) / (n + 0.5)) * (1.2 + 1.0) for n in (10, 15)]
    assert bounds[1] * (1 + 1e-9) < bounds[0] < bounds[1] + 1.0
    assert index.search(["rare", "mid"], 1, None) == store.lexical_search_fts("rare mid", 1) == ["t000"]
    assert scored == [10], scored


def test_equal_clipped_bounds_below_one_skip_the_first_round(tmp_path):
    """Two words each in more than half the turns: both idfs are clipped to 1e-6, their bounds
    equal (2.2e-6, below 1, where `rest ** (1 + 1e-9)` would fall below `rest`): the first
    round is skipped and the last scores the union once."""
    rows = [(("xa " if i < 6 else "") + ("xb" if i >= 3 else "") + " pad", "t") for i in range(10)]
    store = _store(tmp_path, rows)
    index = store.lexical_index()
    scored = _spy(index)
    for k in (1, 4):
        scored.clear()
        assert index.search(["xa", "xb"], k, None) == store.lexical_search_fts("xa xb", k)
        assert scored == [10], (k, scored)
