"""The turn index's fast build equals the definition: every n-gram (n <= 3) of every segment
posted once per turn in order, per-turn shingles, sentences and words (built lazily)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from lsrep.protocol.models import Turn
from lsrep.provenance import SENTENCE_MIN_TOKENS, TurnIndex, segments
from lsrep.text import STOPWORDS

TEXTS = [
    "[2026-03-02 09:00] Ana (user): I moved to Lisbon on 2023-05-08 and started at 10:30.",
    "Thanks! Sounds great.",
    "The meeting (source: turn 8, 2023-05-08) ran 25:50; then lunch; then the long walk home along the river.",
    "Ana: the 3-2 score at 9:15 was close",
    "ok",
    "We met at 9:15 and left at 11:40 sharp, after the talk",
    "",
    "Books: Dune, Emma, Ulysses. Films: Alien!  Music? Bach; Arvo Part; Nina Simone and Miles Davis on vinyl.",
    "I moved to Lisbon and started at the new office near the river, the long walk home along the river.",
]


def _reference_segments(text, drop):
    text = re.sub(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
                  r"|\b\d{1,2}:\d{2}(?::\d{2})?\b", " ",
                  re.sub(r"[\[(][^\[\]()\n]*?\d{4}-\d{2}-\d{2}[^\[\]()\n]*[\])]", " ", text.lower()))
    out = []
    for part in re.split(r"[.!?;:\n]+", text):
        toks = tuple(t for t in re.findall(r"[a-z0-9]+", part) if t not in STOPWORDS and t not in drop)
        if toks:
            out.append(toks)
    return tuple(out)


def _reference_index(texts, drop, size=3):
    postings, grams_of, sentences_of, tokens_of = {}, [], [], []
    for pos, text in enumerate(texts):
        segs = _reference_segments(text, drop)
        grams = {}
        for toks in segs:
            for n in range(1, size + 1):
                for i in range(len(toks) - n + 1):
                    grams[tuple(toks[i:i + n])] = None
        for gram in grams:
            postings.setdefault(gram, []).append(pos)
        shingle = lambda toks: {tuple(toks[i:i + min(size, len(toks))])  # noqa: E731
                                for i in range(len(toks) - min(size, len(toks)) + 1)}
        grams_of.append(frozenset().union(*(shingle(t) for t in segs)))
        sentences_of.append(tuple(frozenset(shingle(t)) for t in segs if len(t) >= SENTENCE_MIN_TOKENS))
        tokens_of.append(frozenset(t for seg in segs for t in seg))
    return postings, grams_of, sentences_of, tokens_of


def test_fast_build_equals_the_definition():
    drop = frozenset({"ana", "user"})
    index = TurnIndex(TEXTS, drop)
    postings, grams_of, sentences_of, tokens_of = _reference_index(TEXTS, drop)
    assert list(index.postings.items()) == list(postings.items())  # same keys, same order, same turns
    assert len(index) == len(TEXTS)
    assert list(index.turn_grams) == grams_of
    assert list(index.turn_sentences) == sentences_of
    assert list(index.turn_tokens) == tokens_of
    assert index.turn_grams[-1] == grams_of[-1]
    for text in TEXTS:
        assert segments(text, drop) == _reference_segments(text, drop)
    # The paraphrase detector's first-turn and turn-count tables, read off the 1-gram postings,
    # equal the definition over the per-turn word sets, and so do its answers.
    from lsrep.paraphrase import TokenFirsts

    first = {t: min(p for p, toks in enumerate(tokens_of) if t in toks) for t in set().union(*tokens_of)}
    turns = {t: sum(t in toks for toks in tokens_of) for t in first}
    assert (index.firsts.first, index.firsts.turns) == (first, turns)
    reference = TokenFirsts.of_turn_tokens(tokens_of)
    assert (reference.first, reference.turns) == (first, turns)
    for toks in [*tokens_of, tuple(first), ("never", "said")]:
        assert index.firsts.settled(toks) == max((first[t] + 1 for t in toks if t in first), default=0)
        for prefix in range(len(tokens_of) + 1):
            assert index.firsts.leak(toks, prefix) == reference.leak(toks, prefix)


def test_index_built_in_background_is_the_same_index():
    turns = [Turn(turn_id=f"t{i}", session_id="s", timestamp=datetime(2026, 1, 1, tzinfo=UTC), role="user",
                  speaker="Ana", content=text) for i, text in enumerate(TEXTS)]
    built = TurnIndex.in_background(turns).result()
    direct = TurnIndex.of_turns(turns)
    assert list(built.postings.items()) == list(direct.postings.items())
    assert built.drop == direct.drop == frozenset({"ana", "user"})


def test_lazy_ngram_postings_equal_the_eager_build_on_random_texts():
    """n-gram postings computed on lookup (rarest word's turns, then a substring test on the turn's
    segments) equal the eager definition for every n-gram said, and are absent for n-grams whose
    words are said but never next to each other in one segment (across a segment break, reversed)."""
    import random

    rng = random.Random(18)
    words = [f"w{i}" for i in range(40)] + ["lisbon", "dune", "river"]
    seps = [" ", " ", " ", " ", ", ", ". ", "; ", "! ", "\n", " the ", " and "]
    texts = ["".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    index = TurnIndex(texts, frozenset({"w0"}))
    postings, *_ = _reference_index(texts, frozenset({"w0"}))
    assert list(index.postings.items()) == list(postings.items())
    assert len(index.postings) == len(postings)
    absent = 0
    for _ in range(3000):
        gram = tuple(rng.choice(words) for _ in range(rng.randint(1, 3)))
        assert index.postings.get(gram, "absent") == postings.get(gram, "absent"), gram
        absent += gram not in postings
    assert absent > 100  # the draw exercised grams said nowhere, or not contiguously
    assert index.postings.get(("w1", "w2", "w3", "w4")) is None  # longer than a shingle: never posted


def test_fast_segments_equal_the_definition_on_random_texts():
    """`segments` splits text with a byte translation, a run of non-ASCII characters made one space:
    random texts over separators, digits, dates, times, whitespace of every kind, punctuation and
    non-ASCII characters (accented letters, dashes and quotes, emoji with a joiner, CJK, a lone
    surrogate, and letters whose lowercase is ASCII: Kelvin sign, dotted capital I) give the
    definition's segments (a regular expression over the lowercased text)."""
    import random

    rng = random.Random(5)
    pieces = list("abcxyz019 .!?;:\n\t\r\x0b\x0c-_'\"()[]") + [
        "é", "2023-05-08", "10:30", "the", "ana", "Ana", "ÄB", "’", "–", "—", "👍", "\u200d", "🧘\u200d♀️", "東京。",
        "\ud800", "\u212a", "\u0130", "ﬁ", "٣", "\u2028"]
    drop = frozenset({"ana"})
    for _ in range(8000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        assert segments(text, drop) == _reference_segments(text, drop), repr(text)


class _CountingTexts(list):
    checks = 0

    def __getitem__(self, i):
        type(self).checks += 1
        return super().__getitem__(i)


def test_ngrams_of_common_words_check_only_the_turns_saying_every_word_or_the_rarer_bigram():
    """An n-gram whose words are all said in many turns is checked against the turns saying all its
    words (a bigram: the words' sets intersected) or its rarer (n-1)-gram (a trigram), not against
    every turn saying its rarest word; a rare word's turns are checked directly. Results equal the
    eager definition."""
    texts = ([f"red green a{i}" for i in range(100)] + [f"red blue b{i}" for i in range(100)]
             + [f"green blue c{i}" for i in range(100)] + ["red green blue"] * 3 + ["green blue red"] * 2)
    index = TurnIndex(texts)
    postings, *_ = _reference_index(texts, frozenset())
    assert [len(postings[(w,)]) for w in ("red", "green", "blue")] == [205, 205, 205]
    index.postings.texts = _CountingTexts(index.postings.texts)

    def checks(gram):
        _CountingTexts.checks = 0
        assert index.postings.get(gram) == postings.get(gram), gram
        return _CountingTexts.checks

    assert checks(("red", "green")) == 105  # the turns saying both words, not the 205 saying "red"
    assert checks(("green", "blue")) == 105
    assert checks(("red", "green", "blue")) == 103  # the turns saying "red green" (both bigrams kept)
    assert postings[("red", "green", "blue")] == [300, 301, 302]
    assert checks(("green", "blue", "red")) == 105 + 2  # "blue red" computed (105), then its 2 turns
    assert postings[("green", "blue", "red")] == [303, 304]
    assert checks(("red", "blue", "green")) == 105 + 105  # both bigrams computed; "blue green" is said nowhere
    assert index.postings.get(("red", "blue", "green")) is None
    assert checks(("red", "green")) == 0  # kept
    rare = TurnIndex([f"a{i} b{i} c{i}" for i in range(70)] + ["a1 b1 c1"])
    rare.postings.texts = _CountingTexts(rare.postings.texts)
    _CountingTexts.checks = 0
    assert rare.postings.get(("a1", "b1", "c1")) == [1, 70]
    assert _CountingTexts.checks == 2  # a rare word: its own turns, no set built
    assert rare.postings._word_sets == {}
    assert set(index.postings._word_sets) == {"red", "green", "blue"}


@pytest.mark.parametrize("said", [64, 65])
def test_the_set_and_bigram_paths_start_past_set_min_postings(said):
    """An n-gram whose rarest word is said in `SET_MIN_POSTINGS` (64) turns scans that word's turns; one
    more and a bigram intersects its words' sets first, a trigram checks its rarer bigram's turns
    (here 10 turns say all three words)."""
    texts = (["alpha beta delta"] * 10 + [f"alpha w{i}" for i in range(said - 10)]
             + [f"beta v{i}" for i in range(said - 10)] + [f"delta u{i}" for i in range(said - 10)])
    for gram, checks in ((("alpha", "beta"), (said, 10)), (("alpha", "beta", "delta"), (said, 10 + 10 + 10))):
        index = TurnIndex(texts)
        assert [len(index.postings[(w,)]) for w in gram] == [said] * len(gram)
        index.postings.texts = _CountingTexts(index.postings.texts)
        _CountingTexts.checks = 0
        assert index.postings.get(gram) == list(range(10))
        assert _CountingTexts.checks == (checks[0] if said <= 64 else checks[1])
    once = TurnIndex(texts + ["alpha beta gamma"])
    once.postings.texts = _CountingTexts(once.postings.texts)
    _CountingTexts.checks = 0
    assert once.postings.get(("alpha", "beta", "gamma")) == [len(texts)]
    assert _CountingTexts.checks == 1  # "gamma" is said once: its own turn, whatever the others' postings


def test_postings_go_eager_once_lookups_cost_more_than_posting_everything():
    """Lookups check turns until their count passes `eager_cost` (every n-gram said, with repeats);
    the next lookup posts every n-gram at once, as the lazy lookup and the definition give them, and
    no lookup checks a turn again."""
    import random

    rng = random.Random(31)
    words = [f"w{i}" for i in range(12)] + ["lisbon", "dune"]
    seps = [" ", " ", " ", ", ", ". ", "\n", " the "]
    texts = ["".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(0, 12))) for _ in range(200)]
    reference, *_ = _reference_index(texts, frozenset())
    index = TurnIndex(texts)
    postings = index.postings
    segs = [segments(t) for t in texts]
    assert postings.eager_cost == sum(max(0, len(s) - n + 1) for turn in segs for s in turn for n in (2, 3))
    postings.texts = _CountingTexts(postings.texts)
    _CountingTexts.checks = 0
    grams = [g for g in reference if len(g) > 1]
    rng.shuffle(grams)
    asked = 0
    while not postings.eager:
        gram = grams[asked]
        before = postings.checks
        assert postings.get(gram) == reference[gram]
        asked += 1
        if not postings.eager:
            assert before <= postings.eager_cost  # a lookup is computed only below the bound
            assert postings.checks == _CountingTexts.checks  # every turn checked is counted
    assert postings.checks > postings.eager_cost
    spent = _CountingTexts.checks
    for gram in grams:
        assert postings.get(gram) == reference[gram], gram
    for _ in range(300):
        gram = tuple(rng.choice(words) for _ in range(rng.randint(2, 3)))
        assert postings.get(gram, "absent") == reference.get(gram, "absent"), gram
    assert _CountingTexts.checks == spent  # eager: no turn checked again
    assert postings._word_sets == {}
    # Posted: exactly the n-grams said (n = 2..size), nothing shorter, longer or cut at a segment's end.
    assert set(postings._longer) == {g for g in reference if len(g) > 1}
    assert all(postings._longer[g] == reference[g] for g in postings._longer)


def test_a_lookup_that_turns_eager_midway_answers_from_the_eager_postings():
    # Every segment said once (a repeated one would be looked up by segment, `by_segment`).
    texts = [f"red green blue w{i}" for i in range(70)] + [f"red green v{i}" for i in range(5)]
    index = TurnIndex(texts)
    postings = index.postings
    cost = postings.checks = postings.eager_cost  # at the bound, not past it: one more lookup computed
    assert postings.get(("red", "green", "blue")) == list(range(70))
    assert postings.eager
    assert postings.checks == cost + 75  # "red green" checked its 75 turns; then "green blue" went eager
    assert postings.get(("red", "green")) == list(range(75))
    assert postings.get(("blue", "red")) is None
    fresh = TurnIndex(texts).postings
    assert fresh.get(("red", "green", "blue")) == list(range(70)) and not fresh.eager


def test_eager_cost_is_every_n_gram_said_with_repeats_at_any_size():
    """`eager_cost` (counted from the segments' lengths) is the definition's sum for every n-gram
    size, segments shorter than n (one word, n-1 words) adding nothing."""
    import random

    from lsrep.postings import NgramPostings

    rng = random.Random(7)
    segs = [tuple(tuple(f"w{rng.randint(0, 9)}" for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(0, 4)))
            for _ in range(120)]
    for size in (1, 2, 3, 4, 6):
        expected = sum(len(s) - n + 1 for turn in segs for s in turn for n in range(2, size + 1) if len(s) >= n)
        assert NgramPostings(segs, size).eager_cost == expected > (0 if size > 1 else -1)
    assert NgramPostings([(("a", "b", "c"),), (("d",),)], 3).eager_cost == 3  # ab bc abc; d nothing
    # Summed once per distinct length (the work: a few dozen terms, not one per segment).
    from collections import Counter

    from lsrep.postings import _length_counts

    assert sorted(_length_counts(segs)) == sorted(Counter(len(s) for turn in segs for s in turn).items())


def test_segment_memo_is_kept_per_set_of_dropped_tokens():
    """A segment split once under one set of dropped tokens (speaker names) is split again under
    another: the memo of segments already split is per set, so a name dropped in one trajectory is
    not dropped in the next."""
    text = "Ana went home to Lisbon. Good question!"
    assert segments(text, frozenset({"ana"})) == (("went", "home", "lisbon"), ("good", "question"))
    assert segments(text) == (("ana", "went", "home", "lisbon"), ("good", "question"))
    assert segments(text, frozenset({"lisbon"})) == (("ana", "went", "home"), ("good", "question"))
    assert segments(text, frozenset({"ana"})) == (("went", "home", "lisbon"), ("good", "question"))


def test_segment_memo_stops_growing_at_its_bound_and_still_splits_every_segment():
    """Past `SEGMENT_MEMO_MAX` distinct segments the memo keeps what it has (memory stays bounded)
    and a new segment is split without it; segments already kept are still answered from it."""
    from lsrep import provenance

    drop = frozenset({"memo-bound-test"})
    memo = provenance._segment_memo(drop)
    memo.clear()
    bound = provenance.SEGMENT_MEMO_MAX
    for i in range(bound + 50):
        assert segments(f"w{i} x{i}", drop) == ((f"w{i}", f"x{i}"),)
        assert len(memo) == min(i + 1, bound)
    assert memo["w0 x0"] == ("w0", "x0") and f"w{bound} x{bound}" not in memo
    assert segments("w0 x0. fresh words lisbon", drop) == (("w0", "x0"), ("fresh", "words", "lisbon"))
    assert " fresh words lisbon" not in memo and len(memo) == bound


def test_a_repeated_segment_is_split_once():
    """The second time a segment is met its tokens come from the memo: the same tuple object."""
    drop = frozenset({"repeat-test"})
    first = segments("Sure! Keeping a glass of water nearby is an easy reminder.", drop)
    again = segments("Thanks! Keeping a glass of water nearby is an easy reminder.", drop)
    assert first == (("sure",), ("keeping", "glass", "water", "nearby", "easy", "reminder"))
    assert again == (("thanks",), first[1]) and again[1] is first[1]


def _repeated_texts(rng, n_turns=300, pool_size=25):
    """Turns made of sentences drawn from a small pool (a template's phrasing), some turns saying
    one sentence twice, some with a sentence of their own."""
    words = [f"w{i}" for i in range(30)] + ["lisbon", "dune", "river", "the", "and"]
    pool = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for _ in range(pool_size)]
    texts = []
    for i in range(n_turns):
        said = [rng.choice(pool) for _ in range(rng.randint(0, 6))]
        if said and rng.random() < 0.2:
            said.append(said[0])
        if rng.random() < 0.1:
            said.append(f"own{i} {rng.choice(words)} lisbon")
        texts.append(rng.choice([". ", "! ", "; ", "\n"]).join(said))
    return texts


def test_repeated_segments_are_looked_up_by_distinct_segment_and_equal_the_definition():
    """Where turns repeat their segments, an n-gram's turns are those saying a distinct segment
    that holds it: every n-gram said, and n-grams said nowhere or only across a segment break,
    give the definition's postings."""
    import random

    for seed in range(6):
        rng = random.Random(seed)
        texts = _repeated_texts(rng)
        index = TurnIndex(texts, frozenset({"w0"}))
        assert index.postings.by_segment
        reference, *_ = _reference_index(texts, frozenset({"w0"}))
        assert list(index.postings.items()) == list(reference.items())
        words = [f"w{i}" for i in range(30)] + ["lisbon", "dune", "river", "own3"]
        for _ in range(2000):
            gram = tuple(rng.choice(words) for _ in range(rng.randint(2, 3)))
            assert index.postings.get(gram, "absent") == reference.get(gram, "absent"), gram
        assert not index.postings.eager  # lookups stayed below posting everything


def test_a_lookup_by_segment_checks_each_distinct_segment_once():
    texts = ["red green blue. good question"] * 100 + ["green blue red. good question"] * 50 + ["red green"] * 3
    index = TurnIndex(texts)
    postings = index.postings
    assert postings.by_segment
    assert postings.get(("red", "green", "blue")) == list(range(100))
    assert postings.checks == 2  # "blue" is in two distinct segments, not in 150 turns
    assert postings.get(("red", "green")) == [*range(100), 150, 151, 152]
    assert postings.checks == 2 + 3  # "red" is in three distinct segments
    assert postings.get(("blue", "red")) == list(range(100, 150))
    assert postings.get(("good", "question")) == list(range(150))
    assert postings.get(("question", "red")) is None  # across a segment break


@pytest.mark.parametrize(("said", "by_segment"), [(3, False), (4, True)])
def test_lookups_go_by_segment_from_four_sayings_per_distinct_segment(said, by_segment):
    """Segments said 4 times each on average (`REPEATED_SEGMENTS`) make lookups go by segment; 3
    times, by turn (a distinct segment is then barely cheaper to check than a turn)."""
    texts = [f"alpha beta{i}. gamma delta{i}" for i in range(10)] * said
    postings = TurnIndex(texts).postings
    assert postings.by_segment is by_segment
    assert postings.get(("alpha", "beta3")) == [3 + 10 * k for k in range(said)]


def test_a_full_segment_memo_of_long_segments_holds_a_few_megabytes():
    """The memo's bound is a memory bound: filled with long segments said once (about 150 characters,
    15 words each: text without repeats), it holds under 4 MB in each process that audits contexts
    (a LongMemEval run's budget is 300 MB for all of them)."""
    import random
    import tracemalloc

    from lsrep import provenance

    drop = frozenset({"memo-size-test"})
    memo = provenance._segment_memo(drop)
    memo.clear()
    rng = random.Random(3)
    texts = [" ".join("".join(rng.choice("abcdefghij") for _ in range(9)) for _ in range(15))
             for _ in range(provenance.SEGMENT_MEMO_MAX + 10)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts[:provenance.SEGMENT_MEMO_MAX]:
            segments(text, drop)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(memo) == provenance.SEGMENT_MEMO_MAX
    assert 1_000_000 < held < 4_000_000, held


def test_paraphrase_evidence_counts_tokens_said_in_at_most_rare_max_turns_turns():
    """Three never-said tokens first said in one later turn prove a leak when each is said in at
    most `RARE_MAX_TURNS` turns of the trajectory, and not when one more turn says them."""
    from lsrep.paraphrase import MIN_TOKENS, RARE_MAX_TURNS, TokenFirsts

    words = ("zeta", "eta", "theta")
    assert len(words) == MIN_TOKENS
    for said_in, proven in ((RARE_MAX_TURNS, (1, 3)), (RARE_MAX_TURNS + 1, None)):
        turns = [("alpha",), *[words] * said_in]
        for firsts in (TokenFirsts.of_turn_tokens(turns), TurnIndex([" ".join(t) for t in turns]).firsts):
            assert firsts.leak(words, 1) == proven, said_in
            assert firsts.leak(words, 2) is None  # said by then
            assert firsts.settled(words) == 2
