"""Sentences that ask, for the offline answerer: the answer is in the reply, or around the question.

A sentence ending in "?" states nothing: when it is the best match ("Is that your third one?"),
the answer is in the reply to it (the next line, said by someone else), or, when no reply is in
the context, in what its own line states around it ("I do- Oscar, my guinea pig. ... How are your
pets?").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

_ADDRESSED = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.I)


def asks(text: str) -> bool:
    """The sentence asks (ends in a question mark)."""
    return text.rstrip(" \"'”’)").endswith("?")


def answered_by(best: Any, sentences: Sequence[Any], rank: Callable[[Any], tuple]) -> Any:
    """The sentence answering an asking `best`: the best-ranked sentence of the reply (the next line, by
    another speaker) when the context holds one, else the best-ranked stating sentence of its own line
    when `best` asks the listener ("How are your pets?") or a stating sentence there matches too, else
    `best` itself (a tag question states: "Sunflowers mean warmth, right?"). `rank(sentence)` orders
    candidates (highest first; ties go to the one nearest `best`, then the earlier)."""
    after = [s for s in sentences if s.order > best.order and s.line != best.line]
    if after:
        nxt = after[0].line
        reply = [s for s in after if s.line == nxt and not asks(s.text)]
        if reply and (reply[0].speaker or "") != (best.speaker or "") and all(s.line == nxt for s in reply):
            return max(reply, key=lambda s: (*rank(s), -abs(s.order - best.order)))
    own = [s for s in sentences if s.line == best.line and not asks(s.text)]
    if own and (_ADDRESSED.search(best.text) or any(rank(s)[0] > 0 for s in own)):
        return max(own, key=lambda s: (*rank(s), -abs(s.order - best.order), -s.order))
    return best
