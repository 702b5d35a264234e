"""Paraphrased leaks: future content carried without verbatim n-grams (reworded, reordered).

Shingle provenance (:mod:`lsrep.provenance`) proves a leak by copied word sequences; a system
that rewords or reorders a turn not yet replayed leaves none. What survives a paraphrase are its
*distinctive content tokens*: names, numbers and rare words, which rewording keeps. The evidence
used here is positive only: a fragment carries at least `MIN_TOKENS` distinct content tokens that

- occur in no replayed turn (never said up to the checkpoint),
- occur somewhere later in the trajectory, first in one and the same later turn, and
- are distinctive: said in at most `RARE_MAX_TURNS` turns of the whole trajectory.

Words the system brings itself (labels such as "visited", "summary", "person") either never occur
in the trajectory, so they are ignored, or they are common words that do not all first occur in one
later turn. The thresholds were tuned to 0 alarms on every built-in system on the bundled campaigns
and the 7 shared LoCoMo conversations (docs/integrity.md), and catch the zoo's paraphrasing and
reordering future-leakers (tests/integrity/zoo.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter

MIN_TOKENS = 3
"""Distinct never-said distinctive tokens, all first said in one later turn, that prove a leak."""
RARE_MAX_TURNS = 3
"""A token said in at most this many turns of the trajectory is distinctive."""


class TokenFirsts:
    """For every content token of a trajectory: the first turn that says it, and in how many turns."""

    def __init__(self, turn_tokens: Sequence[Iterable[str]]) -> None:
        self.first: dict[str, int] = {}
        self.turns: dict[str, int] = {}
        for pos, toks in enumerate(turn_tokens):
            for t in set(toks):
                self.first.setdefault(t, pos)
                self.turns[t] = self.turns.get(t, 0) + 1

    @classmethod
    def from_unigrams(cls, unigrams: Mapping[str, Sequence[int]]) -> TokenFirsts:
        """The same, from each token's turns (ascending, each once): read off at C speed."""
        firsts = cls(())
        where = unigrams.values()
        firsts.first = dict(zip(unigrams, map(itemgetter(0), where), strict=True))
        firsts.turns = dict(zip(unigrams, map(len, where), strict=True))
        return firsts

    def settled(self, tokens: Iterable[str]) -> int:
        """The prefix length from which every token of the text that the trajectory says has been said."""
        return max((self.first[t] + 1 for t in tokens if t in self.first), default=0)

    def leak(self, tokens: Iterable[str], prefix_len: int) -> tuple[int, int] | None:
        """(position of the later turn, tokens first said there) when the evidence proves a leak."""
        by_turn: dict[int, int] = {}
        for t in set(tokens):
            first = self.first.get(t)
            if first is not None and first >= prefix_len and self.turns[t] <= RARE_MAX_TURNS:
                by_turn[first] = by_turn.get(first, 0) + 1
        if not by_turn:
            return None
        turn, n = max(by_turn.items(), key=lambda kv: (kv[1], -kv[0]))
        return (turn, n) if n >= MIN_TOKENS else None
