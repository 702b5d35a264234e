"""Linear-cost maintenance and search give exactly what the whole-history versions gave."""

from __future__ import annotations

import numpy as np
from ice_testkit import FILLER, Harness, day
from lsrep.systems.ice.episodic import top_k_stable
from lsrep.systems.ice.workers import decayed


def _all_strengths(h: Harness) -> dict[str, float]:
    db = h.system.db
    return {i: s for store in (db.episodic, db.codex, db.procedures) for i, s, _at in store.strengths()}


def test_decay_that_skips_floor_rows_equals_decaying_every_row(harness):
    h = harness()
    for k in range(60):
        h.say(FILLER[k % len(FILLER)] + f" Note {k}.", at=k * 3)
    config = h.system.config
    expected = {i: (s, at) for store in (h.system.db.episodic,) for i, s, at in store.strengths()}
    for when in (40, 95, 180, 181, 400):
        h.system.run_decay(now=day(when))
        # the whole-history rule: every strength aged from when it was last set
        for item, (s, at) in list(expected.items()):
            new = decayed(s, at, day(when), config)
            expected[item] = (new, day(when).isoformat())
        got = _all_strengths(h)
        assert {i: got[i] for i in expected} == {i: s for i, (s, _at) in expected.items()}
        mean = sum(got.values()) / len(got)
        assert h.recorder.last("worker.decay", "output").params["mean_strength"] == round(mean, 6)
    assert min(_all_strengths(h).values()) == config.decay_floor  # the floor was reached


def test_decay_reads_only_rows_above_the_floor(harness):
    h = harness()
    for k in range(30):
        h.say(FILLER[k % len(FILLER)], at=0)
    h.system.run_decay(now=day(400))  # everything at the floor now
    assert h.system.db.episodic.strengths(above=h.system.config.decay_floor) == []
    h.say("A fresh turn about violins.", at=401)
    assert [r[0] for r in h.system.db.episodic.strengths(above=h.system.config.decay_floor)] == ["t0030"]


def test_unsummarised_tail_is_read_from_where_summaries_end(harness):
    h = harness()
    h.say_all(FILLER * 6)  # 48 turns
    everything = h.system.db.episodic.conversation("c1")
    assert h.system.db.episodic.conversation("c1", skip=20) == everything[20:]
    assert len(h.system.run_summaries(now=day(60))) == 2
    h.say_all(FILLER * 2)  # 64 turns: one more full batch
    third = h.system.run_summaries(now=day(61))
    assert len(third) == 1
    assert h.system.db.summaries.get(third[0]).source_turns[0] == everything[40].turn_id


def test_top_k_stable_equals_a_full_stable_sort():
    rng = np.random.default_rng(7)
    for trial in range(2000):
        n, k = int(rng.integers(1, 50)), int(rng.integers(0, 60))
        scores = (rng.integers(0, 4, n) if trial % 2 else rng.random(n)).astype(np.float32)
        assert list(top_k_stable(scores, k)) == list(np.argsort(-scores, kind="stable")[:k])


def test_cached_searches_match_a_fresh_store(harness, tmp_path):
    h = harness()
    for k in range(50):
        h.say(FILLER[k % len(FILLER)] + f" item {k} lantern {k % 7}.", at=k)
        if k % 10 == 9:
            h.system.run_summaries(now=day(k))
    ep, su = h.system.db.episodic, h.system.db.summaries
    q = np.asarray(h.system.embedder.embed(["lantern item 3"]), dtype=np.float32)[0]
    warm = (ep.vector_search(q, 12), su.search(q, 3))
    h.say("One more lantern item after the caches were filled.", at=60)
    h.system.run_summaries(now=day(60))
    warm = (ep.vector_search(q, 12), ep.vector_search(q, 5, topic=ep.get("t0000").topic), su.search(q, 3))
    h.system.reopen()  # cold caches, rebuilt from the files
    ep, su = h.system.db.episodic, h.system.db.summaries
    cold = (ep.vector_search(q, 12), ep.vector_search(q, 5, topic=ep.get("t0000").topic), su.search(q, 3))
    assert warm == cold and len(warm[0]) == 12
