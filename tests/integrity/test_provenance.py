"""Content provenance on small, hand-made histories: each rule of docs/integrity.md, and the
rendering prefixes built-in adapters add, which must create neither matches nor mismatches."""

from __future__ import annotations

from datetime import UTC, datetime

from lsrep.context_audit import audit_context
from lsrep.contract import Fragment
from lsrep.evidence import evidence_metrics
from lsrep.protocol.models import ReferenceVersion, Turn
from lsrep.provenance import TurnIndex, normalise
from lsrep.references import Expected

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
CONTENTS = [
    ("Ana", "user", "Hi! I'm Ana. I live in Lisbon, in a small flat near the river."),
    ("Bot", "assistant", "Sounds good!"),
    ("Ana", "user", "Thanks, Bot! I adopted a grey cat named Miso last week. We went hiking near Sintra."),
    ("Ana", "user", "Your kind words mean a lot."),
    ("Ana", "user", "Your kind words mean a lot."),
    ("Ana", "user", "Big news: we finally moved to Porto, into an apartment in the Bonfim neighbourhood."),
    ("Bot", "assistant", "Congratulations on the new apartment in Bonfim, Ana."),
]
TURNS = [Turn(turn_id=f"t{i}", session_id="s1", timestamp=T0, role=r, speaker=s, content=c)
         for i, (s, r, c) in enumerate(CONTENTS)]
WHERE = {t.turn_id: i for i, t in enumerate(TURNS)}


def index() -> TurnIndex:
    return TurnIndex.of_turns(TURNS)


def test_rendering_prefixes_are_transparent():
    assert normalise("[2026-03-02 09:00] Ana (user): Sounds good!", index().drop) == normalise("Sounds good!")
    idx = index()
    for text in ("[2026-03-02 09:00] Bot (assistant): Sounds good!", "[2026-03-02 Bot] Sounds good!",
                 "- Sounds good! (source: turn 2, 2026-03-02)", "Bot: Sounds good!"):
        v = idx.verdict(text, prefix_len=2, cited=[1])
        assert v.sourced_share == 1.0 and not v.unsourced and not v.misattributed and not v.leak, text


def test_extractive_summary_across_turns_is_sourced():
    # Sentences from three turns glued together: shingles never cross a sentence boundary.
    text = ("Summary (2026-03-02 to 2026-03-04): Hi! I live in Lisbon, in a small flat near the river. "
            "Sounds good! I adopted a grey cat named Miso last week")
    v = index().verdict(text, prefix_len=3, cited=[0, 1, 2])
    assert not v.unsourced and not v.leak and not v.misattributed and v.sourced_share >= 0.8


def test_copied_future_turn_is_a_leak_whatever_it_cites():
    idx = index()
    text = "[2026-03-02 09:00] Ana (user): Big news: we finally moved to Porto, into an apartment in the Bonfim."
    honest = idx.verdict(text, prefix_len=6, cited=[5])
    assert not honest.leak and not honest.unsourced
    laundered = idx.verdict(text, prefix_len=5, cited=[4])
    assert laundered.leak and laundered.leak_turn == 5 and laundered.misattributed
    summary = idx.verdict("Ana lives in Lisbon. Later: finally moved to Porto, into an apartment in the Bonfim",
                          prefix_len=5, cited=[0], derived=True)
    assert summary.leak and not summary.unsourced


def test_words_first_said_before_the_checkpoint_are_no_leak():
    # t4 repeats t3 word for word: with t3 replayed and t4 not, the text was already said.
    v = index().verdict("Your kind words mean a lot.", prefix_len=4, cited=[3])
    assert not v.leak and not v.unsourced and not v.misattributed
    # A phrase only the later turn says is a leak, even of one shingle.
    assert index().verdict("the new apartment in Bonfim", prefix_len=6, cited=[5]).leak_turn == 6


def test_unsourced_and_derived():
    idx = index()
    invented = "Ana bought a red bicycle from a shop in Madrid yesterday afternoon."
    assert idx.verdict(invented, prefix_len=7).unsourced
    assert not idx.verdict(invented, prefix_len=7, derived=True).unsourced
    # Clauses of the cited turn re-joined are sourced; words from many cited turns are not.
    assert not idx.verdict("Miso: I adopted a cat and went hiking near grey Sintra", prefix_len=7, cited=[2]).unsourced
    shuffled = "Lisbon hiking apartment neighbourhood river Miso flat Porto"
    assert idx.verdict(shuffled, prefix_len=7, cited=range(7)).unsourced


def test_misattribution_needs_real_text_citing_the_wrong_turn():
    idx = index()
    assert idx.verdict("I adopted a grey cat named Miso", prefix_len=7, cited=[0]).misattributed
    assert not idx.verdict("I adopted a grey cat named Miso", prefix_len=7, cited=[2]).misattributed


def test_duplicates_need_the_same_text_turns_and_kind():
    idx = index()
    same_words_two_turns = [Fragment(text="Your kind words mean a lot.", source_turn_ids=("t3",)),
                            Fragment(text="Your kind words mean a lot.", source_turn_ids=("t4",))]
    bullet_and_turn = [Fragment(text="- Sounds good! (source: turn 2)", source_turn_ids=("t1",), kind="memory"),
                       Fragment(text="[2026-03-02] Bot: Sounds good!", source_turn_ids=("t1",), kind="evidence")]
    double_write = [Fragment(text="[2026-03-02 09:00] Bot (assistant): Sounds good!", source_turn_ids=("t1",)),
                    Fragment(text="Bot: Sounds good!", source_turn_ids=("t1",))]
    expected = Expected(ask=True)
    count = lambda frags: audit_context(frags, 7, expected, idx, WHERE).row["duplicate_citations"]  # noqa: E731
    assert count(same_words_two_turns) == 0
    assert count(bullet_and_turn) == 0
    scaffolding = [Fragment(text="-> see also: the garden page", kind="pointer")] * 2  # cites nothing
    assert count(scaffolding) == 0
    assert count(double_write) == 1


def test_evidence_recall_is_decided_by_content():
    idx = index()
    version = ReferenceVersion(answer="Sintra", valid_from="t2", evidence=("t2",))
    stale = ReferenceVersion(answer="Lisbon", valid_from="t0", valid_until="t5", evidence=("t0",))
    later = ReferenceVersion(answer="Porto", valid_from="t5", evidence=("t5",))
    exp = Expected(ask=True, in_force=(version,), superseded=(stale,), later=(later,))
    # One whole sentence of the evidence turn carries it; a citation without the text does not.
    m = evidence_metrics(exp, ("We went hiking near Sintra.",), idx, WHERE)
    assert (m.content_recall, m.answer_in_context, m.stale_in_context, m.future_in_context) == (1.0, 1, 0, 0)
    m = evidence_metrics(exp, ("Ana likes weather reports.", "She lived in Lisbon, later Porto."), idx, WHERE)
    assert (m.content_recall, m.answer_in_context, m.stale_in_context, m.future_in_context) == (0.0, 0, 1, 1)
    assert evidence_metrics(Expected(ask=True, expect_abstain=True), ("x",), idx, WHERE).answer_in_context is None


def test_extractor_labels_do_not_decide_attribution():
    # An extracted fact rendered with one-word labels ("lot:", "words:") said in other turns: the
    # fact's own words decide which turn it came from (ICE's facts on LoCoMo were flagged so).
    idx = index()
    fact = "user (person): lot: words: adopted grey cat"
    assert not idx.verdict(fact, prefix_len=7, cited=[2], derived=True).misattributed
    assert idx.verdict(fact, prefix_len=7, cited=[0], derived=True).misattributed


def test_reworded_and_reordered_future_text_is_a_leak_by_its_distinctive_words():
    from tests.integrity.zoo import paraphrase, reorder

    idx = index()
    future = CONTENTS[5][2]  # "Big news: we finally moved to Porto, into an apartment in the Bonfim neighbourhood."
    for text in (paraphrase(future), reorder(future)):
        v = idx.verdict(text, prefix_len=5, cited=[4], derived=True)
        assert v.leak_turn == 5 and v.leak_evidence == "tokens", (text, v)
        # Once the turn is replayed the same words are no leak.
        assert not idx.verdict(text, prefix_len=6, cited=[5], derived=True).leak
    # Words of the replayed past, reordered, are not future content.
    assert not idx.verdict(reorder(CONTENTS[2][2]), prefix_len=3, cited=[2]).leak


def test_turns_in_context_is_its_definition_on_random_contexts():
    """Whether a turn's content is in a context, as `turns_in_context` finds it, equals the rule
    read straight off the texts' shingles: at least `COPY_MIN_SHARE` of the turn's shingles occur in
    the context's texts, or all shingles of one of its sentences of `SENTENCE_MIN_TOKENS` or more
    content tokens do. Histories of few, repeated sentences put shingles in many turns (more than
    `COMMON_POSTINGS`), and contexts mix whole turns, their sentences, parts of them and foreign text."""
    import random

    from lsrep.provenance import (
        COMMON_POSTINGS,
        COPY_MIN_SHARE,
        SENTENCE_MIN_TOKENS,
        segments,
        shingles,
    )

    rng, common = random.Random(7), 0
    pool = ["I baked banana bread on Sunday.", "My sister moved to Porto last spring.",
            "The plumber never called back.", "We adopted a grey cat named Miso.",
            "Honestly it took way longer than it should have.", "Thanks!", "I ran five kilometres today.",
            "Yesterday I finished a mystery novel about a lighthouse keeper.", "Sounds good."]
    for _ in range(20):
        contents = [" ".join(rng.choice(pool) for _ in range(rng.randint(1, 4))) for _ in range(120)]
        idx = TurnIndex(contents)

        def said(text: str, idx: TurnIndex = idx) -> frozenset:
            return frozenset(shingles(segments(text, idx.drop), idx.size))

        for _ in range(10):
            texts = []
            for _ in range(rng.randint(1, 4)):
                source = contents[rng.randrange(len(contents))]
                words = source.split()
                cut = rng.randrange(len(words) + 1)
                texts.append(rng.choice([source, " ".join(words[:cut]), " ".join(words[cut:]),
                                         rng.choice(pool), "[2026-03-02 09:00] user: " + source,
                                         "A wholly unrelated remark about trains."]))
            texts = tuple(texts)
            held = frozenset().union(*map(said, texts))
            expected = set()
            for t, content in enumerate(contents):
                grams = said(content)
                sentences = [frozenset(shingles([toks], idx.size)) for toks in segments(content, idx.drop)
                             if len(toks) >= SENTENCE_MIN_TOKENS]
                if grams and (len(grams & held) >= COPY_MIN_SHARE * len(grams)
                              or any(s <= held for s in sentences)):
                    expected.add(t)
            assert idx.turns_in_context(range(len(contents)), texts) == expected, texts
        common += sum(len(w) > COMMON_POSTINGS for w in idx.postings.values())
    assert common  # shingles said in many turns were among them


def test_a_turns_sentences_are_split_only_where_its_shingle_share_does_not_decide():
    idx = index()
    assert idx.turns_in_context([2], (CONTENTS[2][2],)) == {2}  # the whole turn: its share decides
    assert 2 not in idx._sentences
    # One sentence of it among other words: under half its shingles, so its sentences are read, and
    # that one is there whole.
    assert idx.turns_in_context([2], ("Something else entirely. We went hiking near Sintra.",)) == {2}
    assert 2 in idx._sentences
