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

from lsrep.systems.ice.text import sentences, stems

MIN_SENTENCE_WORDS = 3
SENTENCE_COVERAGE = 0.8
TURN_COVERAGE = 0.5


def carries(summary_stems: set[str], content: str) -> bool:
    """Whether a summary (its stems) carries a turn's content (see the module docstring)."""
    whole = stems(content)
    if not whole:
        return False
    if len(whole & summary_stems) >= TURN_COVERAGE * len(whole):
        return True
    for sentence in sentences(content):
        own = stems(sentence)
        if len(own) >= MIN_SENTENCE_WORDS and len(own & summary_stems) >= SENTENCE_COVERAGE * len(own):
            return True
    return False


def carried_turns(summary_text: str, turn_ids: Sequence[str], contents: Mapping[str, str]) -> tuple[str, ...]:
    """The listed turns whose content the summary text carries, in the listed order."""
    summary_stems = stems(summary_text)
    return tuple(t for t in turn_ids if t in contents and carries(summary_stems, contents[t]))
