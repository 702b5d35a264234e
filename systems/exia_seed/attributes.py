"""Exclusive first-person attributes (where one lives, works, one's age, partner, favourites).

A first-person statement of an exclusive attribute gives a key and a value: "I moved to Porto"
→ (`lives_in`, `Porto`). When a later fact on the same page states the same key with another
value, the consolidator marks the older fact superseded (`Fact.superseded_by`): both stay on
the page (history), the newer is the current value. Only these closed patterns count, so an
ordinary sentence never supersedes anything.
"""

from __future__ import annotations

import re

_VALUE = r"(?P<v>[^.,!?;:()]+?)(?=[.,!?;:()]| and | but | because | since | so | with | for |$)"
_I_AM = r"(?:I'm|I am|Im)"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(pattern, re.IGNORECASE)) for key, pattern in (
        ("lives_in", r"\b(?:I|we)(?:'ve| have)? (?:just |finally |recently )?(?:moved|relocated) (?:back )?to "
                     + _VALUE),
        ("lives_in", r"\b(?:I|we) (?:now |still )?live in " + _VALUE),
        ("lives_in", r"\b(?:I'm|I am|we're|we are) (?:now )?living in " + _VALUE),
        ("works_at", r"\bI(?:'ve| have)? (?:just |finally |recently )?(?:started|got|landed|accepted) "
                     r"(?:a |my |the )?(?:new )?(?:job|position|role) (?:at|with) " + _VALUE),
        ("works_at", r"\b(?:I work|I now work|I'm working|I am working|I'm now working) (?:at|for) " + _VALUE),
        ("job", r"\b(?:I work|I now work|I'm working|I am working) as (?:a |an )?" + _VALUE),
        ("age", rf"\b{_I_AM} (?:now )?(?P<v>\d{{1,3}})(?: years old| now\b)"),
        ("age", r"\bI (?:just )?turned (?P<v>\d{1,3})\b"),
        ("partner", r"\bmy (?:new )?(?:boyfriend|girlfriend|partner|husband|wife|fianc[ée]e?)(?:'s name is| is called"
                    r"| named) (?P<v>[A-Z][\w'-]+)"),
        ("favourite", r"\bmy (?:new |all-time )?fav(?:ou?rite)? (?P<k>\w+(?: \w+)?) (?:is|are|has to be|would be) "
                      + _VALUE),
    )
)


def attribute(sentence: str) -> tuple[str, str] | None:
    """`(key, value)` of the first exclusive attribute the sentence states, else None."""
    for key, pattern in _RULES:
        m = pattern.search(sentence)
        if not m:
            continue
        value = " ".join(m["v"].split()[:6]).strip(" '\"")
        if not value:
            continue
        if key == "favourite":
            key = "favourite:" + " ".join(m["k"].lower().split())
        return key, value
    return None
