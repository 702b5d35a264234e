"""Entity spans for the offline answerer: who, where, which company, why.

Who: the capitalised names the question does not already contain (not a greeted listener:
"Hey John"; a sentence-initial word only if capitalised elsewhere), else a kin phrase ("my
sister"). Where: the place after in/at/to/from (else a capitalised name). Which company / school
/ team: the capitalised name after at/for/with/join/from. Why: the sentence from its causal
marker on ("because", "'cause", "so", "to ..."). A sentence is anything with ``.text`` and
``.speaker``.
"""

from __future__ import annotations

import re
from typing import Any

from lsrep.answer.lists import asks_for_list
from lsrep.text import STOPWORDS, fold, tokens

CAPITALISED = re.compile(r"\b([A-Z][a-zA-Z'’-]+(?:\s+(?:of\s+|de\s+)?[A-Z][a-zA-Z'’-]+)*)")
_PLACE = re.compile(
    r"\b(?:in|at|to|from|near|around|into|visit(?:ed|ing)?)\s+((?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)")
_PLACE_COMMON = re.compile(r"\b(?:in|at|to|into)\s+(the\s+(?!\w+ing\b)[a-z]+(?:\s+[a-z]+)?"
                           r"(?:\s+of\s+(?:an?\s+|the\s+)?[a-z]+(?:\s+[a-z]+)?)?)\b")
"""A common place ("at the fashion department of an international company", "in the park")."""

_KIN = re.compile(r"\b(?:my|his|her|their|our)\s+((?:\w+\s+)?(?:mother|mom|mum|father|dad|sister|brother|wife|"
                  r"husband|partner|friend|boss|son|daughter|grandma|grandmother|grandpa|grandfather|aunt|uncle|"
                  r"cousin|neighbou?r|teacher|mentor|coach|colleague|kids|children|family)s?)\b", re.I)


_CALLING = re.compile(r"\bnick ?names?\b|\bwhat does \w+ call\b|\bpet names?\b", re.I)
_CALENDAR = frozenset("monday tuesday wednesday thursday friday saturday sunday january february march april may june "
                      "july august september october november december today tomorrow yesterday".split())
_VOCATIVE = re.compile(r"\b(?:hey|hi|hello|thanks|thank you|bye|yo|dear|congrats|congratulations|wow|whoa|woah|oh|"
                       r"aw+|yay|yes|yeah|yep|sorry|sure|ok|okay|haha|lol)\W*$", re.I)


def names_in(s: Any, question: str) -> str | None:
    """Capitalised names the question does not contain (a sentence-initial word only if capitalised elsewhere)."""
    asked = {t.lower() for t in tokens(question)}
    speaker = {t.lower() for t in tokens(s.speaker or "")}
    kin = _KIN.search(s.text)
    if kin and question.lower().lstrip().startswith("whose"):
        return kin.group(0)
    names = []
    calling = bool(_CALLING.search(question))
    listing = asks_for_list(question)
    for m in CAPITALISED.finditer(s.text):
        words = [w for w in tokens(m.group(1)) if w not in asked and w not in speaker and w not in STOPWORDS]
        if not words:
            continue
        if calling and _VOCATIVE.search(s.text[:m.start()]):
            names.append(m.group(1))  # "What nickname does X use for Y?": "Hey Jo" is how Y is called
            continue
        first, _, rest = m.group(1).partition(" ")
        if calling and rest and _VOCATIVE.match(first + " "):
            names.append(rest)
            continue
        if _VOCATIVE.search(s.text[:m.start()]) or _VOCATIVE.match(m.group(1).split()[0] + " "):
            continue  # "Hey John", "Thanks, Mel": the listener, not the answer
        if re.search(r",\s*$", s.text[:m.start()]) and re.match(r"\s*(?:[!?.]|$)", s.text[m.end():]):
            continue  # "Woohoo, Nate!", "... so proud, Jo.": addressed, not spoken of
        if m.group(1).split()[0].lower() in _CALENDAR:
            continue  # "last Friday", "in June": a time, not a name
        initial = m.start() == 0 or s.text[:m.start()].rstrip().endswith((".", "!", "?", ":", "—", "-"))
        coordinated = re.match(r"\s+(?:and|&)\s+[A-Z]", s.text[m.end():]) or (
            listing and re.match(r"\s*;\s*[A-Z]", s.text[m.end():]))  # "Luna and Oliver"; for a list, "A; B"
        if initial and not coordinated and not re.search(rf"(?<![.!?]\s)(?<!^)\b{re.escape(m.group(1).split()[0])}\b", s.text[m.end():]):
            if len(m.group(1).split()) == 1:
                continue
        names.append(m.group(1))
    if names:
        return ", ".join(dict.fromkeys(names))
    return kin.group(0) if kin else None


def place_in(s: Any, question: str) -> str | None:
    """A place after in/at/to/from; else a capitalised name the question does not hold."""
    asked = {t.lower() for t in tokens(question)}
    for pattern in (_PLACE, _PLACE_COMMON):
        for m in pattern.finditer(s.text):
            words = [w for w in tokens(m.group(1)) if w not in STOPWORDS]
            if words and not all(w in asked for w in words) and words[0] not in _CALENDAR:
                return m.group(1)  # "in Lisbon", not "in July"
    names = names_in(s, question)
    return names if names and not _KIN.fullmatch(names) else None


_ORG = re.compile(r"\b(?:at|for|with|join(?:ed|ing)?|from)\s+((?:the\s+)?[A-Z][\w'’&-]*(?:\s+(?:of\s+|&\s+)?[A-Z][\w'’&-]*)*)")


def organisation_in(text: str, question: str) -> str | None:
    """For which company / school / team: the capitalised name after at/for/with/join/from."""
    asked = {t.lower() for t in tokens(question)}
    for m in _ORG.finditer(text):
        words = [w for w in tokens(m.group(1)) if w not in STOPWORDS]
        if words and not all(w in asked for w in words):
            return m.group(1)
    return None


_CAUSE = re.compile(r"(?:\b(?:because|since|as|so that|in order to)\b|'cause\b|\bto\b(?=\s+[a-z]+))\s+.+", re.I)
_CONSEQUENCE = re.compile(r"(?:,\s*|\s+)(?:and\s+)?so,?\s+(?=(?:i|i'm|i've|i'd|we|we're|he|she|they|it|you|that|this|there|now|"
                          r"my|our|his|her|their|[a-z]+ing)\b)", re.I)


def reason_in(text: str, question: str = "") -> str | None:
    """For why-questions: the sentence from its causal marker on ("'cause they help LGBTQ+ folks"); a
    sentence joined by a consequence marker ("I love dance, so I ...") whole: the reason is before it.
    A marker whose clause says nothing the question does not ("I'm drawn to turtles" for "Why does X
    like turtles?": "to turtles") marks no reason: the next marker is tried."""
    c = _CONSEQUENCE.search(text)
    asked = {fold(t) for t in tokens(question)}
    for m in _CAUSE.finditer(text) if question else [_CAUSE.search(text)]:
        if m is None:
            break
        if c and c.start() > 0 and c.start() < m.start():
            return text.strip(" ,.!?")  # the reason before "so", the purpose often after it: both
        clause = re.split(r"[.!?;,]", m.group(0), maxsplit=1)[0]
        if not question or {fold(t) for t in tokens(clause) if t not in STOPWORDS} - asked:
            return m.group(0).strip(" .!?")
    if c and c.start() > 0:
        return text.strip(" ,.!?")
    return None
