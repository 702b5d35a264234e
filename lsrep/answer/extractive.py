"""The offline answerer: the best-matching evidence sentence, then the short span the question asks for.

Deterministic and offline; it reads only what a model would read in the answer
prompt (the question, the simulated now, the fragments' text), never the
references. Its rules, in order (also `RULES`, which every manifest records):

1. **Sentences.** Every fragment line is split into sentences. A line opening with
   a timestamp (``[2023-05-08 13:56] Caroline (user): ...`` as adapters render
   turns, or ``[2026-03-02 Maya] ...``) dates its sentences and names the speaker; a
   line without one takes the fragment's last date, else the simulated now. A typed
   span missing from the best sentence is looked for in the rest of its line.
2. **Best sentence.** Score = the IDF-weighted content words (plural, -ing/-ed and
   common irregular forms folded) the sentence shares with the question, the line's
   speaker counting as a word of the sentence; plus a small bonus when the sentence
   holds the kind of span asked for. A question word is also shared through a related
   word (`lsrep.answer.related`: "live" by "home", "work" by "job"), at 0.7 of its
   weight. Ties go to the earliest. A sentence answers only if its line shares
   ``min(min_overlap, question content words)`` words (the speaker's name counting as
   one, as before; for who / where / which-company questions a sentence naming such a
   thing counts one more) and it shares a word other than a speaker's name itself.
   None does: abstain ("I don't know."), unless exactly one line shares any word with
   the question (unambiguous evidence): then the sentence of that line sharing the most
   (the fullest on a tie) answers — a long turn states its fact in one sentence of many.
3. **Typed span.** when / what date / which year: a date in the sentence, relative
   expressions resolved against the sentence's date ("yesterday" said on 8 May 2023
   is "7 May 2023", "last week" is "the week before 9 June 2023", "next month" is
   "June 2023", "on the 15th" is that day of the month, "I've had them for 3 years"
   is 3 years before); none in the sentence or its line: the sentence's own date.
   How long ago: the "N years ago" phrase. How many / how much: the number (words
   or digits) with the word after it; how often: the frequency ("twice a week"). How long: the duration phrase. Who: the
   capitalised names the question does not already contain (not a greeted listener:
   "Hey John"). Where: the place after in/at/to/from (else a capitalised name). Which
   company / school / team: the capitalised name after at/for/with/join/from. Why: the
   sentence from its causal marker on ("because", "'cause", "so", "to ..."). Yes/no
   questions: "Yes" or "No" (a negation in the sentence) and the clause; a would / could
   / might question whose line states fewer than half of what it asks about: "Likely
   no". Otherwise, or when the typed span is missing: the shortest clause of the
   sentence that holds its shared words (dashes split clauses, not sentences), with the
   next clause when it only repeats the question (the one before, when it is the last);
   the clause is followed by the next sentence of its line when it adds fewer than five
   words of its own or the next sentence goes on about the same thing (opens with
   it/she/he/they/this/that/these/those/we/our); a thin last sentence is preceded by the
   one before it when that one says something. A clause pointing at a shared image
   ("they made this!", followed by "Here's ...") takes the image's caption. A sentence
   that asks ("?") scores half. First-person words of a span are put in the speaker's
   name ("my daughter" said by Melanie: "Melanie's daughter").
4. **Several items.** A list question ("What activities has...", "Which cities...",
   "Where has X camped?", "What has X painted?") answers with one span (typed, else the
   clause) from the best sentence of every line scoring at least a third of the best
   (at most six, joined by "; "). A list question naming a category ("Where has X been",
   "What movies", "What activities": `lsrep.answer.categories`) takes the instances a sentence
   names (a place, a quoted or capitalised title, an activity) even when the sentence shares only
   the speaker's name with the question.
5. **Asking and counting.** A best sentence that asks ("Is that your third one?") gives way to
   the reply to it (the next line, by another speaker), or, with no reply in context and the
   question addressed to the listener, to the nearest stating sentence of its own line
   (`lsrep.answer.asking`). "How many (times)" with no number for the counted noun in the best
   sentence: the number of distinct days whose lines state it (`lsrep.answer.counting`).
6. **Choices and inferences.** "A or B?" is answered by the alternative the context supports more
   (`lsrep.answer.choice`), never yes/no. A would-question whose line does not state what it
   asks: "Likely yes" when it asks about liking and the line likes something, else "Likely no"
   (`lsrep.answer.polarity`). Of several dates in a sentence, the one nearest a question word.
   The noun a what/which question asks about ("what kind of event") weighs double; a clause
   restating the question ("I wanted to feel closer to my faith") is preceded by the sentence
   before it, which says what was done, unless the next sentence goes on ("It ...").
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

from lsrep.answer.asking import answered_by, asks
from lsrep.answer.categories import CATEGORY_KINDS, category_kind, category_span
from lsrep.answer.choice import choose
from lsrep.answer.counting import count_span, counted, counts_noun
from lsrep.answer.entities import CAPITALISED, names_in, organisation_in, place_in, reason_in
from lsrep.answer.lists import asks_for_list, list_of
from lsrep.answer.polarity import unstated
from lsrep.answer.related import matched, related, witnesses
from lsrep.contract import Fragment
from lsrep.temporal import (
    RELATIVE,
    absolute_matches,
    fmt_day,
    resolve_day_of_month,
    resolve_relative,
    resolve_since,
)
from lsrep.text import STOPWORDS, fold, tokens

ABSTAIN_TEXT = "I don't know."
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
THIN_CLAUSE = 2
"""A clause adding fewer content words than this beyond the shared ones is joined by the next clause of
its sentence (the one before, when it is the last)."""
THIN_WORDS = 5
"""A clause adding fewer content words of its own is joined by the next sentence of its turn (the one
before, when it is the last)."""
"""A sentence ending in "?" scores this share of its overlap (it asks; it states nothing)."""

RULES = ("best IDF-weighted sentence (speaker counts, -ing/-ed/plural folded, related words at 0.7); typed span "
         "from it or its line: "
         "date (relative expressions resolved against the turn date) / ago / count / duration / person / place / org / "
         "reason / yes-no (would-questions 'Likely no' unless stated), else the shortest clause holding the shared "
         "words, joined by the next sentence when thin, an image caption when pointed at; list questions join one "
         "span per matching line (up to 6); asking sentences score half; first person put in the speaker's name; "
         "abstain below min_overlap shared words; category lists (places, titles, activities) take instances; an "
         "asking best sentence gives way to its reply; how-many without a number counts the days stating it; "
         "'A or B' answered by the better-supported alternative; unstated would-questions inferred (liking: likely "
         "yes); of several dates, the one nearest the question's words; the asked-about noun weighs double; a clause "
         "restating the question takes the sentence before")

_LINE_HEAD = re.compile(
    r"^\s*\[(\d{4})-(\d{2})-(\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?)?(?:\s+(?P<inside>[^\]]{1,60}))?\]\s*"
    r"(?:(?P<who>[^:\[\]()]{1,60}?)\s*(?:\((?:user|assistant|system)\))?\s*:\s+)?")
_ANY_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_CLAUSE = re.compile(r"\s*[;:()]\s*|\s+[—–-]+\s+|\s+(?:but|although|though|while)\s+")

_HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")
_YES_NO = re.compile(r"^\W*(?:is|are|was|were|do|does|did|would|will|can|could|has|have|had|should|shall|may|"
                     r"might|must)\b", re.I)
_IMAGE = re.compile(r"\bshares an image:?\s+(?:a\s+)?(?:photo(?:graphy)?|picture|image)\s+of\s+([^\]\[]+?)\s*\]?\s*$",
                    re.I)
_DEICTIC = re.compile(r"\b(?:here'?s|here is|check (?:it|this) out|look at|looky here)\b|"
                      r"\b(?:this|these|pic|photo|picture|one)\W*$", re.I)
_HYPOTHETICAL = re.compile(r"^\W*(?:would|could|might)\b", re.I)
_HEDGE_WORDS = frozenset(fold(w) for w in "likely still want soon considered be ever".split())
_NEGATED = re.compile(r"\b(?:not|never|no|n't|nothing|none|neither|nor)\b|n't\b", re.I)
_CONTINUES = re.compile(r"^\W*(?:it|she|he|they|this|that|these|those|we|our)\b", re.I)
_FILLER = frozenset(
    "yeah yes yep wow hey hi oh ok okay haha lol thanks thank cool great awesome amazing really totally "
    "definitely absolutely sure something thing stuff lot kind".split())
_QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how many much long often kind type sort ever "
    "likely would could might".split())
_PLURAL_HEADS = re.compile(
    r"^\s*(?:what|which)\s+(?:\w+\s+)?(\w+s)\s+(?:do|does|did|has|have|had|are|were|is|was)\b", re.I)
_DURATION = re.compile(
    r"\b(?:for\s+)?((?:\d+(?:\.\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a few|a couple of|several|many)\s+(?:and\s+a\s+half\s+)?(?:years?|months?|weeks?|days?|hours?|minutes?|"
    r"seconds?)(?:\s+and\s+a\s+half)?(?:\s+(?:and\s+)?\d+\s+(?:minutes?|seconds?))?(?:\s+ago)?)\b"
    r"|\b(\d{1,2}:\d{2}(?::\d{2})?)\b|\b(since\s+(?:\d{4}|[A-Z]\w+(?:\s+\d{4})?))", re.I)
_AGO = re.compile(
    r"\b((?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|several)"
    r"\s+(?:years?|months?|weeks?|days?)\s+ago)\b", re.I)


@lru_cache(maxsize=1 << 16)
def keys(text: str) -> frozenset[str]:
    """Matching forms of the content words; hyphenated words also count joined ("de-stress": destress).
    Memoised: the same retrieved lines come back probe after probe."""
    joined = {fold(w.replace("-", "").lower()) for w in _HYPHENATED.findall(text)}
    return frozenset(fold(t) for t in tokens(text) if t not in STOPWORDS) | joined


@dataclass(frozen=True)
class Sentence:
    text: str
    line: str
    when: date
    speaker: str | None
    order: int


def question_type(question: str) -> str:
    """`ago`, `date`, `count`, `duration`, `person`, `org`, `reason`, `place` or `other`."""
    q = question.lower().strip()
    if re.search(r"\bhow long ago\b", q):
        return "ago"
    if re.search(r"^(?:\W*)(?:when|on what date|what date|what day|what time|which year|what year|which month|"
                 r"what month|which week|what week|in what year|in which year|in what month|in which month|"
                 r"since when)\b|\bwhen did\b|\bwhen is\b|"
                 r"\bwhen was\b|\bwhat date\b", q):
        return "date"
    if re.search(r"\bhow (?:many|much)\b|\bwhat number\b|\bhow often\b", q):
        return "count"
    if re.search(r"\bhow long\b|\bfor how long\b|\bwhat duration\b", q):
        return "duration"
    if re.search(r"^(?:\W*)(?:who|whom|whose|with whom)\b|\bwhat(?:'s| is) the name\b|\bname of\b", q):
        return "person"
    if re.search(r"^(?:\W*)why\b|\bwhat (?:is|was|are|were) (?:\w+'s |the |her |his |their )?reasons?\b", q):
        return "reason"
    if re.search(r"\b(?:what|which) (?:company|employer|firm|organi[sz]ation|business|school|university|college|"
                 r"team|club|band|shop|store)\b", q):
        return "org"
    if re.search(r"^(?:\W*)where\b|\b(?:what|which) (?:\w+ )?(?:city|country|town|place|state|"
                 r"restaurant|park)\b", q):
        return "place"
    return "other"


def _sentences(fragments: Sequence[Fragment], now: date) -> list[Sentence]:
    out: list[Sentence] = []
    for fragment in fragments:
        for text, line, when, speaker in fragment_sentences(fragment.text):
            out.append(Sentence(text, line, when or now, speaker, len(out)))
    return out


@lru_cache(maxsize=1 << 14)
def fragment_sentences(text: str) -> tuple[tuple[str, str, date | None, str | None], ...]:
    """(sentence, its line, its date or None for the simulated now, speaker) of one fragment's text.

    Memoised by the text: the same turns come back checkpoint after checkpoint, and nothing here
    depends on the probe (a line with no date of its own is dated by the caller's now)."""
    out: list[tuple[str, str, date | None, str | None]] = []
    last = None
    for raw in text.splitlines():
        head = _LINE_HEAD.match(raw)
        speaker = None
        body = raw
        if head:
            last = date(int(head.group(1)), int(head.group(2)), int(head.group(3)))
            speaker = (head.group("who") or head.group("inside") or "").strip() or None
            body = raw[head.end():]
        elif last is None:
            found = _ANY_DATE.search(text)
            if found:
                try:
                    last = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
                except ValueError:
                    last = None
        body = " ".join(body.replace("[", " ").replace("]", " ").split())
        if not body:
            continue
        out.extend((part.strip(), body, last, speaker) for part in _SENTENCE.split(body) if part.strip())
    return tuple(out)


@dataclass(frozen=True)
class ExtractiveAnswerer:
    """Offline deterministic span answerer (labelled `extractive-offline` in every output)."""

    name: str = "extractive-offline"
    version: str = "4"
    min_overlap: int = 2
    """Shared content words a sentence needs (capped at the question's own count); with 2, a
    name present in every line (the speaker's) cannot answer every question about that person."""
    rules: str = RULES

    def answer(self, question: str, fragments: Sequence[Fragment], now: datetime | None = None) -> str:
        today = (now or datetime(1970, 1, 1)).date()
        sentences = _sentences(fragments, today)
        wanted = keys(question) - _QUESTION_WORDS
        need = max(1, min(self.min_overlap, len(wanted)))
        if not sentences or not wanted:
            return ABSTAIN_TEXT
        kind = question_type(question)
        kind = (category_kind(question) or kind) if kind == "other" else kind
        listing = asks_for_list(question) and kind in ("other", "place", "person", "org", *CATEGORY_KINDS)
        speakers = [keys(s.speaker) if s.speaker else frozenset() for s in sentences]
        bags = [keys(s.text) | who for s, who in zip(sentences, speakers, strict=True)]
        hits = [matched(bag, wanted) for bag in bags]
        lines = {}
        for s, hit in zip(sentences, hits, strict=True):
            lines[s.line] = lines.get(s.line, frozenset()) | hit
        df: dict[str, int] = {}
        for hit in hits:
            for t in hit:
                df[t] = df.get(t, 0) + 1
        n = len(sentences)
        weight = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in wanted}
        head = _HEAD.match(question)
        for t in keys(head.group(1)) & wanted if head else ():
            weight[t] *= HEAD_WEIGHT  # "What kind of event ...": the sentence naming an event answers
        names = frozenset().union(*speakers)

        def overlap(bag: frozenset[str], hit: frozenset[str]) -> float:
            return sum(weight[t] * (1.0 if t in bag else RELATED_WEIGHT) for t in sorted(hit))

        scored = []
        for s, bag, hit in zip(sentences, bags, hits, strict=True):
            in_line = lines[s.line]
            if not hit - names and not (listing and kind in INSTANCE_KINDS):
                continue
            typed = _typed_span(kind, s, question)
            if not hit - names and not typed:
                continue  # only a name shared, unless it names an instance of the listed category
            # A sentence naming the kind of thing asked for ("which city": a place) shares that much more.
            if len(in_line) + (1 if typed and (kind in ENTITY_KINDS or listing) else 0) < need:
                continue
            novel = len(bag - wanted - names)
            score = (overlap(bag, hit) + 0.3 * sum(weight[t] for t in sorted(in_line - hit))
                     + 0.1 * min(novel, 5) + (0.5 if typed else 0.0))
            if s.text.rstrip().endswith("?"):
                score *= ASKING_FACTOR  # a sentence that asks states nothing; the reply to it answers
            scored.append((score, -s.order, s, witnesses(bag, wanted)))
        if not scored:
            sole = _sole_line(sentences, lines, [overlap(b, h) + (0.5 if _typed_span(kind, x, question) else 0.0)
                                                 for x, b, h in zip(sentences, bags, hits, strict=True)])
            if sole is None:
                return ABSTAIN_TEXT
            scored = [(0.0, -sole.order, sole, witnesses(bags[sole.order], wanted))]
        scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
        best_score, _, best, shared = scored[0]
        if kind == "count":
            number = counted(question, scored, best_score, lambda x, noun: bool(matched(keys(x.line), keys(noun))),
                             lambda x: counts_noun(x.text, question))
            if number:
                return number
        if asks(best.text) and not listing:
            score_of = {x[2].order: x[0] for x in scored}
            best = answered_by(best, sentences, lambda x: (score_of.get(x.order, 0.0),
                                                           len(bags[x.order] - wanted - names - _FILLER) >= 2))
            shared = witnesses(bags[best.order], wanted)
        if listing and kind != "other":
            spans = list_of(scored, best_score, lambda s, sh: _typed_span(kind, s, question)
                             or _typed_span(kind, _whole_line(s), question))
            if spans:
                return _speak(spans, best.speaker)
        span = _typed_span(kind, best, question) or _typed_span(kind, _whole_line(best), question)
        if span:
            return _speak(span, best.speaker) if kind in ("person", "place", "org", "reason", "other") else span
        if kind == "date":
            return fmt_day(best.when)
        picked = choose(question, dict.fromkeys(s.line for s in sentences), keys, related)
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
        following = {s.order - 1: s for s in sentences if s.order and sentences[s.order - 1].line == s.line}

        preceding = {s.order + 1: s for s in sentences if s.order + 1 < len(sentences)
                     and sentences[s.order + 1].line == s.line}

        def answer_clause(s: Sentence, sh: frozenset[str]) -> str:
            clause = _clause(s.text, sh - names)
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
                clause = f"{clause}. {_clause(nxt.text, frozenset())}"
            elif nxt is None and thin:
                # The last sentence of its turn, saying little of its own: the one before it says more.
                if prev is not None and len(keys(prev.text) - wanted - names - _FILLER) >= 2:
                    clause = f"{_clause(prev.text, frozenset())}. {clause}"
            image = _IMAGE.search(s.line)
            pointing = _DEICTIC.search(clause) or (nxt is not None and _DEICTIC.search(nxt.text))
            if image and pointing and image.group(1) not in clause:
                clause = f"{clause}: {image.group(1)}"  # "they made this!": the shared image shows what
            return _speak(clause, s.speaker)

        if listing:
            return list_of(scored, best_score, answer_clause) or answer_clause(best, shared)
        return answer_clause(best, shared)


def _whole_line(s: Sentence) -> Sentence:
    return Sentence(s.line, s.line, s.when, s.speaker, s.order)


def _sole_line(sentences: list[Sentence], lines: dict[str, frozenset[str]], overlaps: list[float]) -> Sentence | None:
    """When only one line shares any word with the question: its sentence sharing the most (weighted),
    else its fullest sentence (a long turn states its fact in one sentence among many)."""
    matching = [line for line, hit in lines.items() if hit]
    if len(matching) != 1:
        return None
    return max((s for s in sentences if s.line == matching[0]),
               key=lambda s: (overlaps[s.order], len(keys(s.text)), -s.order))


def _speak(span: str, speaker: str | None) -> str:
    """First-person words of a span in the speaker's name ("my daughter" said by Ana: "Ana's daughter")."""
    if not speaker:
        return span
    span = re.sub(r"\b[Mm]y\b", f"{speaker}'s", span)
    span = re.sub(r"\b(?:I|me)\b(?!')", speaker, span)
    return re.sub(r"\bI'm\b", f"{speaker} is", span)


def _clause(text: str, shared: frozenset[str]) -> str:
    """The shortest clause holding the most shared words (the sentence when none splits off)."""
    clauses = [c.strip(" .!?\"'") for c in _CLAUSE.split(text) if c and c.strip(" .!?\"'")]
    if not clauses:
        return text.strip()
    i = max(range(len(clauses)), key=lambda k: (len(keys(clauses[k]) & shared), -len(clauses[k])))
    if not keys(clauses[i]) & shared:
        return text.strip(" .!?") if len(clauses) == 1 else max(clauses, key=len)
    out = clauses[i]
    if len(keys(out) - shared) < THIN_CLAUSE and i + 1 < len(clauses):
        out = f"{out}, {clauses[i + 1]}"  # the clause only repeats the question: its continuation answers
    elif len(keys(out) - shared) < THIN_CLAUSE and i > 0:
        out = f"{clauses[i - 1]}, {out}"  # the last clause only repeats it: the one before answers
    return out


def _typed_span(kind: str, s: Sentence, question: str) -> str | None:
    if kind == "date":
        return _date_span(s.text, s.when, question)
    if kind == "ago":
        m = _AGO.search(s.text)
        return m.group(1) if m else None
    if kind == "count":
        return count_span(s.text, question)
    if kind == "duration":
        m = _DURATION.search(s.text)
        return next((g for g in m.groups() if g), None) if m else None
    if kind == "person":
        return names_in(s, question)
    if kind == "place":
        return place_in(s, question)
    if kind == "org":
        return organisation_in(s.text, question)
    if kind == "reason":
        return reason_in(s.text)
    if kind in CATEGORY_KINDS:
        return category_span(kind, s.text)
    return None


def _date_span(text: str, when: date, question: str = "") -> str | None:
    """The date a sentence names (absolute before relative); of several, the one nearest a word of the
    question ("I've trained since last year and the race is next Sunday": for the race, next Sunday)."""
    found = [(m[0], text[m[0]:m[1]]) for m in absolute_matches(text)]
    if not found:
        found = [(m.start(), r) for m in RELATIVE.finditer(text) if (r := resolve_relative(m, when))]
    if len(found) > 1 and question:
        asked = keys(question) - _QUESTION_WORDS
        spots = [m.start() for m in re.finditer(r"[\w'’-]+", text) if keys(m.group(0)) & asked]
        if spots:
            return min(found, key=lambda f: (_distance(spots, f[0]), f[0]))[1]
    if found:
        return found[0][1]
    return resolve_day_of_month(text, when) or resolve_since(text, when)


def _distance(spots: list[int], at: int) -> int:
    """Characters from `at` to the nearest of the sorted positions `spots`."""
    i = bisect.bisect_left(spots, at)
    return min(abs(spots[j] - at) for j in (i - 1, i) if 0 <= j < len(spots))


def date_answer(s: Sentence) -> str:
    """The date span of a sentence, or its own date."""
    return _date_span(s.text, s.when) or fmt_day(s.when)
