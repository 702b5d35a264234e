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
_ACTIVITY_Q = re.compile(r"^\W*(?:what|which)\s+(?:[\w'’]+\s+){0,2}?(?:activities|hobbies|sports|exercises|workouts|"
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
_SESSION = re.compile(
    r"\b([a-z]{4,}(?:ing)?)\s+(?:class|classes|lessons?|course|courses|session|sessions|workshop)\b"
    r"|\b([a-z]{3,}ing)\s+(?:trip|trips|tour|outing|adventure)\b")
"""v8: "a pottery class", "a weekend yoga session", "a mountaineering trip": what the class (any noun) or the
trip (a word in -ing: a "road trip" is no activity) is of."""
_COMPOUND = re.compile(r"\b(?:do|does|did|doing|done|tried|try|trying|took up|taking up|started|start|practice|"
                       r"practicing|practise)\s+(?:some\s+)?([a-z]{4,}\s+[a-z]{3,}ing)\b")
"""v8: "I've done weight training": an -ing activity named with the noun before it."""
_SERIES = re.compile(r"\b(?:like|such as|including|enjoy|enjoys|love|loves)\s+((?:[a-z]+(?:\s+[a-z]+)?,\s+)+"
                     r"(?:and\s+|or\s+)?[a-z]+(?:\s+[a-z]+)?)\b")
"""v8: "they offer a bunch, like yoga, kickboxing, and circuit training": every item of a series named after
like / such as / enjoy, when one of them is an activity by the patterns above or ends in -ing."""
_LISTENERS = re.compile(r"\b(?:your|his|her|their)\s+(?:\w+\s+)?$", re.I)
""""your camping trip": the class or trip of someone else than the speaker."""
_BESIDES = re.compile(r"\b(?:besides|apart from|other than|aside from|in addition to)\s+([a-z]{3,}ing)\b", re.I)
_FRAGMENT = re.compile(r"^\W*([A-Z][a-z]{2,}ing)(?:\s+(?:and|or|&)\s+([a-z]{3,}ing(?:\s+[a-z]+){0,2}))?\s*[.!]*\s*$")
"""v8: "Besides writing, I also enjoy ...": writing too; a sentence that is only an activity or two ("Writing and
hanging with friends!"), the reply to a question for them."""
_NOT_SESSION = frozenset("first last next this that some every weekend evening morning night online local great "
                         "whole entire free special intro beginner beginners advanced weekly daily world business middle high "
                         "upper lower".split())
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
        found = _activities(text)
    else:
        return None
    return ", ".join(dict.fromkeys(found)) or None


def _activities(text: str) -> list[str]:
    """The activities a sentence names, in the order it names them (v8: classes and trips of an activity,
    "weight training", and every item of a series holding one)."""
    hits: list[tuple[int, str]] = [(m.start(), w) for m in _ACTIVITY.finditer(text)
                                   if (w := m.group(1) or m.group(2)) not in _NOT_ACTIVITY]
    hits += [(m.start(), m.group(1)) for m in _COMPOUND.finditer(text)
             if m.group(1).split()[-1] not in _NOT_ACTIVITY]
    hits += [(m.start(), w) for m in _SESSION.finditer(text)
             if (w := m.group(1) or m.group(2)) not in _NOT_SESSION and w not in _NOT_ACTIVITY
             and not _LISTENERS.search(text[:m.start()])]
    hits += [(m.start(), w) for m in _BESIDES.finditer(text) if (w := m.group(1).lower()) not in _NOT_ACTIVITY]
    frag = _FRAGMENT.match(text)
    if frag and frag.group(1).lower() not in _NOT_ACTIVITY:
        hits += [(k, g.lower() if k == 0 else g) for k, g in enumerate(frag.groups()) if g]
    named = {w for _, w in hits}
    for m in _SERIES.finditer(text):
        items = [re.sub(r"^(?:and|or)\s+", "", i.strip()) for i in m.group(1).split(",")]
        if any(i in named or (w := i.split()[-1]) in named or w.endswith("ing") and w not in _NOT_ACTIVITY
               for i in items if i):
            hits += [(m.start(1) + k, i) for k, i in enumerate(items) if i]
    out: list[str] = []
    for _, w in sorted(hits):
        if w in out or any(w in o.split() for o in out):
            continue
        out = [o for o in out if o not in w.split()] + [w]
    return out
