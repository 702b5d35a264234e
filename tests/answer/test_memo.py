"""The reader's memo (`lsrep.answer.memo`) changes no answer and no rule fired.

Every answer is computed three ways: with the memo bypassed (`memo.disabled()`: every sentence
matched and spanned afresh, as before the memo), with it on from cold, and with it on and warm in
another order. They must agree on the answer and on the trace of the cross-sentence rules it went
through (each rule function the answerer calls, with what it returned), over LoCoMo questions asked
against changing contexts (as checkpoints ask them) and over randomised contexts built to make keys
collide: the same sentence under another date, speaker or simulated now, the same line in two
fragments, undated lines.
"""

from __future__ import annotations

import inspect
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

import lsrep.answer.extractive as extractive
from lsrep.answer import memo
from lsrep.answer.ceiling import render_turn
from lsrep.answer.extractive import ExtractiveAnswerer, _typed_span
from lsrep.answer.memo import Sentence
from lsrep.answer.related import GROUPS, matched
from lsrep.contract import Fragment

REPO = Path(__file__).resolve().parents[2]
# The shared data sit beside the checkout (or beside its parent, for a worktree).
LOCOMO = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared")
               if (p / "datasets").is_dir()), REPO.parent / "shared") / "datasets" / "locomo" / "locomo-dev7.json"

Call = tuple[str, tuple[str, ...], datetime]


@pytest.fixture
def trace(monkeypatch):
    """Record each cross-sentence rule call of the answerer: every function of `extractive`'s namespace
    from `lsrep.answer` but those run inside memoised per-sentence or per-question work (they run only
    on a miss)."""
    inside = {name for fn in (_typed_span, extractive._question) for name in inspect.unwrap(fn).__code__.co_names}
    inside |= {"_typed_span", "_question"}
    calls: list[tuple[str, str]] = []
    rules = [name for name, fn in vars(extractive).items()
             if inspect.isfunction(fn) and fn.__module__.startswith("lsrep.answer") and fn.__module__ != memo.__name__
             and name not in inside]
    for name in rules:
        rule = getattr(extractive, name)

        def traced(*args, _fn=rule, _name=name, **kwargs):
            out = _fn(*args, **kwargs)
            calls.append((_name, _canonical(out)))
            return out
        monkeypatch.setattr(extractive, name, traced)
    assert {"answered_by", "choose", "counted", "elapsed", "list_of", "_clause"} <= set(rules)
    return calls


def _canonical(value: object) -> str:
    """A value's repr with its sets sorted: a set's iteration order is not part of its value (it changes with
    the string hash seed from one process to the next), so no rule may depend on it."""
    if isinstance(value, (set, frozenset)):
        return f"{{{', '.join(sorted(map(_canonical, value)))}}}"
    if isinstance(value, (tuple, list)):
        return f"({', '.join(map(_canonical, value))})"
    return repr(value)


def _answers(calls: list[Call], trace: list, order: list[int]) -> dict[int, tuple[str, tuple]]:
    reader = ExtractiveAnswerer()
    out = {}
    for i in order:
        question, texts, now = calls[i]
        del trace[:]
        text = reader.answer(question, [Fragment(text=t, source_turn_ids=()) for t in texts], now)
        out[i] = (text, tuple(trace))
    return out


def _same_three_ways(calls: list[Call], trace: list, seed: int) -> dict[int, tuple[str, tuple]]:
    memo.clear()
    with memo.disabled():
        plain = _answers(calls, trace, list(range(len(calls))))
    memo.clear()
    cold = _answers(calls, trace, list(range(len(calls))))
    shuffled = list(range(len(calls)))
    random.Random(seed).shuffle(shuffled)
    warm = _answers(calls, trace, shuffled)
    for i in range(len(calls)):
        assert cold[i] == plain[i], calls[i][0]
        assert warm[i] == plain[i], calls[i][0]
    return plain


@pytest.fixture(scope="module")
def locomo_calls() -> list[Call]:
    """Each answerable question of the seven LoCoMo conversations asked at two checkpoints: its evidence among
    20 turns of the history so far, then those with 20 more and the whole sessions holding its evidence (in
    their order); now is the last turn given."""
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    from lsrep.probes.locomo import build_locomo

    rng = random.Random(26)
    calls: list[Call] = []
    for conv in build_locomo(LOCOMO, None):
        index = {t.turn_id: i for i, t in enumerate(conv.turns)}
        for probe in conv.probes:
            evidence = sorted(index[e] for e in (probe.references[-1].evidence if probe.references else ())
                              if e in index)
            if not evidence:
                continue
            history = range(min(len(conv.turns), evidence[-1] + 1 + rng.randrange(40)))
            first = set(evidence) | set(rng.sample(history, min(20, len(history))))
            sessions = {conv.turns[e].session_id for e in evidence}
            second = first | set(rng.sample(history, min(20, len(history)))) | {
                i for i, t in enumerate(conv.turns) if t.session_id in sessions}
            for chosen in (sorted(first), sorted(second)):
                turns = [conv.turns[i] for i in chosen]
                calls.append((probe.question, tuple(render_turn(t) for t in turns), turns[-1].timestamp))
    assert len(calls) > 2000
    return calls


def test_locomo_answers_and_rules_are_the_same_with_the_memo_cold_warm_or_bypassed(locomo_calls, trace):
    plain = _same_three_ways(locomo_calls, trace, seed=1)
    # Not a vacuous comparison: the calls reach many different answers and rules.
    assert len({text for text, _ in plain.values()}) > 1000
    assert len({name for _, rules in plain.values() for name, _ in rules}) >= 10


_WORDS = ("museum park cafe concert painting guitar dog shelter pottery camping beach book marathon "
          "school job festival garden").split()
_SENTENCES = (
    "I went to the {a} yesterday.", "We visited the {a} last week with the kids.", "My sister took me to the {a}.",
    "I've been into {a} for three years now.", "The {a} was amazing, because Bob helped me.",
    "Did you like the {a}?", "I signed up for a {a} class on 5 May 2023.", "Two weekends ago we tried {a}.",
    "I love {a} and {b}!", "Bob and Ana joined me at the {a} in Lisbon.", "It reminded me why I love {a}.",
    "I bought two {a} tickets; one for my mom.", "I'm going to the {a} next month.", "Here's a photo of my {a}.",
    "[shares an image: a photo of a {a} at sunset]", "I have been going to the {a} since 2019.",
    "We went {a}ing, swimming and hiking in the summer.",
)
_QUESTIONS = (
    "When did {w} go to the {a}?", "What did {w} do at the {a}?", "Who went to the {a} with {w}?",
    "How long has {w} been into {a}?", "Why did {w} like the {a}?", "How many {a} tickets did {w} buy?",
    "Where did {w} see the {a}?", "What activities has {w} done?", "Would {w} go to the {a} again?",
    "What do Ana and Bob both like?", "What did {w} say about the {a} and the {b}?",
    "How long ago did {w} go to the {a}?", "Would {w} prefer the {a} or the {b}?",
)


def _random_calls(seed: int, n_calls: int) -> list[Call]:
    rng = random.Random(seed)
    speakers = ["Ana", "Bob", None]
    lines: list[str] = []
    for _ in range(120):
        said = " ".join(rng.choice(_SENTENCES).format(a=rng.choice(_WORDS), b=rng.choice(_WORDS))
                        for _ in range(rng.randint(1, 3)))
        who = rng.choice(speakers)
        day = date(2023, 5, 1) + timedelta(days=rng.randrange(60))
        if rng.random() < 0.2:
            lines.append(f"{who}: {said}" if who else said)  # undated: dated by the call's now
        else:
            lines.append(f"[{day.isoformat()} 10:00] {who + ': ' if who else ''}{said}")
    # The same sentences under another date or speaker, and fragments of several lines sharing one.
    for line in rng.sample(lines, 30):
        lines.append(line.replace("2023-05", "2023-06").replace("Ana:", "Bob:"))
    for _ in range(20):
        lines.append("\n".join(rng.sample(lines, 2)))
    questions = [rng.choice(_QUESTIONS).format(w=rng.choice(["Ana", "Bob"]), a=rng.choice(_WORDS),
                                               b=rng.choice(_WORDS)) for _ in range(40)]
    calls = []
    for _ in range(n_calls):
        texts = tuple(rng.sample(lines, rng.randint(1, 40)))
        now = datetime(2023, 7, 1, tzinfo=UTC) + timedelta(days=rng.randrange(3))
        calls.append((rng.choice(questions), texts, now))
    return calls


@pytest.mark.parametrize("seed", [3, 4])
def test_random_contexts_give_the_same_answers_and_rules_with_or_without_the_memo(seed, trace):
    plain = _same_three_ways(_random_calls(seed, 1000), trace, seed)
    assert len({text for text, _ in plain.values()}) > 200


def test_the_same_sentence_under_another_date_is_not_answered_from_the_memo(trace):
    """The memo key of a sentence's span holds its date; a context's, the simulated now (undated lines)."""
    question = "When did Ana go to the museum?"
    may = ("[2023-05-08 10:00] Ana: I went to the museum yesterday.",)
    june = ("[2023-06-20 10:00] Ana: I went to the museum yesterday.",)
    undated = ("Ana: I went to the museum yesterday.",)
    first, second = datetime(2023, 7, 1, tzinfo=UTC), datetime(2023, 7, 9, tzinfo=UTC)
    calls = [(question, may, first), (question, june, first), (question, undated, first),
             (question, undated, second), (question, may + june, first), (question, june + may, first)]
    plain = _same_three_ways(calls, trace, seed=5)
    answers = [plain[i][0] for i in range(len(calls))]
    assert answers[:4] == ["7 May 2023", "19 June 2023", "30 June 2023", "8 July 2023"]
    for order in ([0, 1, 2, 3], [3, 2, 1, 0]):  # warm, each after the other
        got = _answers(calls, trace, order)
        assert [got[i][0] for i in range(4)] == answers[:4]


def test_a_span_memo_key_holds_the_date_and_the_speaker_and_not_the_order():
    """`_typed_span` memoised by text, line, date and speaker: two sentences differing in one of them get
    their own span; a sentence's order (where it stands in the context) never changes it."""
    memo.clear()
    text = "I met Bob and Ana at the cafe yesterday."
    base = Sentence(text, text, date(2023, 5, 8), "Ana", 3)
    variants = [base, Sentence(text, text, date(2023, 6, 8), "Ana", 3), Sentence(text, text, date(2023, 5, 8), "Bob", 3)]
    for kind, question in (("date", "When did they meet at the cafe?"), ("person", "Who was at the cafe?")):
        with memo.disabled():
            expected = [_typed_span(kind, s, question) for s in variants]
        assert len(set(expected)) == 2  # the date changes a date span, the speaker a person span
        for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2, 0, 1]):
            assert [_typed_span(kind, variants[i], question) for i in order] == [expected[i] for i in order]
        moved = Sentence(base.text, base.line, base.when, base.speaker, 40)
        with memo.disabled():
            assert _typed_span(kind, moved, question) == _typed_span(kind, base, question)


def test_matched_reads_only_the_words_that_can_give_a_question_word():
    """The shortcut in `memo.matches`: a sentence's hits are those of its words among the question's words and
    their related ones (`matched` is a function of that intersection)."""
    rng = random.Random(9)
    vocabulary = sorted({w for group in GROUPS for w in group.replace(">", " ").split()} | set(_WORDS))
    from lsrep.answer.words import keys

    forms = sorted({k for w in vocabulary for k in keys(w)})
    for _ in range(3000):
        wanted = frozenset(rng.sample(forms, rng.randint(1, 5)))
        bag = frozenset(rng.sample(forms, rng.randint(0, 12)))
        words = bag & memo._triggers.fresh(wanted)
        assert matched(bag, wanted) == matched(words, wanted)
        if not words:
            assert not matched(bag, wanted)


def test_the_match_tables_are_bounded_and_start_afresh(monkeypatch, trace):
    calls = _random_calls(7, 300)
    memo.clear()
    with memo.disabled():
        plain = _answers(calls, trace, list(range(len(calls))))
    monkeypatch.setattr(memo, "MAX_MATCHES", 200)
    memo.clear()
    peak = 0
    reader = ExtractiveAnswerer()
    for i, (question, texts, now) in enumerate(calls):
        del trace[:]
        assert reader.answer(question, [Fragment(text=t, source_turn_ids=()) for t in texts], now) == plain[i][0]
        peak = max(peak, memo._kept)
    assert 200 < peak <= 200 + 40  # dropped whole once past the bound (a call adds at most its 40 fragments)
    assert memo.context.cache_info().maxsize == 16
