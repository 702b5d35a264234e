"""The Inspector's match arrays against the dict rule they replace (kept as the oracle).

`Transcript.matches` must give exactly `overlap_counts` (indices ascending), and
`select_matches` exactly `select_records` plus the discarded matches the Inspector used to
compute as `sorted(i for i in counts if i // size not in kept)`, on random transcripts, token
sets, caps, block sizes, with and without the block filter; `Inspector.inspect` must report the
records, blocks, discarded matches and ρ that the dict rule gives.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from lsrep.systems.thalia.config import HarnessConfig
from lsrep.systems.thalia.events import EventRelay
from lsrep.systems.thalia.inspector import (
    Inspector,
    Partition,
    kept_block_count,
    select_matches,
    select_records,
)
from lsrep.systems.thalia.text import content_tokens
from thalia_testkit import T0, Recorder, transcript_of

WORDS = [f"w{i}" for i in range(12)]


def _lines(rng: random.Random, n: int) -> list[str]:
    # Skewed draws: a few words are on most lines (long postings), others on few.
    return [" ".join(rng.choices(WORDS, weights=[2 ** -k for k in range(len(WORDS))],
                                 k=rng.randint(1, 5))) for _ in range(n)]


def _oracle(counts: dict[int, int], n: int, cap: int, size: int, partitioned: bool):
    ordered, partition = select_records(counts, n, cap, size, partitioned)
    discarded: tuple[int, ...] = ()
    if partition is not None:
        kept = frozenset(partition.kept)
        discarded = tuple(sorted(i for i in counts if i // size not in kept))
    return ordered, partition, discarded, {i: counts[i] for i in ordered if i in counts}


def test_matches_are_the_overlap_counts_as_ascending_arrays():
    rng = random.Random(3)
    for trial in range(300):
        t = transcript_of(_lines(rng, rng.randint(0, 60)))
        tokens = rng.sample(WORDS + ["absent", "w1"], rng.randint(0, 4))
        idx, cnt = t.matches(tokens)
        want = t.overlap_counts(tokens)
        assert idx.tolist() == sorted(want), trial
        assert cnt.tolist() == [want[i] for i in sorted(want)], trial
        assert idx.dtype == np.int64 and cnt.dtype == np.int64


def test_a_single_token_s_matches_are_a_copy_not_the_postings_buffer():
    t = transcript_of(["a b", "b", "a"])
    idx, cnt = t.matches(["a"])
    idx[0] = 99
    assert t.matches(["a"])[0].tolist() == [0, 2] and cnt.tolist() == [1, 1]


def test_postings_grow_past_their_buffer_in_order():
    t = transcript_of(["a"] * 37 + ["b"] + ["a"] * 5)
    assert t.matches(["a"])[0].tolist() == [*range(37), *range(38, 43)]
    assert t.matches(["a", "b"])[0].tolist() == list(range(43))
    assert t.matches(["a", "b"])[1].tolist() == [1] * 43
    # The buffer doubles (4, 8, 16, 32, 64), so appending stays amortised O(1).
    assert [t._postings[w].buf.shape[0] for w in ("a", "b")] == [64, 4]
    full = transcript_of(["c"] * 8)
    assert full.matches(["c"])[0].tolist() == list(range(8)) and full._postings["c"].buf.shape[0] == 8


def test_matches_stay_exact_while_records_arrive_between_searches():
    from lsrep.systems.thalia.transcript import Record, Transcript

    rng = random.Random(5)
    t = Transcript()
    for i, line in enumerate(_lines(rng, 400)):
        t.add(Record(index=i, turn_id=i + 1, source_id=f"t{i}", session_id="s", timestamp=T0,
                     speaker="User", text=line))
        if rng.random() < 0.3:  # a search moves the pending indices into the arrays
            tokens = rng.sample(WORDS, rng.randint(1, 3))
            want = t.overlap_counts(tokens)
            idx, cnt = t.matches(tokens)
            assert (idx.tolist(), cnt.tolist()) == (sorted(want), [want[k] for k in sorted(want)]), i
    assert t._postings["w0"].buf.shape[0] == 512  # doubled from 4 as w0's ~200 indices came in


@pytest.mark.parametrize("seed", range(6))
def test_select_matches_is_select_records_on_random_matches(seed):
    rng = random.Random(seed)
    for trial in range(400):
        n = rng.randint(0, 120)
        counts = {i: rng.randint(1, 4) for i in range(n) if rng.random() < rng.choice([0.02, 0.2, 0.9])}
        cap, size = rng.randint(1, 25), rng.randint(1, 8)
        partitioned = rng.random() < 0.7
        idx = np.array(sorted(counts), dtype=np.int64)
        cnt = np.array([counts[i] for i in sorted(counts)], dtype=np.int64)
        got = select_matches(idx, cnt, n, cap, size, partitioned)
        want = _oracle(counts, n, cap, size, partitioned)
        assert (got.ordered, got.partition, got.discarded, got.counts) == want, (trial, counts, n, cap, size)
        assert all(type(i) is int for i in (*got.ordered, *got.discarded, *got.counts.values()))


def test_select_matches_pinned_cases():
    counts = {3: 1, 12: 2, 13: 1, 26: 1, 27: 2}
    idx = np.array(sorted(counts))
    cnt = np.array([counts[i] for i in sorted(counts)])
    # Blocks of 5: block 2 scores 3, block 5 scores 3 (tie: the lower block first), block 0 scores 1.
    got = select_matches(idx, cnt, 30, 5, 5, True)  # m = 2 blocks
    assert (got.ordered, got.partition, got.discarded) == ([12, 27, 13, 26], Partition(6, (2, 5)), (3,))
    got = select_matches(idx, cnt, 30, 4, 5, True)  # m = 1
    assert (got.ordered, got.partition, got.discarded) == ([12, 13], Partition(6, (2,)), (3, 26, 27))
    assert got.counts == {12: 2, 13: 1}
    # Fewer matched blocks than m: zero-score blocks fill in ascending order.
    got = select_matches(np.array([17]), np.array([2]), 26, 10, 5, True)  # m = 3
    assert (got.ordered, got.partition, got.discarded) == ([17], Partition(6, (0, 1, 3)), ())
    # Without the filter: every match, ρ desc then index asc, cut at the cap.
    got = select_matches(idx, cnt, 30, 3, 5, False)
    assert (got.ordered, got.partition, got.discarded) == ([12, 27, 3], None, ())
    # No match: transcript order (and the kept blocks' records with the filter).
    empty = np.zeros(0, dtype=np.int64)
    assert select_matches(empty, empty, 13, 9, 5, True).ordered == list(range(9))
    assert select_matches(empty, empty, 3, 4, 5, False).ordered == [0, 1, 2]
    assert kept_block_count(4, 5) == 1


@pytest.mark.parametrize("adaptive", [False, True])
def test_inspect_reports_what_the_dict_rule_gives(adaptive):
    rng = random.Random(11 + adaptive)
    for trial in range(60):
        lines = _lines(rng, rng.randint(1, 90))
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        cfg = dict(max_windows=rng.randint(1, 8), partition_threshold=rng.choice([0, 10, 200]),
                   partition_size=rng.randint(1, 6), adaptive_windows=adaptive, adaptive_window_ratio=7)
        rec = Recorder()
        out = Inspector(HarnessConfig(**cfg), EventRelay(rec)).inspect(query, transcript_of(lines))
        m = out.metadata
        counts = transcript_of(lines).overlap_counts(sorted(content_tokens(query)))
        n = len(lines)
        partitioned = n > cfg["partition_threshold"]
        ordered, partition, discarded, _ = _oracle(counts, n, m.effective_max_windows,
                                                   cfg["partition_size"], partitioned)
        assert list(m.selected_indices) == ordered, trial
        assert (m.partitioned, m.kept_blocks, m.discarded_matches, m.n_matches) == (
            partition is not None, partition.kept if partition else (), discarded, len(counts)), trial
        assert m.fallback == ("none" if counts else "overlap"), trial
        q = len(m.query_tokens)
        assert [w.rho for w in out.windows] == [counts.get(i, 0) / q for i in ordered], trial
        if partition is not None:
            assert rec.of("inspector.partition", "executed")[0].params["discarded_matches"] == list(discarded)
        base = select_records(counts, n, cfg["max_windows"], cfg["partition_size"], partitioned)[0]
        assert [w.widened for w in out.windows] == [i not in base for i in ordered], trial


def test_a_single_matching_record_is_a_grep_match_not_the_overlap_fallback():
    rec = Recorder()
    out = Inspector(HarnessConfig(), EventRelay(rec)).inspect("violin", transcript_of(["a violin", "b", "c"]))
    assert out.metadata.fallback == "none" and out.metadata.n_matches == 1
    assert [w.source_index for w in out.windows] == [0]
    assert rec.of("inspector.grep", "output")[0].count == 1 and not rec.of("inspector.fallback_overlap", "eligible")
