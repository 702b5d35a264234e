"""The offline answerer: the best-matching evidence sentence, then the short span the question asks for.

Deterministic and offline; it reads only what a model would read in the answer prompt (the question,
the simulated now, the fragments' text), never the references. Its rules, in order, are set out in
`lsrep.answer.rules` (and `RULES`, which every manifest records).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

from lsrep.answer.asking import answered_by, asks
from lsrep.answer.bridge import named_in, with_names
from lsrep.answer.categories import CATEGORY_KINDS, category_kind, category_span
from lsrep.answer.choice import choose
from lsrep.answer.counting import count_span, counted, counts_noun
from lsrep.answer.dated import PAST_QUESTION, PLANNED, ahead, date_span
from lsrep.answer.elapsed import asks_elapsed, elapsed
from lsrep.answer.entities import CAPITALISED, names_in, organisation_in, place_in, reason_in
from lsrep.answer.feeling import asks_feeling, feeling_sentence, feeling_words
from lsrep.answer.kinds import question_type
from lsrep.answer.lists import LIST_SHARE, asks_for_list, list_of
from lsrep.answer.memo import Sentence, context, memoised, per_sentence, question_matches, witnesses
from lsrep.answer.memo import fragment_sentences as fragment_sentences  # re-exported
from lsrep.answer.polarity import unstated
from lsrep.answer.related import matched, related
from lsrep.answer.rules import RULES
from lsrep.answer.when import since
from lsrep.answer.words import QUESTION_WORDS, keys
from lsrep.contract import Fragment
from lsrep.temporal import (
    fmt_day,
)
from lsrep.text import fold

ABSTAIN_TEXT = "I don't know."
_TEXT = attrgetter("text")
ENTITY_KINDS = frozenset({"person", "place", "org"})
"""Question kinds whose typed span, present in a sentence, counts as one shared word toward min_overlap."""
INSTANCE_KINDS = frozenset({"place", *CATEGORY_KINDS})
"""List-question kinds whose typed span ("Paris", "swimming") stands for the category word ("cities",
"activities") that a sentence naming an instance does not repeat."""
RELATED_WEIGHT = 0.7
"""A question word given by a related word (`lsrep.answer.related`) counts this much of its weight."""
HEAD_WEIGHT = 2.0
"""The noun a what/which question asks about ("what kind of event", "which song") weighs this much more."""
_HEAD = re.compile(r"^\W*(?:what|which)\s+(?:(?:kind|type|sort|genre)s?\s+of\s+)?([a-z][\w-]*)\s+(?:did|does|do|is|was|"
                   r"has|have|are|were|had|would|will|can|could)\b", re.I)
ASKING_FACTOR = 0.5
THIN_CLAUSE = 4
"""A clause adding fewer content words than this beyond the shared ones is joined by the next clause of
its sentence (the one before, when it is the last)."""
THIN_WORDS = 10
"""A clause adding fewer content words of its own is joined by the next sentence of its turn (the one
before, when it is the last)."""
"""A sentence ending in "?" scores this share of its overlap (it asks; it states nothing)."""


_CLAUSE = re.compile(r"\s*[;:()]\s*|\s+[—–-]+\s+|\s+(?:but|although|though)\s+|(?<!\ba)\s+while\s+")
"""Clause boundaries; "while" joins clauses, "a while" is a length of time ("a while ago")."""

_APPOSITIVE = re.compile(r"^(?:a|an)\s+\w+\s+(?:from|of|for|by|to)\b", re.I)
"""A clause that is only a noun phrase ("a gift from my grandma") describes the thing named just before it."""
_APPOSITIVE_NEXT = re.compile(r"^(?:a|an)\s+(?!lot\b|bit\b|little\b|few\b|couple\b)\w+", re.I)
"""A clause opening with a noun phrase ("a suspenseful thriller set in ...") says what the clause before names."""
_YES_NO = re.compile(r"^\W*(?:is|are|was|were|do|does|did|would|will|can|could|has|have|had|should|shall|may|"
                     r"might|must)\b", re.I)
_IMAGE = re.compile(r"\bshares an image:?\s+(?:a\s+)?(?:photo(?:graphy)?|picture|image)\s+of\s+([^\]\[]+?)\s*\]?\s*$",
                    re.I)
_POINTS_BACK = re.compile(r"\b(?:(?:reminded|reminds|remind|made|makes|showed|shows|that's|this is|that is|which is|"
                          r"is|was)\s+(?:\w+\s+)?why|that's the reason|the reason why)\b", re.I)
_BESIDES = re.compile(r"\b(?:besides|other than|apart from|aside from|except(?: for)?|in addition to)\s+([^?,;]+)",
                      re.I)
_CAPTION = re.compile(r"^\W*shares an image\b", re.I)
_WORDY = re.compile(r"[^\W\d_]{2}")
_SHARES = re.compile(r"\bshares an image\s*[:,]?\s*", re.I)
_DEICTIC = re.compile(r"\b(?:here'?s|here is|check (?:it|this) out|look at|looky here)\b|"
                      r"\b(?:this|these|pic|photo|picture|one)\W*$", re.I)
_HYPOTHETICAL = re.compile(r"^\W*(?:would|could|might)\b", re.I)
_HEDGE_WORDS = frozenset(fold(w) for w in "likely still want soon considered be ever".split())
_NEGATED = re.compile(r"\b(?:not|never|no|n't|nothing|none|neither|nor)\b|n't\b", re.I)
_CONTINUES = re.compile(r"^\W*(?:it|she|he|they|this|that|these|those|we|our)\b", re.I)
_FILLER = frozenset(
    "yeah yes yep wow hey hi oh ok okay haha lol thanks thank cool great awesome amazing really totally "
    "definitely absolutely sure something thing stuff lot kind".split())
_PLURAL_HEADS = re.compile(
    r"^\s*(?:what|which)\s+(?:\w+\s+)?(\w+s)\s+(?:do|does|did|has|have|had|are|were|is|was)\b", re.I)
_DURATION = re.compile(
    r"\b(?:for\s+)?((?:\d+(?:\.\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a few|a couple of|several|many)\s+(?:and\s+a\s+half\s+)?(?:years?|months?|weeks?|days?|hours?|minutes?|"
    r"seconds?)(?:\s+and\s+a\s+half)?(?:\s+(?:and\s+)?\d+\s+(?:minutes?|seconds?))?(?:\s+ago)?)\b"
    r"|\b(\d{1,2}:\d{2}(?::\d{2})?)\b|\b(since\s+(?:\d{4}|[A-Z]\w+(?:\s+\d{4})?))", re.I)
_STATED_LENGTH = re.compile(r"\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|"
                            r"a couple of|several)\s+(?:and\s+a\s+half\s+)?(?:years?|months?|weeks?|days?|hours?)\b"
                            r"(?!\s+(?:ago|back|before|after|later|earlier|from now))", re.I)
_AGO = re.compile(
    r"\b((?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|several)"
    r"\s+(?:years?|months?|weeks?|days?)\s+ago)\b", re.I)


@dataclass(frozen=True)
class ExtractiveAnswerer:
    """Offline deterministic span answerer (labelled `extractive-offline` in every output)."""

    name: str = "extractive-offline"
    version: str = "8"
    min_overlap: int = 2
    """Shared content words a sentence needs (capped at the question's own count); with 2, a
    name present in every line (the speaker's) cannot answer every question about that person."""
    rules: str = RULES

    def answer(self, question: str, fragments: Sequence[Fragment], now: datetime | None = None) -> str:
        today = (now or datetime(1970, 1, 1)).date()
        # Per-fragment and per-sentence work is memoised (`lsrep.answer.memo`): the same question comes
        # back against mostly the same fragments; everything across sentences is computed here.
        ctx = context(tuple(map(_TEXT, fragments)), today)
        sentences, bags, names = ctx.sentences, ctx.bags, ctx.names
        wanted, kind, avoid, listing, head, both = _question(question)
        need = max(1, min(self.min_overlap, len(wanted)))
        if not sentences or not wanted:
            return ABSTAIN_TEXT
        hits, lines, df, found = question_matches(ctx, wanted)  # as `matched`, by sentence and by line
        n = len(sentences)
        weight = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in wanted}
        for t in head:
            weight[t] *= HEAD_WEIGHT  # "What kind of event ...": the sentence naming an event answers
        if both:
            common = _in_common(question, sentences, bags, wanted, names)
            if common is not None:
                return common

        def overlap(bag: frozenset[str], hit: frozenset[str]) -> float:
            return sum(weight[t] * (1.0 if t in bag else RELATED_WEIGHT) for t in sorted(hit))

        scored = []
        # A sentence giving no question word but a speaker's name is skipped below (unless it may name an
        # instance of a listed kind): `found` holds the others.
        roll = listing and kind == "person"  # v8: "Luna and Oliver!" answers a names question said before it
        for i in range(n) if listing and (kind in INSTANCE_KINDS or roll) else found:
            s, bag, hit = sentences[i], bags[i], hits[i]
            in_line = lines[s.line]
            if not hit - names and not (listing and kind in INSTANCE_KINDS) and not (roll and _roll(s, question)):
                continue
            typed = _typed_span(kind, s, question)
            if not hit - names and not typed:
                continue  # only a name shared, unless it names an instance of the listed category
            # A sentence naming the kind of thing asked for ("which city": a place) shares that much more.
            if len(in_line) + (1 if typed and (kind in ENTITY_KINDS or listing) else 0) < need:
                continue
            novel = 0 if _CAPTION.match(s.text) else len(bag - wanted - names)  # a caption describes, it says nothing new
            score = (overlap(bag, hit) + 0.3 * sum(weight[t] for t in sorted(in_line - hit))
                     + 0.1 * min(novel, 5) + (0.5 if typed else 0.0))
            if roll and _roll(s, question):
                score += sum(weight[t] for t in sorted(wanted - hit - names))  # the reply carries the question's words
            if s.text.rstrip().endswith("?"):
                score *= ASKING_FACTOR  # a sentence that asks states nothing; the reply to it answers
            scored.append((score, -s.order, s, witnesses(bag, wanted)))
        if not scored:
            sole = _sole_line(sentences, lines, lambda x: overlap(bags[x.order], hits[x.order])
                              + (0.5 if _typed_span(kind, x, question) else 0.0))
            if sole is None:
                return ABSTAIN_TEXT
            scored = [(0.0, -sole.order, sole, witnesses(bags[sole.order], wanted))]
        scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
        best_score, _, best, shared = scored[0]
        if asks_elapsed(question) and not _STATED_LENGTH.search(best.line):
            # No length stated where the question is best answered ("it took me two months"): compute it.
            firsts: dict[str, tuple[float, Sentence]] = {}
            for score, _, s, _sh in scored:
                firsts.setdefault(s.line, (score, s))
            between = elapsed(question, list(firsts.values()), lambda s: date_span(s.text, s.when, question)
                              or date_span(s.line, s.when, question) or fmt_day(s.when))
            if between:
                return between
        if kind == "count":
            number = counted(question, scored, best_score, lambda x, noun: bool(matched(keys(x.line), keys(noun))),
                             lambda x: counts_noun(x.text, question))
            if number:
                return number
        if asks(best.text) and not listing and not (kind == "person" and _typed_span(kind, best, question)):
            score_of = {x[2].order: x[0] for x in scored}
            best = answered_by(best, sentences, lambda x: (score_of.get(x.order, 0.0),
                                                           len(bags[x.order] - wanted - names - _FILLER) >= 2))
            shared = witnesses(bags[best.order], wanted)
        if kind in ("place", "other", "person", "org") and not listing:  # v7: "my old area" named in another turn
            best = _part(best, with_names(best.text, named_in(
                [s.line for s in sentences if s.speaker == best.speaker and s.line != best.line], names)))
        if kind == "other" and not listing and asks_feeling(question):
            felt = feeling_sentence(best, sentences, question)
            if felt is not None:
                return _speak(_clause(felt.text, keys(" ".join(feeling_words(felt.text)))), felt.speaker)
        if listing and kind != "other" and (_typed_span(kind, best, question)
                                            or _typed_span(kind, _whole_line(best), question)):
            topic = _list_topic(question)

            def item(s: Sentence, sh: frozenset[str]) -> str | None:
                if topic and s is not best:
                    # "In which cities has X lived": the place said with living, not any place of the line.
                    # The part of the line saying it ("lives in: Lisbon"), or the one a pronoun there points back
                    # to ("Pip and Tofu! They are the sweetest pets.").
                    split = _PARTS.split(s.line)
                    parts = [q for i, p in enumerate(split) if matched(keys(p), topic)
                             for q in ([p, split[i - 1]] if i and _CONTINUES.match(p) else [p])]
                    parts += [p for p in split if kind == "person" and _roll(_part(s, p), question)]  # v8
                    return next((span for p in parts if (span := _typed_span(kind, _part(s, p), question))), None)
                return _typed_span(kind, s, question) or _typed_span(kind, _whole_line(s), question)

            spans = list_of(scored, best_score, item, LIST_SHARE, itemised=kind in ("activity", "person"))
            if spans:
                return _speak(spans, best.speaker)
        if kind == "reason" and _POINTS_BACK.search(best.text):
            before = [x for x in sentences if x.line == best.line and x.order == best.order - 1]
            if before and not before[0].text.rstrip().endswith("?") and not _CAPTION.match(before[0].text):
                # "It reminded me why I wanted to join": the reason is what the sentence before says.
                return _speak(before[0].text.strip(" .!?"), best.speaker)
        span = _typed_span(kind, best, question) or _typed_span(kind, _whole_line(best), question)
        if (span and kind == "date" and not _typed_span(kind, best, question) and PAST_QUESTION.match(question)
                and not PLANNED.search(question) and ahead(span, best.when)):
            # "When did X start ...?" and the line's only date is in another sentence, still ahead when it
            # was said ("I'm also hosting a competition next month"): that sentence is about something else.
            span = None
        if span:
            return _speak(span, best.speaker) if kind in ("person", "place", "org", "reason", "other") else span
        if kind == "date":
            nearby = _same_visit_date(best, sentences, bags, wanted - names)
            return nearby or fmt_day(best.when)
        picked = choose(question, dict.fromkeys(ctx.lines), keys, related)
        if picked:
            return picked
        if _YES_NO.match(question):
            clause = _speak(_clause(best.text, shared - names), best.speaker)
            if _HYPOTHETICAL.match(question):
                # "Would X pursue writing?": yes only when the context states most of what is asked about.
                asked = wanted - names - {t.lower() for t in CAPITALISED.findall(question)} - _HEDGE_WORDS
                line = keys(best.line)
                stated = [t for t in asked if t in line or related(t) & line]
                if 2 * len(stated) < len(asked):
                    return f"{unstated(question, best.line)}, {clause}"
            return f"{'No' if _NEGATED.search(best.text) else 'Yes'}, {clause}"
        following = ctx.derived("following", lambda: {
            s.order - 1: s for s in sentences if s.order and sentences[s.order - 1].line == s.line
            and not _CAPTION.match(s.text) and _WORDY.search(s.text)})  # a caption, a bare "(2026-03-02)": nothing
        preceding = ctx.derived("preceding", lambda: {s.order + 1: s for s in sentences if s.order + 1 < len(sentences)
                                                      and sentences[s.order + 1].line == s.line})

        def answer_clause(s: Sentence, sh: frozenset[str]) -> str:
            clause = _clause(s.text, sh - names - avoid, avoid)
            own_clause = clause
            nxt = following.get(s.order)
            thin = len(keys(clause) - wanted - names - _FILLER) < THIN_WORDS
            prev = preceding.get(s.order)
            own = wanted - names
            if (thin and prev is not None and 3 * len(keys(clause) & own) >= 2 * len(own) >= 4
                    and len(keys(prev.text) - wanted - names - _FILLER) >= 2
                    and not (nxt is not None and _CONTINUES.match(nxt.text))):
                # The sentence restates the question ("I wanted to feel closer to my faith"): what was
                # done is said just before it ("I joined a nearby church."), unless the next goes on.
                clause = f"{_clause(prev.text, frozenset())}. {clause}"
            elif nxt is not None and (thin or _CONTINUES.match(nxt.text)):
                # The sentence only sets the question up ("I got some great news!"), or the next one
                # goes on about the same thing ("She gave it to me ... it stands for love"): add it.
                clause = f"{clause}. {_whole_or_clause(nxt.text)}"
            elif nxt is None and thin:
                # The last sentence of its turn, saying little of its own: the one before it says more.
                if prev is not None and len(keys(prev.text) - wanted - names - _FILLER) >= 2:
                    clause = f"{_clause(prev.text, frozenset())}. {clause}"
            image = _IMAGE.search(s.line)
            pointing = (_DEICTIC.search(clause) or _DEICTIC.search(own_clause)
                        or (nxt is not None and _DEICTIC.search(nxt.text)))
            if image and pointing and image.group(1) not in clause:
                clause = f"{clause}: {image.group(1)}"  # "they made this!": the shared image shows what
            return _speak(_SHARES.sub("", clause), s.speaker)  # a caption answers by what it shows

        if listing:
            return list_of(scored, best_score, answer_clause) or answer_clause(best, shared)
        return answer_clause(best, shared)


SHORT_SENTENCE = 25
"""A sentence joined to a thin clause, or sharing nothing with the question, is taken whole when it has at most this
many words (else its longest clause)."""


COMMON_LINES = 3
"""A word counts as something two people have in common when each says it in at most this many lines."""
_BOTH = re.compile(r"\bboth\b|\bin common\b|\b(?:do|does|did)\s+\w+\s+and\s+\w+\s+share\b", re.I)


def _in_common(question: str, sentences: list[Sentence], bags: list[frozenset[str]], wanted: frozenset[str],
               names: frozenset[str]) -> str | None:
    """"What do X and Y both like / have in common?": the words said in lines of both (the question's own
    words, names and filler aside); the sentence holding most of them answers, None when nothing is common."""
    asked_names = [who for who in dict.fromkeys(s.speaker for s in sentences if s.speaker)
                   if keys(who) and keys(who) <= keys(question)]
    if len(asked_names) < 2:
        return None
    said: dict[str, dict[str, set[str]]] = {}
    for s in sentences:
        if s.speaker in asked_names[:2]:
            for t in bags[s.order]:
                said.setdefault(s.speaker, {}).setdefault(t, set()).add(s.line)
    if len(said) < 2:
        return None
    first, second = (said[who] for who in asked_names[:2])
    # Words each says in at most COMMON_LINES lines: what they share, not the words everyone says all the time.
    common = frozenset(t for t in first.keys() & second.keys() if len(t) > 2
                       and len(first[t]) <= COMMON_LINES and len(second[t]) <= COMMON_LINES)
    common -= wanted | names | {fold(w) for w in _FILLER}
    if not common:
        return None
    best = max((s for s in sentences if s.speaker in asked_names[:2] and not s.text.rstrip().endswith("?")),
               key=lambda s: (len(bags[s.order] & common), -s.order), default=None)
    if best is None or len(bags[best.order] & common) < 2:
        return None
    return _speak(_whole_or_clause(best.text), best.speaker)


def _same_visit_date(best: Sentence, sentences: list[Sentence], bags: list[frozenset[str]],
                     own: frozenset[str]) -> str | None:
    """When the best sentence's turn names no date: a date said by the same speaker on the same day in a
    sentence sharing a word of the question ("Last weekend I took part in a charity event." — "I set up a
    5K run."), the nearest such; else None (the turn's own date answers)."""
    for s in sorted(sentences, key=lambda x: (abs(x.order - best.order), x.order)):
        if s.line == best.line or s.speaker != best.speaker or s.when != best.when:
            continue
        if matched(bags[s.order], own):
            span = date_span(s.text, s.when)
            if span:
                return span
    return None


GENERIC_LIST_WORDS = frozenset(fold(w) for w in "do done did go gone went been be get got see seen saw visit visited travel travelled traveled "
                                 "try tried have had take took like enjoy plan planning both ever all order "
                                 "respectively so far partake partaken partook participate participated engage engaged".split())
"""Words a list question uses for any item of its kind ("What movies has X seen", "Which cities has X visited",
"..., in order"; v8: "partake", "participate", "engage"): they say nothing that tells one item of that kind from
another."""
_AUXILIARY = re.compile(r"\b(?:do|does|did|has|have|had|is|are|was|were|can|could|would|will)\b", re.I)


_ROLL_GLUE = frozenset("and or & too both".split())


def _roll(s: Sentence, question: str) -> bool:
    """v8: the sentence only names people or animals ("Luna and Oliver!", "Kyle, Sara and Tom."), and its
    speaker is named in the question: the reply to a question for their names, which repeats none of its words."""
    if not s.speaker or not keys(s.speaker) & keys(question):
        return False  # whose names are asked: the speaker's own (a roll said by anyone else names anyone)
    span = _typed_span("person", s, question)
    if not span:
        return False
    named = {w.lower() for w in re.findall(r"[\w'’-]+", span)}
    said = [w.lower() for w in re.findall(r"[\w'’-]+", s.text)]
    return bool(said) and all(w in named or w in _ROLL_GLUE for w in said)


def _list_topic(question: str) -> frozenset[str]:
    """What a list question says of its items beyond their kind and whose they are: the words after its
    verb that are not names ("In which cities has Maya lived?": live). A line naming an item gives it to
    the list only when it holds one of these (directly or by a related word); none: every line may."""
    m = _AUXILIARY.search(question)
    if not m:
        return frozenset()
    rest = question[m.end():]
    named = {t for w in CAPITALISED.findall(rest) for t in keys(w)}
    return keys(rest) - QUESTION_WORDS - named - GENERIC_LIST_WORDS


def _whole_or_clause(text: str) -> str:
    if len(text.split()) <= SHORT_SENTENCE:
        return " ".join(text.split()).strip(" .!?")
    return _clause(text, frozenset())


_PARTS = re.compile(r"(?<=[.!?;])\s+(?=\S)|\s*;\s*")
"""Sentences and ';'-separated parts of a line (a memory's fact line lists several facts)."""


def _part(s: Sentence, text: str) -> Sentence:
    return Sentence(text, s.line, s.when, s.speaker, s.order)


def _whole_line(s: Sentence) -> Sentence:
    return Sentence(s.line, s.line, s.when, s.speaker, s.order)


def _sole_line(sentences: Sequence[Sentence], lines: dict[str, frozenset[str]],
               overlap: Callable[[Sentence], float]) -> Sentence | None:
    """When only one line shares any word with the question: its sentence sharing the most (weighted),
    else its fullest sentence (a long turn states its fact in one sentence among many)."""
    matching = [line for line, hit in lines.items() if hit]
    if len(matching) != 1:
        return None
    return max((s for s in sentences if s.line == matching[0]),
               key=lambda s: (overlap(s), len(keys(s.text)), -s.order))


def _speak(span: str, speaker: str | None) -> str:
    """First-person words of a span in the speaker's name ("my daughter" said by Ana: "Ana's daughter")."""
    if not speaker:
        return span
    span = re.sub(r"\b[Mm]y\b", f"{speaker}'s", span)
    span = re.sub(r"\b(?:I|me)\b(?!')", speaker, span)
    return re.sub(r"\bI'm\b", f"{speaker} is", span)


def _clause(text: str, shared: frozenset[str], avoid: frozenset[str] = frozenset()) -> str:
    """The shortest clause holding the most shared words (the sentence when none splits off); of clauses
    sharing as much, one without the `avoid` words ("besides X": X is not the answer)."""
    clauses = [c.strip(" .!?\"'") for c in _CLAUSE.split(text) if c and c.strip(" .!?\"'")]
    if not clauses:
        return text.strip()
    i = max(range(len(clauses)), key=lambda k: (len(keys(clauses[k]) & shared) - len(keys(clauses[k]) & avoid),
                                                -len(clauses[k])))
    if not keys(clauses[i]) & shared:
        # Nothing of the question in any clause: the sentence says it as a whole (a long one, its longest clause).
        return text.strip(" .!?") if len(clauses) == 1 or len(text.split()) <= SHORT_SENTENCE else max(clauses, key=len)
    out = clauses[i]
    if i > 0 and _APPOSITIVE.match(out) and not keys(clauses[i - 1]) & shared and "shares an" not in clauses[i - 1]:
        return f"{clauses[i - 1]}, {out}"  # "This necklace is special - a gift from my grandma": what the gift is
    last = re.findall(r"[\w'’-]+", out)
    if (i + 1 < len(clauses) and _APPOSITIVE_NEXT.match(clauses[i + 1]) and last and keys(last[-1]) & shared
            and not _CAPTION.match(out)):
        return f"{out} - {clauses[i + 1]}"  # "working on a new project - a thriller set in ...": what the project is
    if len(keys(out) - shared) < THIN_CLAUSE and i + 1 < len(clauses):
        out = f"{out}, {clauses[i + 1]}"  # the clause only repeats the question: its continuation answers
    elif len(keys(out) - shared) < THIN_CLAUSE and i > 0:
        out = f"{clauses[i - 1]}, {out}"  # the last clause only repeats it: the one before answers
    return out


class QuestionView(NamedTuple):
    """What the reader reads of the question alone (`_question`)."""

    wanted: frozenset[str]
    kind: str
    avoid: frozenset[str]
    """The words of what the question sets aside ("besides X")."""
    listing: bool
    head: frozenset[str]
    """The noun a what/which question asks about, among `wanted` ("what kind of event")."""
    both: bool
    """It asks what two people have in common."""


@memoised(1 << 12)
def _question(question: str) -> QuestionView:
    """Once per question, not per call: a function of the question alone."""
    wanted = keys(question) - QUESTION_WORDS
    kind = question_type(question)
    beside = _BESIDES.search(question)
    avoid = keys(beside.group(1)) - QUESTION_WORDS if beside else frozenset()
    kind = (category_kind(question) or kind) if kind == "other" else kind
    listing = asks_for_list(question) and not asks_feeling(question) and kind in ("other", "place", "person", "org", *CATEGORY_KINDS)
    head = _HEAD.match(question)
    both = bool(kind == "other" and _BOTH.search(question) and not _YES_NO.match(question))
    return QuestionView(wanted, kind, avoid, listing, keys(head.group(1)) & wanted if head else frozenset(), both)


@per_sentence
def _typed_span(kind: str, s: Sentence, question: str) -> str | None:
    if kind == "date":
        return date_span(s.text, s.when, question)
    if kind == "ago":
        m = _AGO.search(s.text)
        return m.group(1) if m else None
    if kind == "count":
        return count_span(s.text, question)
    if kind == "duration":
        m = _DURATION.search(s.text)
        span = next((g for g in m.groups() if g), None) if m else None
        return since(span, s.when, question) if span else None
    if kind == "person":
        return names_in(s, question)
    if kind == "place":
        return place_in(s, question)
    if kind == "org":
        return organisation_in(s.text, question)
    if kind == "reason":
        return reason_in(s.text, question)
    if kind in CATEGORY_KINDS:
        return category_span(kind, s.text)
    return None
