"""Deterministic extraction rules: the offline stand-in for ICE's model extractors.

They produce exactly the JSON shapes the model prompts ask for (see `extraction.py`):
triples over the user's statements ("I live in Lisbon", "I moved to Porto", "my favorite
book is Dune", "Ana is my sister", "The Obsidian Citadel is in Varn"), capitalised spans as
entity mentions, and procedural instructions ("always ...", "never ...", "from now on ...",
"when I ask X, Y", "stop ...", "you can X again").
"""

from __future__ import annotations

import re
from typing import Any

from .text import STOPWORDS, sentences

_NAME = r"[A-Z][\w'\-]*"
_CAP_SPAN = re.compile(
    rf"(?:The |A )?{_NAME}(?:\s+(?:(?:of|the|and|de|da|do|von|van|del|la|le)\s+)?{_NAME})*"
)
_BOUNDARY = frozenset(
    """and but because since now today yesterday tomorrow last next this when while so which who
    that with for from in at on after before during until or though although as if then lately
    recently anymore again too very really every each""".split()
)
_NOT_ENTITIES = frozenset(
    """i i'm i've i'd i'll ok okay yes no hi hello hey thanks please sorry monday tuesday wednesday
    thursday friday saturday sunday january february march april may june july august september
    october november december""".split()
)

# (pattern, relation, kind, object type when the object is a proper name, confidence)
_FIRST_PERSON: list[tuple[re.Pattern[str], str, str, str | None, float]] = [
    (re.compile(r"\bI(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) to\s+", re.I),
     "lives_in", "property", "place", 0.9),
    (re.compile(r"\bI(?:'m| am)? (?:now |currently |still )?(?:live|living) in\s+", re.I),
     "lives_in", "property", "place", 0.9),
    (re.compile(r"\bI(?:'m| am)? (?:now |currently |still )?(?:work|working) (?:at|for)\s+", re.I),
     "works_at", "property", "organization", 0.9),
    (re.compile(r"\bI(?:'ve| have)? (?:just )?(?:started|joined|got a job at)\s+(?:working at\s+)?"
                r"(?=[A-Z])"), "works_at", "property", "organization", 0.8),
    (re.compile(r"\bI(?:'m| am)? (?:now )?(?:work|working) as (?:an? )?", re.I),
     "job_title", "property", None, 0.9),
    (re.compile(r"\bI (?:really )?(?:like|love|enjoy|adore)\s+", re.I), "likes", "multi", None, 0.9),
    (re.compile(r"\bI(?:'m| am)? (?:now )?(?:use|using)\s+", re.I), "uses", "multi", "tool", 0.9),
    (re.compile(r"\bI(?:'m|'ve| am| have)? (?:just )?(?:read|reading|finished reading|finished|"
                r"started reading)\s+", re.I), "read", "multi", "book", 0.9),
    (re.compile(r"\bI (?:just )?(?:watched|saw)\s+", re.I), "watched", "multi", "film", 0.8),
    (re.compile(r"\bI (?:just )?(?:visited|went to|travel(?:l)?ed to)\s+", re.I),
     "visited", "event", "place", 0.9),
    (re.compile(r"\bI (?:just )?attended\s+", re.I), "attended", "event", "event", 0.9),
]
_FAVORITE = re.compile(r"\bmy (?:favou?rite|fav) ([a-z]+(?: [a-z]+)?) is\s+", re.I)
_MY_X_IS = re.compile(r"\bmy ([a-z]+(?: [a-z]+)?) is\s+", re.I)
_X_IS_MY = re.compile(rf"\b({_NAME}(?: {_NAME})*) is my ([a-z]+(?: [a-z]+)?)\b")
_AGE = re.compile(r"\bI(?:'m| am) (\d{1,3}) years old\b", re.I)
_THIRD_PERSON = [
    (re.compile(rf"\b((?:The )?{_NAME}(?: (?:of |the )?{_NAME})*) (?:is|lies|sits) "
                rf"(?:located |situated )?in\s+(?={_NAME})"), "located_in", "place", "place"),
    (re.compile(rf"\b({_NAME}(?: {_NAME})?) (?:lives|is living) in\s+(?={_NAME})"),
     "lives_in", "person", "place"),
    (re.compile(rf"\b({_NAME}(?: {_NAME})?) works (?:at|for)\s+(?={_NAME})"),
     "works_at", "person", "organization"),
]

_ALWAYS = re.compile(r"^(?:please\s+)?(always|never)\s+(.+)$", re.I)
# Relatives and friends one can have several of: a new one is added, never supersedes (Ana being
# my sister does not stop Eva being my sister). Unique ones (mother, husband, ...) stay exclusive.
KIN_MULTI = frozenset(
    """sister brother sibling cousin aunt uncle niece nephew son daughter child kid grandchild
    grandson granddaughter grandmother grandfather grandma grandpa grandparent friend colleague
    coworker neighbor neighbour classmate roommate teammate mentor""".split()
)
KIN_UNIQUE = frozenset("mother mom mum father dad husband wife partner boyfriend girlfriend fiance fiancee".split())
# "Always"/"never" opens an instruction only before a verb in its base form: narrative and
# chit-chat ("never been fishing", "never thought…", "always here to help", "always a blessing")
# is no procedure.
_NOT_BASE_VERB = frozenset(
    """been was were had did thought felt knew saw seen went gone got made found done heard told said
    came took gave left met lost won ran sat stood wrote read understood forgot forgotten here there
    a an the so such too very really quite just still also up on in at with about for to good great
    nice happy glad fun ready sure open keen there's it's i i'm i've i'd we you he she they it my
    your our their his her this that these those""".split()
)
_FROM_NOW = re.compile(r"\bfrom now on,?\s+(?:please\s+)?(?:you should\s+)?(.+)$", re.I)
_WHEN_ASK = re.compile(r"\bwhen I ask (?:you )?(?:about |for )?(.+?),\s*(?:please\s+)?(.+)$", re.I)
_STOP = re.compile(r"^(?:please\s+)?(?:stop|quit)\s+(.+)$", re.I)
_AGAIN = re.compile(r"\byou can (.+?) again\b", re.I)
_NO_NEED = re.compile(r"\b(?:no need to|you don't need to|you no longer need to)\s+(.+)$", re.I)


def _clean(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def object_span(rest: str) -> tuple[str, bool] | None:
    """The object after a pattern: (text, is a proper name) or None."""
    rest = rest.strip()
    cap = _CAP_SPAN.match(rest)
    if cap:
        return cap.group(0).strip(), True
    out: list[str] = []
    for tok in re.findall(r"[\w'\-]+|[^\w\s]", rest):
        if not re.fullmatch(r"[\w'\-]+", tok) or tok.lower() in _BOUNDARY:
            break
        out.append(tok)
        if len(out) == 4:
            break
    while out and out[0].lower() in {"a", "an", "the", "to", "my"}:
        out.pop(0)
    if not out or out[0].lower() in STOPWORDS:
        return None
    return " ".join(out), False


def _slug(text: str) -> str:
    return "_".join(text.lower().split())


def extract_triples(text: str, date: str | None) -> list[dict[str, Any]]:
    """Triples stated in the text, in the extractor's JSON shape."""
    out: list[dict[str, Any]] = []
    for sent in sentences(_clean(text)):
        out += _sentence_triples(sent, date)
    return out


def _triple(subject: str, relation: str, obj: str, kind: str, date: str | None, conf: float,
            object_type: str | None, subject_type: str | None = None) -> dict[str, Any]:
    return {"subject": subject, "relation": relation, "object": obj, "type": kind,
            "date": date if kind == "event" else None, "confidence": conf,
            "object_type": object_type, "subject_type": subject_type}


def _sentence_triples(sent: str, date: str | None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if m := _AGE.search(sent):
        found.append(_triple("user", "age", m.group(1), "property", date, 0.9, None))
    for pattern, relation, kind, obj_type, conf in _FIRST_PERSON:
        for m in pattern.finditer(sent):
            span = object_span(sent[m.end():])
            if span:
                found.append(_triple("user", relation, span[0], kind, date, conf,
                                     obj_type if span[1] else None))
    fav = _FAVORITE.search(sent)
    if fav and (span := object_span(sent[fav.end():])):
        kind_word = _slug(fav.group(1))
        found.append(_triple("user", f"favorite_{kind_word}", span[0], "property", date, 0.9,
                             kind_word if span[1] else None))
    elif (mine := _MY_X_IS.search(sent)) and (span := object_span(sent[mine.end():])):
        rel = _slug(mine.group(1))
        if not _is_kin(rel) or span[1]:  # "my sister is visiting" names no relative
            found.append(_triple("user", rel, span[0], _kin_kind(rel), date, 0.9,
                                 (rel if rel != "name" else None) if span[1] else None))
    if m := _X_IS_MY.search(sent):
        rel = _slug(m.group(2))
        found.append(_triple("user", rel, m.group(1), _kin_kind(rel), date, 0.8, rel))
    for pattern, relation, subj_type, obj_type in _THIRD_PERSON:
        for m in pattern.finditer(sent):
            span = object_span(sent[m.end():])
            if span and span[1] and m.group(1).split()[0] not in {"I", "It", "This", "That"}:
                found.append(_triple(m.group(1), relation, span[0], "property", date, 0.7,
                                     obj_type, subj_type))
    return found


def _is_kin(relation: str) -> bool:
    last = relation.split("_")[-1]
    return last in KIN_MULTI or last in KIN_UNIQUE


def _kin_kind(relation: str) -> str:
    """`multi` for a relation one can hold with several people (`best_friend`, `sister`)."""
    return "multi" if relation.split("_")[-1] in KIN_MULTI and not relation.startswith("best_") else "property"


def _base_verb(word: str) -> bool:
    """Whether a word can open an instruction (a verb in its base form), by exclusion."""
    w = word.lower().strip(",;:")
    return bool(w) and w not in _NOT_BASE_VERB and not w.endswith(("ed", "ing", "n't"))


def extract_mentions(text: str) -> list[dict[str, str]]:
    """Capitalised spans as entity candidates (sentence-initial single words excluded)."""
    out: dict[str, None] = {}
    for sent in sentences(_clean(text)):
        for m in _CAP_SPAN.finditer(sent):
            span = m.group(0).strip()
            first_word = m.start() == 0 or not sent[: m.start()].strip()
            toks = span.split()
            if (len(toks) == 1 and first_word) or all(t.lower() in _NOT_ENTITIES for t in toks):
                continue
            if span.lower() in STOPWORDS or toks[0].lower() in _NOT_ENTITIES and len(toks) == 1:
                continue
            out[span] = None
    return [{"name": name, "type": "entity"} for name in out]


def extract_procedures(text: str) -> list[dict[str, Any]]:
    """Instructions about the assistant's behaviour, as add / revoke operations."""
    ops: list[dict[str, Any]] = []
    for sent in sentences(_clean(text)):
        body = sent.rstrip(".!? ")
        if m := _WHEN_ASK.search(body):
            ops.append({"action": "add", "trigger": m.group(1), "instruction": m.group(2)})
        elif m := _FROM_NOW.search(body):
            ops.append({"action": "add", "trigger": _trigger(m.group(1)),
                        "instruction": m.group(1)})
        elif (m := _ALWAYS.match(body)) and _base_verb(m.group(2).split()[0]):
            ops.append({"action": "add", "trigger": _trigger(m.group(2)),
                        "instruction": f"{m.group(1).lower()} {m.group(2)}"})
        elif m := _STOP.match(body):
            ops.append({"action": "revoke", "about": m.group(1),
                        "fallback_instruction": f"do not {m.group(1)}"})
        elif m := (_AGAIN.search(body) or _NO_NEED.search(body)):
            ops.append({"action": "revoke", "about": m.group(1), "fallback_instruction": None})
    return ops


def _trigger(instruction: str) -> str:
    """A trigger is the instruction's topic words (cue words dropped)."""
    cues = {"always", "never", "please", "you", "should"}
    return " ".join(w for w in instruction.split() if w.lower() not in cues)


def extractive_summary(turns: list[dict[str, str]], max_chars: int) -> str:
    """First sentence of each user turn (any turn if none is the user's), capped at max_chars."""
    chosen = [t for t in turns if t.get("role") == "user"] or turns
    parts = [first[0] for t in chosen if (first := sentences(t.get("text", "")))]
    text = " ".join(parts) or "(no text in this batch)"
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "\u2026"
