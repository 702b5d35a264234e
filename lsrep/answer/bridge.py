"""Two evidence turns joined by what one of them names (v7, multi-hop).

"My old area was hit by a flood" answers "What area was hit by a flood?" but does not say which area;
the same speaker named it in another turn: "I want to work on improving my old area, West County".
"I moved from my home country" — "a gift from my grandma in my home country, Sweden". A person reading
both turns joins them: the noun phrase the best sentence uses ("my old area") is the one the speaker
named by an appositive elsewhere ("my old area, West County").

`named_in` reads, in the lines of the best sentence's speaker, every possessive noun phrase followed by
a comma and a capitalised name ("my home country, Sweden"), and `with_names` writes the name after the
same phrase in the best sentence ("my home country, Sweden,"), so the usual span rules find it. Only the
speaker's own "my/our" phrases join (another person's "my home country" is another country), only
phrases the best sentence holds word for word, and never a name of a speaker (a greeting: "thanks, my
friend, Ana").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lsrep.answer.memo import memoised
from lsrep.answer.words import keys

_APPOSITIVE = re.compile(r"\b((?:my|our)\s+(?:[a-z]+\s+){0,2}[a-z]+),\s+((?:[A-Z][\w'’-]*)(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*)")
_CALENDAR = re.compile(r"^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|"
                       r"May|June|July|August|September|October|November|December|I|I'm|I've|I'd|I'll)$")


def named_in(lines: Iterable[str], speakers: frozenset[str]) -> dict[str, str]:
    """{possessive noun phrase (lowercase): the name it is given} over `lines` (first naming wins); `speakers`
    holds the matching forms (`keys`) of the speakers' names."""
    out: dict[str, str] = {}
    for line in lines:
        for phrase, name in _named_in_line(line, speakers):
            out.setdefault(phrase, name)
    return out


@memoised(1 << 14)
def _named_in_line(line: str, speakers: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(phrase, name) of each naming in one line, in order (the same lines come back call after call)."""
    out = []
    for m in _APPOSITIVE.finditer(line):
        name = m.group(2)
        if _CALENDAR.match(name.split()[0]) or keys(name.split()[0]) & speakers:
            continue
        out.append((m.group(1).lower(), name))
    return tuple(out)


def with_names(text: str, names: dict[str, str]) -> str:
    """`text` with each named phrase it holds (and does not already name) followed by its name."""
    for phrase, name in names.items():
        if name in text:
            continue
        m = re.search(rf"\b{re.escape(phrase)}\b(?!,\s+{re.escape(name)})", text, re.I)
        if m:
            text = f"{text[:m.end()]}, {name},{text[m.end():]}"
    return text
