"""Words, roots, numbers, names and dates: the lexical primitives every stage shares."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from datetime import date

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves also let get got yes okay ok oh
    le la les un une des du de et est en au aux ce ces cette mon ma mes ton ta tes son sa ses je tu
    il elle nous vous ils elles que qui quoi dans pour par sur avec pas ne plus ou mais donc car
    user assistant utilisateur agent said says don doesn didn isn wasn aren won can t s ll re ve d m""".split()
)
"""English and French function words, plus the speaker labels (they carry no content)."""

NAME_STOPLIST: frozenset[str] = frozenset(
    """the and but for not you your this that then there they when what where which who why how
    user assistant utilisateur agent i'm i've i'll monday tuesday wednesday thursday friday saturday
    sunday january february march april may june july august september october november december
    lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril mai juin juillet
    août septembre octobre novembre décembre ok okay yes also next last today tomorrow yesterday
    big hey hi hello wow thanks good great""".split()
)
"""Capitalised words that are not names (weekdays, months, labels, sentence glue)."""

MONTHS: dict[str, int] = {
    name: i + 1
    for names in (
        "january february march april may june july august september october november december",
        "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    )
    for i, name in enumerate(names.split())
}

_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d{1,3}(?:[ ,\u00a0]\d{3})+(?![\d])|\d+")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(
    r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b"
    r"|\b(\d{1,2})(?:er)?\s+(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")(?:\s+(\d{4}))?\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@functools.lru_cache(maxsize=1 << 16)
def fold(text: str) -> str:
    """Lowercase, strip accents, collapse whitespace: the key used to compare names.

    Cached: recall and graph regeneration fold the same fact texts again at every query
    and consolidation, and the result depends on the text alone.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.lower().split())


def fold_joined(parts: Sequence[str]) -> str:
    """`fold(" ".join(parts))`, from each part's (cached) fold.

    The same text: decomposition and the removal of combining marks are per character (a space is
    a starter, so no reordering crosses it), lowercasing looks past the space only for a final
    sigma, which the space ends either way, and the joined whitespace collapses as each part's
    does (empty folds dropped). A page's whole text was folded afresh at every summary check.
    """
    return " ".join([f for f in map(fold, parts) if f])


def words(text: str) -> list[str]:
    """Lowercase word tokens (letters and digits), repeats kept, in order."""
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Words of two or more characters that are not stopwords, in order."""
    return [w for w in words(text) if len(w) >= 2 and w not in STOPWORDS and not w.isdigit()]


@functools.lru_cache(maxsize=1 << 16)
def term_set(text: str) -> frozenset[str]:
    """The distinct content words of a text, accent-folded (cached, as `fold`)."""
    return frozenset(content_words(fold(text)))


def query_terms(text: str) -> list[str]:
    """Distinct content words of a query, accent-folded, in first-seen order."""
    seen: dict[str, None] = {}
    for w in content_words(fold(text)):
        seen.setdefault(w, None)
    return list(seen)


def roots(text: str, length: int) -> set[str]:
    """First `length` characters of each content word of three or more letters."""
    return {w[:length] for w in content_words(fold(text)) if len(w) >= 3}


def digit_groups(text: str) -> set[str]:
    """Numbers in the text, with `1 000` / `1,000` separators and leading zeros normalised."""
    return {str(int(re.sub(r"[ ,\u00a0]", "", m))) for m in _NUMBER.findall(text)}


def sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by whitespace."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def capitalised_names(text: str) -> list[str]:
    """Capitalised words of 3+ letters that do not open a sentence and are not on the stoplist."""
    names: list[str] = []
    for sentence in sentences(text):
        for i, token in enumerate(_WORD.findall(sentence)):
            if i == 0 or len(token) < 3 or not token[0].isupper() or not token[0].isalpha():
                continue
            if token.lower() in NAME_STOPLIST:
                continue
            names.append(token)
    return names


def name_phrases(text: str) -> list[str]:
    """Runs of capitalised names separated by single spaces (`Captain Nemo`, `Central Park`)."""
    phrases: list[str] = []
    for sentence in sentences(text):
        run: list[str] = []
        end = -1
        for i, m in enumerate(_WORD.finditer(sentence)):
            token = m.group(0)
            is_name = (i > 0 and len(token) >= 3 and token[0].isupper() and token[0].isalpha()
                       and token.lower() not in NAME_STOPLIST)
            if is_name and run and sentence[end:m.start()] == " ":
                run.append(token)
            elif is_name:
                if run:
                    phrases.append(" ".join(run))
                run = [token]
            elif run:
                phrases.append(" ".join(run))
                run = []
            end = m.end()
        if run:
            phrases.append(" ".join(run))
    return phrases


def estimate_tokens(text: str) -> int:
    """EXIA's own token estimate: characters / 4, rounded up."""
    return (len(text) + 3) // 4


def slugify(name: str) -> str:
    """File-safe page name from a subject name."""
    slug = re.sub(r"[^a-z0-9]+", "-", fold(name)).strip("-")
    return slug or "sujet"


def dates_in(text: str, default_year: int) -> list[date]:
    """ISO dates and `March 3[, 2026]` / `3 mars [2026]` mentions, in order of appearance."""
    found: list[tuple[int, date]] = []
    for m in _ISO_DATE.finditer(text):
        d = _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if d:
            found.append((m.start(), d))
    for m in _MONTH_DAY.finditer(text):
        if m.group(1):
            month, day, year = MONTHS[m.group(1).lower()], int(m.group(2)), m.group(3)
        else:
            month, day, year = MONTHS[m.group(5).lower()], int(m.group(4)), m.group(6)
        d = _safe_date(int(year) if year else default_year, month, day)
        if d:
            found.append((m.start(), d))
    return [d for _, d in sorted(found, key=lambda pair: pair[0])]


def date_mentioned(text: str, day: date) -> bool:
    """Whether the text names this calendar day (ISO, or month name plus day number)."""
    return day in dates_in(text, day.year)


def without_dates(text: str) -> str:
    """The text with ISO dates, month-day mentions and bare numbers removed."""
    text = _ISO_DATE.sub(" ", text)
    text = _MONTH_DAY.sub(" ", text)
    return _NUMBER.sub(" ", text)


def parse_day(value: object) -> date | None:
    """A `YYYY-MM-DD` string as a date; anything else as None."""
    if not isinstance(value, str):
        return None
    m = _ISO_DATE.fullmatch(value.strip()[:10]) if len(value.strip()) >= 10 else None
    if not m:
        return None
    return _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
