"""Which references are lists, and what their items are (judge v6).

A reference is a **list** when it names two or more items a complete answer must each give:

- items separated by commas or semicolons, the last one optionally joined by "and"/"&"
  ("a, b and c", "a, b, and c", "a; b"): without an Oxford comma the last segment is split at its
  last "and" ("salads, sandwiches and desserts"), with one ("a, b, and c and d") it is not;
- several quoted titles ('"Little Women" and "Lord of the Rings"'); a quoted title is never split
  ('"A Court of Thorns and Roses"');
- two one-word items joined by "and" ("clarinet and violin"; judge v5).

The comma of a digit group ("$1,000") separates nothing, and "etc." / "and so on" is no item.

A reference is **not** a list when:

- it has neither a comma nor a semicolon and is not one of the two shapes above ("politics and the
  government", "salt and pepper" — a two-word pair is a list, but both words are needed either way);
- it is one date ("June 5, 2022", "5 October, 2022"; rule 2 of `lsrep.judge.normalize` reads it);
- it is **prose**: it holds an item longer than three words and a segment that opens a clause — a
  subordinating or joining word ("but", "so", "since", "because", "which", "who", "that", "while",
  "although", "like", "such as", "including", ...) or a subject pronoun ("she lost her job",
  "she'll find ...") — or the whole reference opens with a subject pronoun ("She always loved ...").
  Prose keeps the free-text rules (words in a window, coverage).

A list of short items (three tokens or fewer each) is read as in v5 whatever its wording, so
"Portland, Oregon" and "Paris, France" still need both parts, exactly as before.

A **head** is a statement the list elaborates, set off by ": ", " - " or a single ";" before a
comma list ("Not tough; keep their area clean, feed them properly, give them enough light";
"kids' books - classics, stories from different cultures, educational books"). It is not an
item: the answer need not repeat it, but must not contradict it (a word both share is negated in
both or in neither: "it is tough: ..." does not give "Not tough; ...").

"X or Y" keeps its meaning (either suffices, `lsrep.judge.normalize.alternatives`) unless the "or"
sits inside one item of a list whose last item is joined without "or" ("do research, find an
agency or lawyer, gather documents": three items, the second either an agency or a lawyer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from lsrep.judge.owner import PRONOUNS
from lsrep.temporal import whole_date
from lsrep.text import STOPWORDS

SHORT_ITEM = 3
"""An item of at most this many normalised tokens is short; a list of short items is a v5 list."""

OPENERS = frozenset(
    "but so since because as which who whom whose that where when while although though if unless then yet "
    "like such including especially even except whereas thus hence therefore".split())
"""Words that open a clause or an example, not a list item."""
SUBJECTS = frozenset("i he she they we it you".split())
"""Subject pronouns: a segment opening with one is a clause ("she'll find the perfect opportunity")."""

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?:(?<=^)|(?<=[\s,;:(]))'([^']+)'(?=[\s,;:.)!?]|$)")
_MASK = "\x00{}\x00"
_MASKED = re.compile(r"\x00(\d+)\x00")
_HEAD = re.compile(r"^([^,;:]+?)(?::\s+|\s+[-–—]\s+)(.+)$", re.S)
_SEGMENT_SEP = re.compile(r"\s*(?:;|,(?!(?<=\d,)\d{3}\b))\s*")
"""A comma or semicolon between items; not the comma of a digit group ("$1,000")."""
_ETC = re.compile(r"(?:etc|and so on|and more|among others|and others)\W*", re.I)
_LEADING_JOIN = re.compile(r"^(?:and|&|or)\s+", re.I)
_LAST_AND = re.compile(r"^(.*\S)\s+(?:and|&)\s+(\S.*)$", re.S)
_ONE_WORD_PAIR = re.compile(r"\s*([\w'’-]+)\s+(?:and|&)\s+([\w'’-]+)\W*")
_TITLES_ONLY = re.compile(r"\s*\x00\d+\x00(?:\s*(?:,|;|and|&|,\s*and)\s*\x00\d+\x00)+\s*\W*", re.I)
_BARE_YEAR = re.compile(r"\d{4}\.?")
_MONTH = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*")
_ENDS_IN_DAY = re.compile(rf"(?:\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\b\d{{1,2}}(?:st|nd|rd|th)?\s*{_MONTH}|\b{_MONTH})$",
                          re.I)
_OR = re.compile(r"\s+or\s+|\s*/\s*", re.I)


@dataclass(frozen=True)
class ListShape:
    """A list reference: its items (every one needed, in any order) and an optional head."""

    items: tuple[str, ...]
    head: str = ""
    """A statement the list elaborates (not an item; the answer must not contradict it)."""
    short: bool = False
    """Every item has at most `SHORT_ITEM` tokens (a v5 list)."""


def _mask(text: str) -> tuple[str, list[str]]:
    titles: list[str] = []

    def keep(m: re.Match[str]) -> str:
        titles.append(next(g for g in m.groups() if g is not None))
        return _MASK.format(len(titles) - 1)

    return _QUOTED.sub(keep, text), titles


def _unmask(text: str, titles: list[str]) -> str:
    return _MASKED.sub(lambda m: titles[int(m.group(1))], text)


def _segments(body: str) -> list[str]:
    """Comma/semicolon segments of `body`, the last split at its last "and" when no Oxford comma."""
    parts = [p for p in _SEGMENT_SEP.split(body) if p.strip(" .")]
    if len(parts) < 2:
        return parts
    oxford = bool(_LEADING_JOIN.match(parts[-1]))
    parts = [_LEADING_JOIN.sub("", p) for p in parts]
    if not oxford:
        m = _LAST_AND.match(parts[-1])
        if m:
            parts[-1:] = [m.group(1), m.group(2)]
    return parts


def _first_word(text: str) -> str:
    words = text.lower().replace("’", "'").split()
    return words[0].split("'")[0].strip("\"(“") if words else ""


def _opens_clause(segment: str) -> bool:
    low = segment.strip().lower()
    return _first_word(low) in OPENERS | SUBJECTS or low.startswith(("e.g", "i.e"))


def is_prose(segments: list[str], *, opening: str) -> bool:
    """A clause, not a list: the text opens with a subject pronoun, or a later segment opens a clause."""
    return _first_word(opening) in SUBJECTS or any(_opens_clause(s) for s in segments[1:])


@lru_cache(maxsize=65536)
def list_shape(reference: str) -> ListShape | None:
    """The list a reference names, or None when it is not a list (rules: module docstring)."""
    from lsrep.judge.normalize import normal_tokens

    text = reference.strip()
    if not text or whole_date(text) is not None:
        return None
    masked, titles = _mask(text)
    if len(_SEGMENT_SEP.split(masked)) < 2:
        if len(titles) >= 2 and _TITLES_ONLY.fullmatch(masked):
            return ListShape(items=tuple(titles), short=all(len(normal_tokens(t)) <= SHORT_ITEM for t in titles))
        pair = _ONE_WORD_PAIR.fullmatch(masked)
        if pair and not titles:
            return ListShape(items=pair.groups(), short=True)  # v5: "clarinet and violin"
        return None
    head = ""
    m = _HEAD.match(masked)
    first, _, rest = masked.partition(";")
    if m and len(_segments(m.group(2))) >= 2:
        head, body = m.group(1), m.group(2)
    elif rest and ";" not in rest and len(_segments(rest)) >= 2 and len(_segments(first)) < 2:
        head, body = first, rest  # "Not tough; keep it clean, feed it": one statement, then its list
    else:
        body = masked
    parts = _segments(body)
    if re.match(r"\s*or\s", _SEGMENT_SEP.split(body)[-1], re.I):
        return None  # "running, reading, or playing the violin": a choice, not a list
    merged: list[str] = []
    for p in parts:  # "June 5, 2022" inside a list stays one date
        if merged and _BARE_YEAR.fullmatch(p.strip()) and _ENDS_IN_DAY.search(merged[-1]):
            merged[-1] = f"{merged[-1]}, {p}"
        else:
            merged.append(p)
    if len(merged) < 2:
        merged = parts  # "the week before 21Janury, 2022": not a list of dates; read as v5 did
    items = [_unmask(p, titles).strip(" .\"'“”") for p in merged]
    items = [i for i in items if i and not _ETC.fullmatch(i)]  # "a, b, etc.": "etc." is no item
    if len(items) < 2:
        return None
    short = all(len(normal_tokens(i)) <= SHORT_ITEM for i in items)
    if not short and is_prose([_unmask(p, titles) for p in merged], opening=_unmask(head or body, titles)):
        return None
    return ListShape(items=tuple(items), head=_unmask(head, titles).strip(" .\"'"), short=short)


def or_inside_item(shape: ListShape) -> bool:
    """The reference's "or" sits inside an item other than the last ("find an agency or lawyer, ..."),
    so the reference is a list with a choice inside one item, not "X or Y"."""
    return not _OR.search(shape.items[-1]) and any(_OR.search(i) for i in shape.items[:-1])


# -- when an answer gives a list (rule 5 of lsrep.judge.normalize) ---------------------------------
def _item_words(item: str) -> set[str]:
    from lsrep.judge.normalize import normal_tokens

    return {t for t in normal_tokens(item) if t not in STOPWORDS and t not in PRONOUNS}


def _head_agrees(answer: str, head: str) -> bool:
    """The answer does not contradict a list's head: a word both hold is negated in both or in neither."""
    from lsrep.judge.negation import denied_words
    from lsrep.judge.normalize import _NEGATIONS, normal_tokens

    head_tokens = normal_tokens(head)
    shared = {t for t in head_tokens if t not in STOPWORDS and t not in _NEGATIONS} & set(normal_tokens(answer))
    return not shared or denied_words(answer, shared) == denied_words(head, shared)


def list_given(answer: str, shape: ListShape, question: str = "", _depth: int = 0,
               as_text: Callable[[], bool] | None = None) -> bool:
    """Rule 5 (v6): every item of the list is given, in any order, each by the rules an item is read by.

    An item that has words no other item has is given only when the answer holds one of them
    ("dairy-free chocolate cake" is not given by "dairy-free chocolate mousse" beside "chocolate
    ice cream"). A long item (`LONG_ITEM` content words or more) the item rules miss still counts
    when the answer holds one of its own words and the whole reference is given as free text
    (`as_text`, rules 7-8): a paraphrase ("losing unsupportive friends": "a few friends weren't able
    to handle it"), not a missing item. The head, when there is one, is not contradicted. Extra items
    are allowed (a superseded value among them is judged as a revision, `lsrep.judge.deterministic`).
    """
    from lsrep.judge.normalize import gives, normal_tokens, whole_duration

    answer_tokens = set(normal_tokens(answer))
    words = [_item_words(i) for i in shape.items]
    text_given: list[bool] = []

    def whole() -> bool:
        if not text_given:
            text_given.append(as_text is not None and as_text())
        return text_given[0]

    for k, item in enumerate(shape.items):
        own = words[k].difference(*(w for j, w in enumerate(words) if j != k))
        touched = not own or bool(own & answer_tokens) or whole_date(item) is not None or bool(whole_duration(item))
        if touched and any(gives(answer, i, question, _depth + 1) for i in _without_light_verb(item)):
            continue
        if not (len(words[k]) >= LONG_ITEM and own & answer_tokens and whole()):
            return False
    return not shape.head or _head_agrees(answer, shape.head)


_LIGHT_VERB = re.compile(r"^\s*(?:(?:have|has|had|having|do|does|did|doing)\s+|"
                         r"(?:go|goes|went|going)\s+(?:for\s+|on\s+|to\s+)?)(?=\w)", re.I)


def _without_light_verb(item: str) -> tuple[str, ...]:
    """An item and, when it opens with a light verb, the item without it: "having picnics" is given by
    "picnics", "going for hikes" by "hikes" (the verb only names the activity)."""
    bare = _LIGHT_VERB.sub("", item)
    return (item, bare) if bare != item and bare.strip() else (item,)


LONG_ITEM = 3
"""Content words an item needs to be read as a paraphrasable phrase (as rule 8 needs of a reference)."""
