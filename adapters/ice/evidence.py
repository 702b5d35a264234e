"""Which turns a summary fragment carries, decided by content rather than by its batch list.

ICE stores a batch summary with the ids of all the batch's turns (20 by default), but the
summary text (the offline extractive one keeps the first sentence of each user turn, capped
at 600 characters) carries only some of them. Counting every batch turn as cited evidence
inflated ICE's evidence recall. A turn is carried when the summary holds its content:

- one of its sentences with at least `MIN_SENTENCE_WORDS` content words has at least
  `SENTENCE_COVERAGE` of them in the summary, or
- at least `TURN_COVERAGE` of all its content words are in the summary.

Words are ICE's own content words (`lsrep.systems.ice.text`), compared as stems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from lsrep.systems.ice.text import sentences, stems

MIN_SENTENCE_WORDS = 3
SENTENCE_COVERAGE = 0.8
TURN_COVERAGE = 0.5


@lru_cache(maxsize=1 << 14)
def _turn_stems(content: str) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    # A turn's stems and its sentences' stems: the same turns are checked against summary after
    # summary, query after query (re-stemming them was half of ICE's query time at 2k turns).
    return frozenset(stems(content)), tuple(frozenset(stems(s)) for s in sentences(content))


def carries(summary_stems: set[str] | frozenset[str], content: str) -> bool:
    """Whether a summary (its stems) carries a turn's content (see the module docstring)."""
    whole, parts = _turn_stems(content)
    if not whole:
        return False
    if len(whole & summary_stems) >= TURN_COVERAGE * len(whole):
        return True
    for own in parts:
        if len(own) >= MIN_SENTENCE_WORDS and len(own & summary_stems) >= SENTENCE_COVERAGE * len(own):
            return True
    return False


@lru_cache(maxsize=1 << 12)  # keys hold the turns' texts: bounded so a host's memory stays small
def _carried(summary_text: str, listed: tuple[tuple[str, str | None], ...]) -> tuple[str, ...]:
    summary_stems = frozenset(stems(summary_text))
    return tuple(t for t, content in listed if content is not None and carries(summary_stems, content))


def carried_turns(summary_text: str, turn_ids: Sequence[str], contents: Mapping[str, str]) -> tuple[str, ...]:
    """The listed turns whose content the summary text carries, in the listed order."""
    # Keyed by the texts themselves, so a cached answer is the answer for these exact contents.
    return _carried(summary_text, tuple((t, contents.get(t)) for t in turn_ids))
