"""Questions that name a category, and the spans that are instances of it, for the offline answerer.

"What movies has X seen?", "Which books ...": the answer is a title, which people quote or
capitalise ("I just watched "Little Women""). "What activities ...", "What martial arts ...",
"What hobbies ...": the answer is an activity, which people state as a gerund or an object of
do / go / love ("I'm off to go swimming", "I'm doing kickboxing", "off to do some taekwondo").
"What colour ...": the colour words a sentence (or the image shared with it) names. A quoted
title takes the "by <Name>" that follows it ("Brave" by Sara Bareilles).
Neither sentence repeats the category word, so a sentence holding an instance of the category
asked about counts, for a list question, as sharing that word. The patterns are plain English
and name no particular title or activity.
"""

from __future__ import annotations

import re

CATEGORY_KINDS = frozenset({"title", "activity", "colour"})

_TITLE_Q = re.compile(r"^\W*(?:what|which)\s+(?:(?!(?:kind|type|sort|genre)\b)[\w'’]+\s+){0,4}?(?:movies?|films?|books?|novels?|songs?|shows?|series|"
                      r"albums?|plays?|video games?|board games?|games?|tv shows?|trilog(?:y|ies))\b(?!\s+about\b)", re.I)
_COLOUR_Q = re.compile(r"\b(?:what|which)\s+colou?rs?\b|\bwhat kind of light", re.I)
_COLOUR = re.compile(r"\b(?:(?:light|dark|bright|pale)\s+)?(?:red|orange|yellow|green|blue|purple|violet|pink|brown|black|"
                     r"white|gr[ae]y|silver|gold|golden|teal|turquoise|navy|beige|maroon|lavender|magenta|cyan)\b", re.I)
_ACTIVITY_Q = re.compile(r"^\W*(?:what|which)\s+(?:\w+\s+){0,2}?(?:activities|hobbies|sports|exercises|workouts|"
                         r"martial arts|pastimes)\b", re.I)
_QUOTED = re.compile(r"[\"“]([^\"“”]{2,60})[\"”](\s+by\s+[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)?")
_TITLED = re.compile(r"\b(?:watched|watching|read|reading|saw|seen|played|playing|listened to|(?:book|novel|movie|film|"
                     r"song|show|series|game|album|play)\s+(?:called|named|titled))\s+"
                     r"((?:the\s+)?[A-Z][\w'’:-]*(?:\s+(?:of|the|and|in|on|a|to)?\s*[A-Z][\w'’:-]*)*)")
_ACTIVITY = re.compile(
    r"\b(?:go|goes|went|going|gone|do|does|did|doing|done|love|loves|loved|enjoy|enjoys|enjoyed|tried|try|trying|"
    r"took up|taking up|started|start|into|practice|practicing|practise)\s+(?:some\s+|a\s+bit\s+of\s+|more\s+)?"
    r"([a-z]{3,}ing)\b|\b(?:do|does|did|doing|done|tried|try|trying|took up|taking up|practice|practicing)\s+some\s+"
    r"([a-z]{4,})\b")
_NOT_ACTIVITY = frozenset("thing something nothing anything everything feeling morning evening being going doing "
                          "getting having making taking seeing saying thinking trying working this that them "
                          "well good great fine okay".split())


def category_kind(question: str) -> str | None:
    """`title`, `activity` or `colour` when the question asks for instances of such a category, else None."""
    if _COLOUR_Q.search(question):
        return "colour"
    if _ACTIVITY_Q.search(question):
        return "activity"
    if _TITLE_Q.search(question):
        return "title"
    return None


def category_span(kind: str, text: str) -> str | None:
    """The instances of the category a sentence names ("Little Women"; "swimming"), joined by ", "."""
    if kind == "title":
        found = [m.group(1).strip(" .,!?") + (m.group(2) or "") for m in _QUOTED.finditer(text)]
        found = found or [m.group(1) for m in _TITLED.finditer(text)]
    elif kind == "colour":
        found = [m.group(0).lower() for m in _COLOUR.finditer(text)]
        return " and ".join(dict.fromkeys(found)) or None
    elif kind == "activity":
        found = [w for m in _ACTIVITY.finditer(text) if (w := m.group(1) or m.group(2)) not in _NOT_ACTIVITY]
    else:
        return None
    return ", ".join(dict.fromkeys(found)) or None
