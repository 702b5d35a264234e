"""Related words for the offline answerer: a question word matches a sentence word of its group.

People rarely repeat a question's words when they state a fact ("Which city do I live in?" —
"Home for me is Leeds; I settled here"). Each group below holds words that, in conversation,
state the same kind of fact; a question word is matched by any word of a group it belongs to.
The groups are plain English, written once and not tuned to any dataset's answers; matching
forms are folded like every other word (`lsrep.text.fold`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from lsrep.text import fold

GROUPS: tuple[str, ...] = (
    "live home settle reside relocate move flat apartment",
    "work job company employer firm office career colleague hire employ",
    "instrument > guitar piano banjo violin cello drums flute ukulele saxophone trumpet",
    "wedding marry married bride groom",
    "pet > dog cat puppy kitten adopt",
    "class course lesson workshop",
    "destress relax unwind calm stress",
    "kids children child childhood",
    "kids > son daughter",
    "trip travel vacation holiday",
    "exercise workout gym fitness",
    "hobby pastime",
    "favorite favourite love fave fan",
    "recommend suggest suggestion",
    "music > song jam track tune",
    "feel feeling felt emotion",
    "book novel read",
    "paint painting artwork",
    "gift present gave",
)
"""Each group is either symmetric ("a b c": any word gives any other) or a head with its kinds
("instrument > guitar piano": the head is given by a kind, "guitar" is not given by "piano" —
kinds of one thing are different answers, never the same word)."""


_NOMINAL = re.compile(r"^(?:(\w{3,}[cp]t)ion|(\w{3,}at)ion|(\w{5,})ment)$")
"""A noun made from a verb ("rejection", "education", "improvement") and the verb's forms ("rejected",
"educated", "improved") match: the question and the evidence rarely use the same part of speech. Stems
are long enough that "station" is not "state" and "moment" nothing at all."""


@lru_cache(maxsize=1 << 16)
def verbal(key: str) -> str:
    """The matching form of a folded word, a noun made from a verb read as that verb."""
    m = _NOMINAL.match(key)
    return fold(next(g for g in m.groups() if g)) if m else key


@lru_cache(maxsize=1)
def _table() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for group in GROUPS:
        if ">" in group:
            head, kinds = group.split(">")
            table.setdefault(verbal(fold(head.strip())), set()).update(verbal(fold(w)) for w in kinds.split())
            continue
        words = {verbal(fold(w)) for w in group.split()}
        for w in words:
            table.setdefault(w, set()).update(words - {w})
    return {w: frozenset(v) for w, v in table.items()}


def related(key: str) -> frozenset[str]:
    """The matching forms related to one matching form (empty when it is in no group)."""
    return _table().get(key, frozenset())


def matched(bag: frozenset[str], wanted: frozenset[str]) -> frozenset[str]:
    """The question words `wanted` that a sentence's words `bag` give, directly or by a related word."""
    return frozenset(q for q in wanted if q in bag or bag & related(q))


def witnesses(bag: frozenset[str], wanted: frozenset[str]) -> frozenset[str]:
    """The sentence words that give a question word (the word itself or a related one)."""
    return frozenset(t for t in bag if t in wanted or any(t in related(q) for q in wanted))
