"""How the deterministic judge decides that an answer gives a reference (one family per function).

A reference counts as given when any of these holds, tried in order:

1. **span**: its normalised tokens appear as a whole-token span in the answer's
   (a reference naming a means, "by dancing", as "dancing"; a reference "N <unit>s ago" is
   also given by "N <unit>s before <date>", the same length anchored to a day)
   (`normal_tokens`: lowercase, punctuation and articles dropped, number words and
   ordinals as digits, "1,000" as 1000, plural, possessive, -ing/-ed and common
   irregular forms folded, `lsrep.text.fold`; a noun in -ance/-ence/-ness reads as the word it is
   made from when that stem has six letters or more: "intolerance" as "intolerant", "homelessness"
   as "homeless", but "chance" is not "chant"); a leading possessive pronoun of the
   reference is not required ("her mother" is given by "Maria's mom"), but another third person's
   is not it ("his mother"); judge v5: informal, clipped and irregular forms read as the plain word
   (`lsrep.judge.lexicon`: "biz" business, "pics" photos, "loss" lose), and a possessive or object
   pronoun anywhere in the reference is given by a name or by nothing (`lsrep.judge.owner`: "for his
   business" by "for Jon's biz"), never by another pronoun;
2. **date**: the reference is one date expression and a date the answer names lies
   inside the days it names (`lsrep.temporal`: "June 21st" and "21 June" give
   2026-06-21, "the week before 9 June 2023" is 2-8 June 2023, a date without a
   year matches that day in any year, a coarser answer than the reference does not);
3. **duration**: the reference is a duration and the answer names the same length
   ("3 hours 59 minutes" = "3:59" = "239 minutes");
4. **alternatives**: the reference is "X or Y" and the answer gives one of them;
5. **list**: the reference is a list ("a, b and c") and the answer gives every item,
   in any order; v5: two one-word items joined by "and" ("clarinet and violin") are a list
   too. v6 (`lsrep.judge.lists`, `list_given`): a list is given in no other way, whatever the
   length of its items (v5 let a list of longer items fall through to rule 8, which credited
   2 of 3 items); several quoted titles are a list; prose holding commas (a segment opening a
   clause: "but", "since", "which", "she ...") and one date ("June 5, 2022") are not lists. Each
   item is read by these same rules (lexicon, dates, numbers, owner pronouns); an item with words
   no other item has needs one of them in the answer; a long item the rules miss counts when the
   answer holds one of its own words and the whole reference passes rules 7-8 (a paraphrase, not
   a missing item); an item's leading light verb is not needed ("having picnics" by "picnics",
   "going for hikes" by "hikes"). Extra items are allowed. A head ("Not tough; a, b, c") is not an item but
   must not be contradicted;
6. **yes/no**: the reference starts with yes/no (or "likely no") and the answer
   starts with the same polarity;
7. **words**: every content word of a reference of two or more content words
   appears in the answer within a window of (words + 3) tokens
   ("coding assignment" in "an assignment that involves coding");
8. **coverage**: a free-text reference of three or more content words is given
   when the answer holds at least `COVERAGE` of those the question does not already
   hold (echoing the question earns nothing; inflections folded:
   "making them want to come back" in "creating an experience that'll make 'em
   want to come back"), provided every number of the reference is in the answer
   next to the same word ("two cats" is not "two dogs"), every name inside the reference
   the question does not hold is in the answer ("a stuffed dog Tilly" is not "a dog"), and
   the words both share are
   negated in both or in neither ("not happy" is not "happy"). A negation negates the first
   content word after it, within three words ("not really happy": happy; "not tough; keep it
   clean": tough, not keep; "don't feel like making an impact" agrees with "not feeling like
   making an impact"). v5: a negation followed by a subject pronoun is a question or its tag
   ("don't you think", "isn't it"), negating nothing.

v7 (`lsrep.judge.negation`): a negation denies its clause, not only its first content word. A span
(rule 1), a date (rule 2) or a list item (rule 5, item by item) is not given when every occurrence of
it lies in a negation's scope: "She never tried pottery", "She never did pottery, camping, painting
or swimming", "I don't think he went camping", "She didn't attend on May 7th, 2023". The scope ends at
the clause: "She didn't like hiking, she loved pottery" gives pottery, as do "not only pottery but
also painting", "nothing but pottery", "not Boston but Denver" (Denver), "never missed a yoga class"
(a double negation: yoga), "I'm not sure, but I think he went camping". Rules 7 and 8 compare the
shared words denied in answer and reference by the same scope.

Abstention (`is_abstention`) is a phrase family found anywhere in an answer of any
length: "I don't know", no information, never/not mentioned, not stated, cannot
tell, "I don't have any information about ...", "X has never mentioned a brother".
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

from lsrep.judge.lexicon import same_word
from lsrep.judge.lists import SUBJECTS, list_given, list_shape, or_inside_item
from lsrep.judge.negation import denied_at, denied_words, span_denied
from lsrep.judge.owner import OWNER_PRONOUNS, other_owner, owner_span
from lsrep.temporal import date_spans, whole_date
from lsrep.text import STOPWORDS, fold

# -- abstention ---------------------------------------------------------------------------------
_NEG = r"(?:\bnot|n't|\bnever|\bno longer)"
ABSTAIN_PATTERNS = re.compile(
    r"(^\W*$|\bi (?:do not|don'?t|dont) know\b|\bno idea\b|\bnot sure\b|\bunsure\b|"
    r"\b(?:no|not any|not enough|insufficient|lack of|without any) (?:information|info|mention|record|"
    r"memory|memories|details?|data|indication|evidence|knowledge|reference|context)\b|"
    r"\b(?:do|does|did)(?: not|n'?t) (?:have|contain|include|say|mention|specify|state|indicate|reveal|"
    r"tell|provide|show|cover)\b|"
    rf"{_NEG} (?:been |be |ever )?(?:known|mentioned|stated|specified|provided|available|given|said|"
    r"discussed|disclosed|indicated|recorded|included|shared|revealed|brought up|talked about|covered|"
    r"clear from|in the (?:context|conversation|memory|notes|history|records?))\b|"
    r"\bnever (?:mentions?|mentioned|says?|said|talks?|talked|discusses|discussed|states?|told|"
    r"spoke|brought)\b|"
    r"\b(?:cannot|can ?not|can'?t|unable to|not able to|impossible to|no way to) (?:be )?(?:answer|"
    r"determine|determined|tell|say|know|find|confirm|infer|identify|recall|remember)\b|"
    r"\bnothing (?:is )?(?:in|about|on|regarding|was said|has been said|mentioned)\b|"
    r"\bthere (?:is|was|'s) no (?:mention|information|record|indication|evidence|reference|data)\b|"
    r"\b(?:nobody|no one|no-one) (?:has |have |had |ever )?(?:said|mentioned|told|stated|talked)\b|"
    r"\bunknown\b|\bunanswerable\b|\bnot (?:known|determinable)\b)",
    re.IGNORECASE,
)


def is_abstention(answer: str) -> bool:
    """The answer declines to answer (any phrasing of the family, anywhere in it)."""
    return bool(ABSTAIN_PATTERNS.search(answer.replace("’", "'").strip()))


# -- tokens: numbers and endings ----------------------------------------------------------------
_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
         if w != "_"}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20,
             "thirtieth": 30}
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_ARTICLES = frozenset({"a", "an", "the"})
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "–—‘’“”"})
_DIGIT_GROUPS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_ORDINAL_SUFFIX = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_HYPHEN_NUMBER = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(\w+)")


def _numbers(words: list[str]) -> list[str]:
    """Number words as digits: `twenty one` → 21, `a hundred` → 100, `twice` → 2, `third` → 3."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in _TIMES:
            out.append(str(_TIMES[w]))
            i += 1
            continue
        if w in _ORDINALS:
            out.append(str(_ORDINALS[w]))
            i += 1
            continue
        if w in _UNITS or w in _TENS or (w in ("a", "one") and i + 1 < len(words) and words[i + 1] in _SCALES):
            value, j, current = 0, i, 0
            while j < len(words):
                t = words[j]
                if t in _UNITS:
                    current += _UNITS[t]
                elif t in _TENS:
                    current += _TENS[t]
                elif t in _SCALES and (current or t != "hundred" or j > i):
                    current = max(current, 1) * _SCALES[t]
                    if _SCALES[t] >= 1000:
                        value, current = value + current, 0
                elif t == "a" and j == i:
                    current = 0
                elif t == "and" and j > i and j + 1 < len(words) and (words[j + 1] in _UNITS or words[j + 1] in _TENS):
                    pass
                else:
                    break
                j += 1
            if j == i or (j == i + 1 and words[i] == "a"):
                out.append(w)
                i += 1
                continue
            out.append(str(value + current))
            i = j
            continue
        out.append(w)
        i += 1
    return out


@lru_cache(maxsize=65536)
def normal_tokens(text: str) -> tuple[str, ...]:
    """Lowercase tokens with punctuation and articles dropped, numbers as digits, endings folded."""
    t = text.lower().replace("’", "'")
    t = _DIGIT_GROUPS.sub("", t)
    t = _ORDINAL_SUFFIX.sub(r"\1", t)
    t = _HYPHEN_NUMBER.sub(r"\1 \2", t)
    t = re.sub(r"'s\b", "", t)
    words = t.translate(_PUNCT).split()
    words = _numbers(words)
    return tuple(_derived(fold(same_word(w))) for w in words if w not in _ARTICLES)


_NOUN_SUFFIX = re.compile(r"^(\w{6,}?)(?:(a|e)nc|ness)$")


def _derived(token: str) -> str:
    """A noun and the word it is made from read alike ("intolerance"/"intolerant", "homelessness"/
    "homeless"; stems of six letters or more, so "chance" is not "chant")."""
    m = _NOUN_SUFFIX.match(token)
    if m:
        return f"{m.group(1)}{m.group(2)}nt" if m.group(2) else m.group(1)
    return token


def span_in(answer_tokens: tuple[str, ...], ref_tokens: tuple[str, ...]) -> bool:
    """The reference tokens occur contiguously in the answer tokens."""
    n = len(ref_tokens)
    if n == 0:
        return False
    return any(answer_tokens[i:i + n] == ref_tokens for i in range(len(answer_tokens) - n + 1))


def words_within(answer_tokens: tuple[str, ...], ref_tokens: tuple[str, ...], slack: int = 3) -> bool:
    """Every content word of the reference (two or more) inside one window of the answer."""
    needed = {t for t in ref_tokens if t not in STOPWORDS}
    if len(needed) < 2:
        return False
    width = len(ref_tokens) + slack
    positions = [i for i, t in enumerate(answer_tokens) if t in needed]
    for a in positions:
        seen = {answer_tokens[i] for i in positions if a <= i < a + width}
        if seen >= needed:
            return True
    return False


COVERAGE = 0.5
_LEADING_PRONOUNS = frozenset({"her", "his", "their", "my", "our", "your", "he", "she", "they", "it"})
"""Share of a free-text reference's content words an answer must hold (rule 8)."""
_NEGATIONS = frozenset({"not", "no", "never", "t", "nor", "without", "none", "nothing"})


def numbers_agree(answer_tokens: tuple[str, ...], ref_tokens: tuple[str, ...]) -> bool:
    """Every number of the reference is in the answer, followed by the same word when it is in both."""
    for i, t in enumerate(ref_tokens):
        if not t.isdigit():
            continue
        where = [j for j, a in enumerate(answer_tokens) if a == t]
        if not where:
            return False
        nxt = ref_tokens[i + 1] if i + 1 < len(ref_tokens) else None
        if nxt and nxt not in STOPWORDS and not nxt.isdigit():
            if not any(j + 1 < len(answer_tokens) and fold(answer_tokens[j + 1]) == fold(nxt) for j in where):
                return False
    return True


def covers(answer_tokens: tuple[str, ...], ref_tokens: tuple[str, ...], asked: frozenset[str] = frozenset()) -> bool:
    """Rule 8: most of what a long free-text reference adds to the question, numbers and negation agreeing.

    Words the question already holds are left out of the count (when the reference has others),
    so echoing the question earns nothing and not echoing it costs nothing.
    """
    content = {t for t in ref_tokens if t not in STOPWORDS}
    if len(content) < 3:
        return False
    needed = (content - asked) or content
    have = set(answer_tokens)
    return len(needed & have) >= COVERAGE * len(needed)


NEGATION_REACH = 3
"""A negation word negates the first content word up to this many tokens after it."""
_ASKING_PRONOUNS = SUBJECTS
"""A negation followed by a subject pronoun is a question or its tag ("don't you think", "isn't it
lovely", "why don't we go"), not a negated statement."""
_INTENSIFIERS = frozenset(fold(w) for w in "really truly actually even ever quite always yet exactly necessarily "
                          "particularly totally much at all".split())
"""Words between a negation and what it negates ("never really liked", "not much of an impact")."""


def _negated_words(tokens: tuple[str, ...], words: set[str]) -> set[str]:
    """The shared words a negation negates: the first content word after each negation, within
    NEGATION_REACH ("not feeling like making an impact": feeling; "not tough; keep it clean": tough)."""
    out = set()
    for i, t in enumerate(tokens):
        if t not in _NEGATIONS or (i + 1 < len(tokens) and tokens[i + 1] in _ASKING_PRONOUNS):
            continue  # "don't you think", "isn't it": a question tag asks, it negates nothing (v5)
        head = next((w for w in tokens[i + 1:i + 1 + NEGATION_REACH]
                     if w not in STOPWORDS and w not in _NEGATIONS and w not in _INTENSIFIERS), None)
        if head in words:
            out.add(head)
    return out


def _negation_agrees(answer: str, reference: str, answer_tokens: tuple[str, ...],
                     ref_tokens: tuple[str, ...]) -> bool:
    """The content words both share are negated in both or in neither ("not happy" is not "happy"); a
    negation elsewhere in either ("... so your videos don't flop") leaves the shared words alone.
    v7: a word is negated when every occurrence of it lies in a negation's scope (its clause,
    `lsrep.judge.negation`), not only when it is the first content word after the negation."""
    shared = {t for t in ref_tokens if t not in STOPWORDS and t not in _NEGATIONS} & set(answer_tokens)
    if not shared:
        return bool(_NEGATIONS & set(ref_tokens)) == bool(_NEGATIONS & set(answer_tokens))
    return denied_words(answer, shared) == denied_words(reference, shared)


# -- durations ----------------------------------------------------------------------------------
_DURATION_UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "h": 3600,
                   "day": 86400, "week": 7 * 86400, "month": 2_629_800, "year": 31_557_600}
_DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(?:and\s+(a\s+half|1\s+half)\s+)?(seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|"
    r"months?|years?)\b(\s+and\s+a\s+half)?")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\b(?!\s*(?:am|pm|a\.m|p\.m))", re.I)
_HALF_UNIT = re.compile(r"\b(?:(?:a|1)\s+)?half\s+(?:an?\s+|1\s+)?(hour|minute|day|week|month|year)\b")
_UNIT_AND_HALF = re.compile(r"\b(?:an?|1)\s+(hour|minute|day|week|month|year)\s+and\s+(?:a|1)\s+half\b")


def durations(text: str) -> set[float]:
    """Lengths of time (seconds) the text names; a clock form h:mm is read as both h:mm and m:ss."""
    t = " ".join(_numbers(text.lower().replace("-", " ").split()))
    t = re.sub(r"(?<!\d )(?<!times )\ban? (hour|minute|day|week|month|year)\b", r"1 \1", t)  # not "twice a year"
    found: set[float] = set()
    for m in _UNIT_AND_HALF.finditer(t):
        found.add(1.5 * _DURATION_UNITS[m.group(1)])
    t = _UNIT_AND_HALF.sub(" ", t)
    for m in _HALF_UNIT.finditer(t):
        found.add(0.5 * _DURATION_UNITS[m.group(1)])
    t = _HALF_UNIT.sub(" ", t)
    total, last_end = 0.0, None
    for m in _DURATION_PART.finditer(t):
        unit = m.group(3).rstrip("s") if m.group(3) not in ("hrs", "mins", "secs") else m.group(3)[:-1]
        value = float(m.group(1)) + (0.5 if m.group(2) or m.group(4) else 0.0)
        seconds = value * _DURATION_UNITS[unit]
        gap = t[last_end:m.start()] if last_end is not None else None
        if gap is not None and re.fullmatch(r"\s*(?:,|and)?\s*", gap):
            total += seconds  # "3 hours 59 minutes", "3 hours and 59 minutes"
        else:
            if total:
                found.add(total)
            total = seconds
        last_end = m.end()
    if total:
        found.add(total)
    for m in _CLOCK.finditer(t):
        a, b, c = int(m.group(1)), int(m.group(2)), m.group(3)
        if c is not None:
            found.add(a * 3600 + b * 60 + int(c))
        elif b < 60:
            found.update({a * 3600 + b * 60, a * 60 + b})
    return found


def whole_duration(text: str) -> set[float]:
    """The durations a reference names when it is nothing but a duration ("3:59", "4 years")."""
    core = text.strip().lower()
    if not re.fullmatch(r"(about |around |roughly |approximately |over |for )?[\w\s:.,-]+", core):
        return set()
    rest = re.sub(r"\d+(?:\.\d+)?|:|\b(?:and|a|an|half|about|around|roughly|approximately|over|for|"
                  r"seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?)\b", " ",
                  " ".join(_numbers(core.replace("-", " ").split())))
    if rest.strip(" ,."):
        return set()
    return durations(text)


# -- reference shapes ---------------------------------------------------------------------------
_POLARITY = re.compile(r"^\W*(?:(?:most\s+)?likely|probably|possibly|definitely|somewhat)?[\s,]*(yes|no)\b", re.I)
_ANSWER_POLARITY = re.compile(
    r"^\W*(?:(?:most\s+)?likely|probably|possibly|definitely|i think|i believe)?[\s,]*(?:,\s*)?(yes|no|not)\b", re.I)


def polarity(text: str, *, answer: bool = False) -> str | None:
    m = (_ANSWER_POLARITY if answer else _POLARITY).match(text)
    if not m:
        return None
    return "no" if m.group(1).lower() in ("no", "not") else "yes"


def alternatives(reference: str) -> list[str]:
    """The choices of an "X or Y" reference (empty when it has none)."""
    parts = [p.strip(" ,.") for p in re.split(r"\s+or\s+|\s*/\s*", reference) if p.strip(" ,.")]
    return parts if len(parts) >= 2 else []


def list_items(reference: str) -> list[str]:
    """The items of a list reference ("a, b, and c"; "a; b"); empty when it is not a list
    (`lsrep.judge.lists`: prose with commas, one date, and a lone "x and y" phrase are not lists)."""
    shape = list_shape(reference)
    return list(shape.items) if shape else []


def _subject_free(reference: str, question: str) -> str:
    """The reference without a leading pronoun, or a leading "<Name>'s" naming someone the question names."""
    words = reference.split()
    if len(words) > 1 and words[0].lower() in _LEADING_PRONOUNS:
        return " ".join(words[1:])
    m = re.match(r"^\s*([A-Z][\w-]*)['’]s\s+(\S.*)$", reference)
    if m and question and re.search(rf"\b{re.escape(m.group(1))}\b", question):
        return m.group(2)
    return reference


_AGO, _BEFORE = fold("ago"), fold("before")
_MEANS = re.compile(r"^\s*by\s+(?=[a-z]+ing\b)", re.I)
"""A reference "by dancing" names the means, "dancing"; the answer need not repeat "by"."""


def _negated_at(answer: str, answer_tokens: tuple[str, ...], ref_tokens: tuple[str, ...]) -> bool:
    """Every occurrence of the reference span is denied: v7, it lies in a negation's scope ("She never
    tried pottery", "never did pottery, camping or swimming"; `lsrep.judge.negation`); where the
    clause-by-clause tokens do not hold the span, v6's reading: directly negated ("not Sweden")."""
    denied = span_denied(answer, ref_tokens)
    if denied is not None:
        return denied
    n = len(ref_tokens)
    starts = [i for i in range(len(answer_tokens) - n + 1) if answer_tokens[i:i + n] == ref_tokens]
    return bool(starts) and all(i > 0 and answer_tokens[i - 1] in _NEGATIONS for i in starts)


def _asserted_dates(answer: str) -> list:
    """The dates an answer names (`lsrep.temporal.date_spans`) but those a negation denies (v7:
    "She didn't attend on 7 May 2023" does not give 7 May 2023; "not in June but on 7 May" does)."""
    return date_spans(answer, keep=lambda start, end: not denied_at(answer, start, end))


def gives(answer: str, reference: str, question: str = "", _depth: int = 0) -> bool:
    """The answer gives this reference text (see the module docstring for the rules, in order)."""
    ans_tokens = normal_tokens(answer)
    full = normal_tokens(reference)
    if full and span_in(ans_tokens, full) and not _negated_at(answer, ans_tokens, full):
        return True
    reference = _MEANS.sub("", _subject_free(reference, question))
    ref_tokens = normal_tokens(reference)
    if not ref_tokens:
        return False
    if span_in(ans_tokens, ref_tokens):
        lead = full[0] if full and full[0] in OWNER_PRONOUNS and full[1:] == ref_tokens else None
        return not _negated_at(answer, ans_tokens, ref_tokens) and not (lead and other_owner(ans_tokens, ref_tokens, lead))
    if owner_span(ans_tokens, ref_tokens):
        return True  # "for his business" given by "for Jon's biz" (v5: lsrep.judge.owner)
    if (len(ref_tokens) > 1 and ref_tokens[-1] == _AGO and span_in(ans_tokens, (*ref_tokens[:-1], _BEFORE))
            and date_spans(answer)):
        return True  # "a few years ago" given as "a few years before 8 February 2023" (anchored, same length)
    if ref_tokens[-1] == _AGO and whole_duration(reference[:reference.lower().rfind("ago")]):
        return False  # "three years ago" is a time: only the span or the anchored form gives it, not word overlap
    ref_date = whole_date(reference)
    if ref_date is not None:
        return any(d.within(ref_date) for d in _asserted_dates(answer))
    ref_durations = whole_duration(reference)
    if ref_durations:
        return bool(ref_durations & durations(answer))
    if _depth > 1:
        return False
    pol = polarity(reference)
    if pol is not None:
        return polarity(answer, answer=True) == pol
    shape = list_shape(reference)
    alts = alternatives(reference)
    if alts and not (shape and or_inside_item(shape)):
        return any(gives(answer, a, question, _depth + 1) for a in alts)
    if shape:  # v6: a list is given in no other way
        return list_given(answer, shape, question, _depth,
                          as_text=lambda: _free_text(answer, ans_tokens, reference, ref_tokens, question))
    return _free_text(answer, ans_tokens, reference, ref_tokens, question)


def _free_text(answer: str, ans_tokens: tuple[str, ...], reference: str, ref_tokens: tuple[str, ...],
               question: str) -> bool:
    """Rules 7 and 8: content words in a window, or coverage; negation and numbers agreeing."""
    if (not _negation_agrees(answer, reference, ans_tokens, ref_tokens)
            or not numbers_agree(ans_tokens, ref_tokens)):
        return False
    asked = frozenset(normal_tokens(question)) if question else frozenset()
    if words_within(ans_tokens, ref_tokens):
        return True
    return not (_names_in(reference) - asked - set(ans_tokens)) and covers(ans_tokens, ref_tokens, asked)


_NAME = re.compile(r"(?<=[\w,;] )[A-Z][a-z][\w'’-]*")


def _names_in(reference: str) -> set[str]:
    """The names inside a free-text reference ("naming a stuffed dog Tilly": tilly); coverage needs them."""
    return {t for m in _NAME.finditer(reference) for t in normal_tokens(m.group(0))}


# -- hedges -------------------------------------------------------------------------------------
HEDGE_MARKERS = re.compile(
    r"\b(or|either|maybe|perhaps|possibly|might|not sure|unsure|could be|probably|i think|one of)\b", re.I)
TRANSITION_MARKERS = re.compile(
    r"\b(used to|previously|formerly|no longer|not anymore|any ?more|earlier|originally|at first|initially|"
    r"instead of|rather than|replaced|switched|changed|moved|from\b.+\bto|now|currently|these days|"
    r"since then|before that|was|had been|until|left|quit|resigned|handed in|moved back|back in|back to)\b", re.I)


def is_hedge(answer: str) -> bool:
    """An answer giving two values is a hedge unless it marks one as past and does not waver."""
    if HEDGE_MARKERS.search(answer):
        return True
    return not TRANSITION_MARKERS.search(answer)
