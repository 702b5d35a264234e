"""A turn index's n-gram postings, 1-grams built at once and longer n-grams on first lookup
(`lsrep.provenance.TurnIndex.postings`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, groupby

SET_MIN_POSTINGS = 64
"""An n-gram whose rarest word is said in more turns than this is looked up through the words'
posting sets (intersected in C) rather than by scanning the rarest word's turns."""
REPEATED_SEGMENTS = 4
"""Segments said this many times each on average (segments / distinct segments) make n-gram
lookups go through the distinct segments (`NgramPostings.by_segment`)."""


class NgramPostings(Mapping):
    """A turn index's n-gram postings: for each n-gram (n <= size) of a segment of some turn, the
    positions of the turns saying it inside one segment, ascending, each turn once.

    The 1-gram postings are built at once; an n-gram's are computed on first lookup and kept:
    the turns saying its rarest word, those whose segments hold the n-gram contiguously (each
    turn's segments are kept as one string, `" w1 w2 "` per segment, segments joined by a line
    break, so `" a b c "` is found exactly where the three words follow each other inside one
    segment). Iterating enumerates every n-gram in the order the eager build posted them (turn
    by turn, per segment n = 1..size) — what the tests compare with the definition.

    Where turns repeat their segments (`REPEATED_SEGMENTS`: templated or formulaic text), a lookup
    checks each distinct segment saying the rarest word once, and the n-gram's turns are those
    saying a segment that holds it (`by_segment`).
    """

    def __init__(self, segs: Sequence[tuple[tuple[str, ...], ...]], size: int) -> None:
        self.size = size
        self.unigrams: dict[str, list[int]] = {}
        get = self.unigrams.get
        for pos, turn in enumerate(segs):
            for tok in dict.fromkeys(chain.from_iterable(turn)):
                hit = get(tok)
                if hit is None:
                    self.unigrams[tok] = [pos]
                else:
                    hit.append(pos)
        # The n-gram texts are strings only (the token tuples are not kept: an M-sized trajectory
        # has ~5,000 turns); repeated segments are also kept once each, with their turns.
        distinct = set(chain.from_iterable(segs))
        self.by_segment = len(distinct) * REPEATED_SEGMENTS <= sum(map(len, segs))
        """Lookups go through the distinct segments: each with its `" w1 w2 "` text and the turns
        saying it (ascending, once), and each word with the distinct segments saying it."""
        if self.by_segment:  # each distinct segment spaced once
            self._spaced = spaced = {seg: f" {' '.join(seg)} " for seg in distinct}
            self.texts = ["\n".join(map(spaced.__getitem__, turn)) for turn in segs]
            self._seg_turns = _segment_turns(segs)
            self._word_segs: dict[str, list[tuple[str, ...]]] = {}
            for seg in self._seg_turns:
                for tok in dict.fromkeys(seg):
                    self._word_segs.setdefault(tok, []).append(seg)
        else:
            self.texts = ["\n".join([f" {' '.join(seg)} " for seg in turn]) for turn in segs]
        self._longer: dict[tuple[str, ...], list[int]] = {}
        self._word_sets: dict[str, frozenset[int]] = {}
        self.eager_cost = sum((k - n + 1) * c for k, c in _length_counts(segs) for n in range(2, min(size, k) + 1))
        # (summed per segment length: a trajectory's thousands of segments have a few dozen lengths)
        """The n-grams (n = 2..size) said in all turns, counted with repeats: the work of posting
        every one of them at once."""
        self.checks = 0
        """Turns (distinct segments, `by_segment`) checked for an n-gram on lookup so far; past
        `eager_cost` every n-gram is posted at once (`_post_all`), so lookups never cost more than
        twice the cheaper of the two ways."""
        self.eager = False

    def _sets(self, gram: tuple[str, ...]) -> frozenset[int]:
        """The positions of the turns saying every word of `gram` (each word's set kept)."""
        sets = []
        for tok in gram:
            hit = self._word_sets.get(tok)
            if hit is None:
                hit = self._word_sets[tok] = frozenset(self.unigrams[tok])
            sets.append(hit)
        sets.sort(key=len)
        return sets[0].intersection(*sets[1:])

    def get(self, gram, default=None):
        n = len(gram)
        if n == 1:
            hit = self.unigrams.get(gram[0])
            return default if hit is None else hit
        if not 1 < n <= self.size:
            return default
        hit = self._longer.get(gram)
        if hit is None:
            if self.eager:
                return default  # every n-gram said is posted
            if self.checks > self.eager_cost:
                self._post_all()
                return self.get(gram, default)
            lists = [self.unigrams.get(tok) for tok in gram]
            if None in lists:
                hit = []
            elif self.by_segment:
                hit = self._segment_lookup(gram)
            else:
                needle, texts = f" {' '.join(gram)} ", self.texts
                rarest = min(lists, key=len)
                if n > 2 and len(rarest) > SET_MIN_POSTINGS:
                    # A turn saying the n-gram says its two (n-1)-grams: the shorter of their
                    # postings (each computed once, shared by every n-gram they start or end).
                    rarest = min(self.get(gram[:-1], ()), self.get(gram[1:], ()), key=len)
                    if self.eager:  # posted meanwhile
                        return self.get(gram, default)
                elif len(rarest) > SET_MIN_POSTINGS:
                    # Only turns saying every word can say the n-gram: the words' posting sets
                    # intersected at C speed, then the few candidates checked in turn order.
                    rarest = sorted(self._sets(gram))
                self.checks += len(rarest)
                hit = [p for p in rarest if needle in texts[p]]
            if len(self._longer) > 200_000:
                self._longer.clear()
            self._longer[gram] = hit
        return hit if hit else default

    def _segment_lookup(self, gram: tuple[str, ...]) -> list[int]:
        """The turns saying a distinct segment that holds `gram` contiguously (its rarest word's
        distinct segments checked, each once)."""
        needle, spaced = f" {' '.join(gram)} ", self._spaced
        rarest = min([self._word_segs[tok] for tok in gram], key=len)
        self.checks += len(rarest)
        found = [seg for seg in rarest if needle in spaced[seg]]
        if len(found) == 1:
            return list(self._seg_turns[found[0]])
        return sorted(set().union(*[self._seg_turns[seg] for seg in found]))

    def _post_all(self) -> None:
        """Every n-gram (n = 2..size) of every turn's segments posted in one pass, as the lazy
        lookup finds them: the turns saying it contiguously inside one segment, ascending, once."""
        longer: dict[tuple[str, ...], list[int]] = {}
        get = longer.get
        for pos, text in enumerate(self.texts):
            for seg in text.split("\n") if text else ():
                toks = seg.split()
                for n in range(2, self.size + 1):
                    for i in range(len(toks) - n + 1):
                        gram = tuple(toks[i:i + n])
                        hit = get(gram)
                        if hit is None:
                            longer[gram] = [pos]
                        elif hit[-1] != pos:
                            hit.append(pos)
        self._longer, self._word_sets, self.eager = longer, {}, True

    def __getitem__(self, gram):
        hit = self.get(gram)
        if hit is None:
            raise KeyError(gram)
        return hit

    def _all_grams(self) -> Iterator[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for text in self.texts:
            segs = [tuple(seg.split()) for seg in text.split("\n")] if text else []
            for gram in chain.from_iterable(zip(*(toks[i:] for i in range(n)), strict=False)
                                            for toks in segs for n in range(1, self.size + 1)):
                if gram not in seen:
                    seen.add(gram)
                    yield gram

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return self._all_grams()

    def __len__(self) -> int:
        return sum(1 for _ in self._all_grams())


def _segment_turns(segs: Sequence[tuple[tuple[str, ...], ...]]) -> dict[tuple[str, ...], list[int]]:
    """Each distinct segment with the positions of the turns saying it, ascending, each once."""
    out: dict[tuple[str, ...], list[int]] = {}
    get = out.get
    for pos, turn in enumerate(segs):
        for seg in turn:
            hit = get(seg)
            if hit is None:
                out[seg] = [pos]
            elif hit[-1] != pos:
                hit.append(pos)
    return out


def _length_counts(segs: Sequence[tuple[tuple[str, ...], ...]]) -> list[tuple[int, int]]:
    """Each length of a segment in `segs` with how many segments have it (counted at C speed)."""
    return [(length, len(list(same))) for length, same in groupby(sorted(map(len, chain.from_iterable(segs))))]
