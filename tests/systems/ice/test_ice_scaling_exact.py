"""ICE's per-query and per-session shortcuts give exactly what the whole-history rules give.

Each fast path is compared with its definition on the same store: the lexical top k with
FTS5's `ORDER BY bm25(turns_fts), rowid LIMIT k`, the pending-extraction set with the
`extracted = 0` scan, the running strength statistics with the whole-table ones, the cached
counts and conversation list with their SQL.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from ice_testkit import FILLER, Harness, day
from lsrep.systems.ice.db import Transaction
from lsrep.systems.ice.episodic import EpisodicStore, TurnRecord
from lsrep.systems.ice.lexical import LexicalIndex, Tokenizer

T0 = datetime(2024, 1, 1, tzinfo=UTC)
TOPICS = ["general", "health", "work", "travel"]
# Words whose porter stems collide (running/runs/run), apostrophes that make two-token
# phrases (john's -> "john s"), digits, and a Zipf-like spread from very common to rare.
SPECIAL = ["running", "runs", "run", "john's", "john", "s", "caroline's", "carolin", "2023",
           "don't", "connection", "connected", "connecting"]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "dor", "pi", "ne"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(size * 3)}
    return sorted(words)[:size] + SPECIAL


def _text(rng: random.Random, vocab: list[str], dense: bool) -> str:
    n = rng.randint(0, 25)
    if dense:
        return " ".join(rng.choice(vocab[:6]) for _ in range(n))
    # Zipf: word i drawn with weight 1/(i+1); repeats inside one turn happen.
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    words = rng.choices(vocab, weights=weights, k=n)
    if rng.random() < 0.2:
        words.append(rng.choice(SPECIAL))
    return " ".join(words) + rng.choice(["", ".", "!", " ?"])


def _store(tmp_path, name: str) -> EpisodicStore:
    return EpisodicStore(tmp_path / f"{name}.sqlite")


def _add(store: EpisodicStore, i: int, text: str, topic: str, conv: str = "c1") -> None:
    rec = TurnRecord(f"t{i:05d}", conv, f"s{i // 20}", i, T0 + timedelta(minutes=i), "user", text)
    assert store.add(rec, np.ones(4, dtype=np.float32), topic)


def _queries(rng: random.Random, vocab: list[str]) -> list[str]:
    out = []
    for _ in range(25):
        n = rng.randint(1, 6)
        words = [rng.choice(vocab) for _ in range(n)]
        if rng.random() < 0.3:
            words.append(rng.choice(SPECIAL))
        if rng.random() < 0.2:
            words.append("zzzunknown")
        out.append("What about " + " and the ".join(words) + "?")
    out += ["runs running run", "john's john s", "the and of", "caroline's 2023 carolin"]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_lexical_top_k_equals_fts5_bm25_order(tmp_path, seed):
    rng = random.Random(seed)
    dense = seed % 3 == 2
    vocab = _vocabulary(rng, 40 if seed % 2 else 400)
    store = _store(tmp_path, "lex")
    compared = nonempty = 0
    n_turns = 0
    for stage in range(3):
        for _ in range(rng.randint(40, 160)):
            topic = TOPICS[0] if rng.random() < 0.5 else rng.choice(TOPICS)
            _add(store, n_turns, _text(rng, vocab, dense), topic)
            n_turns += 1
            if stage == 0 and n_turns == 5:
                store.lexical_index()  # build the index early: later adds extend it
        for query in _queries(rng, vocab[:8] if dense else vocab):
            for k in (1, 2, 5, 30, 1000):
                for topic in (None, "general", "travel", "nosuchtopic"):
                    want = store.lexical_search_fts(query, k, topic)
                    got = store.lexical_search(query, k, topic)
                    assert got == want, (seed, stage, query, k, topic)
                    compared += 1
                    nonempty += bool(want)
    # A cold index (built from the FTS5 index of a reopened file, after the warm-up queries
    # that FTS5 answers alone) agrees too.
    store.close()
    again = _store(tmp_path, "lex")
    for query in _queries(rng, vocab):
        assert again.lexical_search(query, 30) == again.lexical_search_fts(query, 30)
    assert again._lexical is not None
    assert compared > 1000 and nonempty > compared // 4


def test_lexical_ties_keep_storage_order(tmp_path):
    """Identical turns tie exactly in bm25; the top k must be the earliest of them."""
    store = _store(tmp_path, "ties")
    for i in range(50):
        _add(store, i, "lantern harbour" if i % 3 else "lantern violin harbour", "general")
    for k in (1, 7, 16, 17, 40):
        want = store.lexical_search_fts("lantern violin", k)
        assert store.lexical_search("lantern violin", k) == want
        assert store.lexical_search("harbour", k) == store.lexical_search_fts("harbour", k)
    # the shorter turns score higher; among them (exact ties) the earliest come first
    assert store.lexical_search("harbour", 5) == ["t00001", "t00002", "t00004", "t00005", "t00007"]


def test_lexical_cut_scores_only_the_rare_postings(tmp_path):
    """With a rare word deciding the top k, the common word's postings are never scored in full."""
    store = _store(tmp_path, "cut")
    for i in range(400):
        _add(store, i, "common filler words" + (" rareword" if i % 50 == 7 else ""), "general")
    scored: list[int] = []
    index = store.lexical_index()
    original = index._scores

    def spy(phrases, cand, lengths, avgdl):
        scored.append(int(cand.shape[0]))
        return original(phrases, cand, lengths, avgdl)

    index._scores = spy
    assert store.lexical_search("common rareword", 5) == store.lexical_search_fts("common rareword", 5)
    assert scored == [8]  # the 8 turns holding the rare word, not the 400 holding `common`


def test_tokenizer_matches_the_fts5_index(tmp_path):
    """New turns are tokenized by a scratch table; the cold build reads the real index."""
    store = _store(tmp_path, "tok")
    texts = ["Running runs; John's 2023 café!", "", "a b c a", "Connection connected connecting."]
    for i, text in enumerate(texts):
        _add(store, i, text, "general")
    cold = LexicalIndex.from_database(store.conn, Tokenizer())
    warm = Tokenizer()
    assert cold.docs == [warm.tokens(t) for t in texts]
    assert cold.docs[0][:2] == ("run", "run")
    assert cold.total_tokens == sum(len(d) for d in cold.docs)


def test_pending_extraction_set_equals_the_scan(harness):
    h: Harness = harness(extraction_mode="maintenance")
    rng = random.Random(3)
    ep = h.system.db.episodic
    for step in range(120):
        action = rng.random()
        if action < 0.6:
            h.say(FILLER[step % len(FILLER)] + f" Item {step}.",
                  role=rng.choice(["user", "assistant"]))
        elif action < 0.8:
            pending = ep.pending_extraction_scan()
            if pending:
                ep.mark_extracted(rng.choice(pending).turn_id)
            ep.mark_extracted("no-such-turn")
        elif action < 0.9:
            h.system.run_extraction(now=day(step))
        else:
            h.system.reopen()
            ep = h.system.db.episodic
        assert ep.pending_extraction() == ep.pending_extraction_scan()
    assert h.system.run_extraction(now=day(200)) >= 0
    assert ep.pending_extraction() == ep.pending_extraction_scan() == []


def test_running_strength_stats_equal_the_whole_table(harness):
    h: Harness = harness()
    rng = random.Random(5)
    ep = h.system.db.episodic
    floor = h.system.config.decay_floor
    ids: list[str] = []
    for step in range(150):
        action = rng.random()
        if action < 0.5:
            ids.append(h.say(FILLER[step % len(FILLER)], at=step))
        elif action < 0.7 and ids:
            ep.reinforce(rng.sample(ids, min(len(ids), 3)) + ["missing"], day(step))
        elif action < 0.9:
            h.system.run_decay(now=day(step + rng.random() * 30))
        else:
            h.system.reopen()
            ep = h.system.db.episodic
        n, total = ep.strength_stats()
        values = [s for _i, s, _a in ep.strengths()]
        for above in (floor, 0.5, floor):  # the kept live set and the table agree
            assert ep.strengths(above=above) == ep.strengths_scan(above)
        scan_n, scan_total = ep.strength_stats_scan()
        assert n == scan_n == len(values)
        assert total == math.fsum(values)  # exact: the correctly rounded sum
        assert total == pytest.approx(scan_total, rel=1e-12, abs=1e-12)
    assert len(set(values)) > 5  # decay and reinforcement did produce varied strengths
    assert 0 < len(ep.strengths(above=floor)) < len(values)  # some at the floor, some above
    assert ep.strengths(above=0.0) == ep.strengths()  # a lower floor reads the table again


def test_cached_counts_and_conversations_equal_sql(harness):
    h: Harness = harness()
    ep = h.system.db.episodic
    rng = random.Random(9)
    for step in range(80):
        conv = rng.choice(["a", "b", "c"]) if step > 5 else "b"
        h.say(FILLER[step % len(FILLER)], conv=conv)
        if step % 17 == 0:
            h.system.reopen()
            ep = h.system.db.episodic
        assert ep.conversations() == ep._conversations_scan()
        for key in (None, "a", "b", "c", "zz"):
            assert ep.count(key) == ep._count_rows(key)


def test_remembered_gram_vectors_give_the_fresh_matches(harness):
    """Fuzzy entity matching with the prompt's n-gram vectors kept equals computing them anew."""
    h: Harness = harness()
    for text in ["I moved to Lisbon last spring.", "My sister Annabel lives in Porto.",
                 "I adopted a dog called Biscuit.", "We visited the Gulbenkian museum."]:
        h.say(text)
    codex = h.system.db.codex
    prompts = ["Where does Anabel live?", "Tell me about Lisbonn", "How is Biscuit?",
               "Where does Anabel live?", "the gulbenkian museum", "Tell me about Lisbonn"]
    fresh = []
    for p in prompts:
        codex._gram_vectors.clear()
        fresh.append(codex.find_entities(p, 0.5))
    kept = [codex.find_entities(p, 0.5) for p in prompts for _ in range(2)][::2]
    assert kept == fresh
    assert len(codex._gram_vectors) == 2  # the prompts with no exact name took the fuzzy path
    assert ("fuzzy" in {how for hits in fresh for _e, how in hits})


def test_preflight_with_the_lexical_index_equals_fts5_only(tmp_path, monkeypatch):
    """End to end: every pre-flight (context and lexical hits) is the same with the index on."""
    import lsrep.systems.ice.episodic as episodic

    rng = random.Random(11)
    vocab = _vocabulary(rng, 200)
    texts = [_text(rng, vocab, dense=False) for _ in range(160)]
    questions = [f"What did I say about {rng.choice(vocab)} and {rng.choice(vocab)}?" for _ in range(4)]

    def run(warmup: int) -> tuple[list, bool]:
        monkeypatch.setattr(episodic, "LEXICAL_WARMUP", warmup)
        h = Harness(tmp_path / f"ice-{warmup}")
        out = []
        for i, text in enumerate(texts):
            h.say(text or "empty", at=i // 20)
            if i % 20 == 19:
                out += [(p.context_text, p.counts.get("leg.episodic_lexical"))
                        for p in (h.ask(q, at=i // 20) for q in questions)]
                h.system.run_summaries(now=day(i // 20))
                h.system.run_decay(now=day(i // 20 + 0.5))
        return out, h.system.db.episodic._lexical is not None

    fts_only, built_fts = run(10**9)
    indexed, built = run(0)
    assert indexed == fts_only and built and not built_fts
    assert sum(hits or 0 for _c, hits in indexed) > 0


def _reinforce_by_turn_id(store: EpisodicStore, turn_ids: list[str], now: datetime) -> None:
    """The rule `reinforce` replaced: one UPDATE ... WHERE turn_id = ? per id."""
    stamp = now.isoformat()
    with Transaction(store.conn) as c:
        for tid in turn_ids:
            c.execute("UPDATE turn_strength SET strength = 1.0, strength_at = ?, last_access = ?"
                      " WHERE rowid = (SELECT rowid FROM turns WHERE turn_id = ?) RETURNING rowid",
                      (stamp, stamp, tid)).fetchall()


def _set_strengths_by_turn_id(store: EpisodicStore, updates: list[tuple[str, float]],
                              now: datetime) -> None:
    stamp = now.isoformat()
    with Transaction(store.conn) as c:
        c.executemany("UPDATE turn_strength SET strength = ?, strength_at = ?"
                      " WHERE rowid = (SELECT rowid FROM turns WHERE turn_id = ?)",
                      [(s, stamp, tid) for tid, s in updates])


@pytest.mark.parametrize("reopen_every", [0, 3])
def test_writes_by_rowid_leave_the_same_file_as_writes_by_turn_id(tmp_path, reopen_every):
    """Reinforcement and decay address rows by rowid; the file is byte for byte the one the
    turn-id statements leave (repeats, unknown ids and reopened stores included)."""
    fast, plain = _store(tmp_path, "fast"), _store(tmp_path, "plain")
    rng = random.Random(11)
    n = 0
    for night in range(12):
        for _ in range(rng.randint(5, 40)):
            text = f"turn {n} " + " ".join(rng.choice(SPECIAL) for _ in range(rng.randint(0, 9)))
            topic = rng.choice(TOPICS)
            for store in (fast, plain):
                _add(store, n, text, topic)
            n += 1
        now = T0 + timedelta(days=night, hours=20)
        for _ in range(4):
            ids = [f"t{rng.randrange(n + 3):05d}" for _ in range(rng.randint(0, 30))]
            ids += ids[:2]  # repeats are written twice, as before
            fast.reinforce(ids, now)
            _reinforce_by_turn_id(plain, ids, now)
        updates = [(f"t{i:05d}", rng.choice([0.05, 0.5, 0.7071, 1.0]) * rng.random())
                   for i in rng.sample(range(n + 5), min(n + 5, 60))]
        fast.set_strengths(updates, now + timedelta(hours=3))
        _set_strengths_by_turn_id(plain, updates, now + timedelta(hours=3))
        assert fast.strengths(above=0.05) == fast.strengths_scan(0.05)
        if reopen_every and night % reopen_every == 0:
            fast.close()
            fast = _store(tmp_path, "fast")
    fast.close()
    plain.close()
    assert (tmp_path / "fast.sqlite").read_bytes() == (tmp_path / "plain.sqlite").read_bytes()


def test_decay_of_a_batch_equals_decaying_each_row():
    """`decayed_all` shares the power of two per "set at"; every result is `decayed`'s double."""
    from lsrep.systems.ice.config import IceConfig
    from lsrep.systems.ice.workers import decayed, decayed_all

    rng = random.Random(4)
    for config in (IceConfig(), IceConfig(decay_half_life_days=3.5, decay_floor=0.2)):
        stamps = [(T0 + timedelta(days=rng.random() * 90)).isoformat() for _ in range(12)]
        rows = [(f"t{i}", rng.choice([1.0, 0.05, 0.2, rng.random()]), rng.choice(stamps))
                for i in range(400)]
        seen: set[float] = set()
        for now in (T0, T0 + timedelta(days=45.25), T0 + timedelta(days=400)):
            got = decayed_all(rows, now, config)
            want = [(i, decayed(s, at, now, config)) for i, s, at in rows]
            assert [(i, s.hex()) for i, s in got] == [(i, s.hex()) for i, s in want]
            seen |= {s for _i, s in got}
        assert len(seen) > 50 and config.decay_floor in seen
