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

MIN_TOKENS = 3
"""Distinct never-said distinctive tokens, all first said in one later turn, that prove a leak."""
RARE_MAX_TURNS = 3
"""A token said in at most this many turns of the trajectory is distinctive."""


class TokenFirsts:
    """For every content token of a trajectory: the first turn that says it, and in how many turns,
    read off its postings (the turns saying it, ascending, each once)."""

    def __init__(self, postings: Mapping[str, Sequence[int]]) -> None:
        self.postings = postings
        """Each token's turns, ascending, each once (a turn index's 1-gram postings, kept by reference)."""

    @classmethod
    def of_turn_tokens(cls, turn_tokens: Sequence[Iterable[str]]) -> TokenFirsts:
        """The postings built from each turn's tokens (the definition the turn index's equal)."""
        postings: dict[str, list[int]] = {}
        for pos, toks in enumerate(turn_tokens):
            for t in dict.fromkeys(toks):
                postings.setdefault(t, []).append(pos)
        return cls(postings)

    @property
    def first(self) -> dict[str, int]:
        """Each token's first turn (a table built on each access: for inspection and tests)."""
        return {t: where[0] for t, where in self.postings.items()}

    @property
    def turns(self) -> dict[str, int]:
        """In how many turns each token is said (built on each access, as `first`)."""
        return {t: len(where) for t, where in self.postings.items()}

    def settled(self, tokens: Iterable[str]) -> int:
        """The prefix length from which every token of the text that the trajectory says has been said."""
        return max((where[0] for where in map(self.postings.get, tokens) if where), default=-1) + 1

    def leak(self, tokens: Iterable[str], prefix_len: int) -> tuple[int, int] | None:
        """(position of the later turn, tokens first said there) when the evidence proves a leak."""
        by_turn: dict[int, int] = {}
        get = self.postings.get
        for t in set(tokens):
            where = get(t)
            if where and where[0] >= prefix_len and len(where) <= RARE_MAX_TURNS:
                by_turn[where[0]] = by_turn.get(where[0], 0) + 1
        if not by_turn:
            return None
        turn, n = max(by_turn.items(), key=lambda kv: (kv[1], -kv[0]))
        return (turn, n) if n >= MIN_TOKENS else None
