"""Recall's per-page index: the candidates `select` scores, without scoring every fact.

The plain rule (`recall.plain_candidates`) scores every fact of every activated page at every
query: `a * (0.5 + 0.5 * coverage)`, coverage the share of the query's terms among the fact's
terms, future/expired/withheld facts dropped, all sorted by (-score, fact id). Per page, every fact
that shares no term with the query gets the same score, `a * 0.5`, so the candidates of a page are
its few matching facts (found through an inverted index term → fact ids) and, after them or mixed
with them by that key, the rest of its facts in fact-id order (a sorted id list walked lazily).
Future and expired facts are found through the facts sorted by date; withheld facts are a set.

`IndexPool` yields exactly the plain rule's candidates, in its order, with its scores (the same
float expression), lazily: the per-subject cap stops reading a subject's stream once it is full,
and phase 2 reads each subject's procedural facts first from their own stream. It requires fact
ids to be unique over the memory (the plain rule's order for two facts with one id depends on
page order); `Memoire.unique_ids` says so, and `select` falls back to the plain rule otherwise.
`tests/systems/exia_seed/test_exia_recall_index.py` compares both on randomized memories.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from .pages import Fact
from .text import term_set

GROUPS = ("all", "procedural", "other")


def _group(fact: Fact) -> str:
    return "procedural" if fact.section == "procedural" else "other"


def _dated(fact: Fact) -> str:
    """`is_future(fact, today)` holds exactly when this is > today ("" never is)."""
    return max(fact.event or "", fact.said or "")


def _due(fact: Fact) -> str:
    """`is_expired(fact, today)` holds exactly when this is non-empty and < today."""
    return fact.until or "" if fact.type == "prospective" else ""


def _indexed(fact: Fact) -> tuple:
    """Every field the index reads: a fact whose line changed in nothing else keeps its entries."""
    return fact.text, fact.section, fact.said, fact.event, fact.until, fact.type, fact.privacy


class PageIndex:
    """One page's facts by id, by term, by group in id order, by date, by deadline, by privacy."""

    __slots__ = ("by_id", "terms", "ids", "dated", "due", "private")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self.by_id: dict[str, Fact] = {}
        self.terms: dict[str, list[str]] = {}
        self.ids: dict[str, list[str]] = {g: [] for g in GROUPS}
        self.dated: list[tuple[str, str]] = []
        self.due: list[tuple[str, str]] = []
        self.private: set[str] = set()
        facts = list(facts)
        for fact in facts:
            self.by_id[fact.id] = fact
            for term in term_set(fact.text):
                self.terms.setdefault(term, []).append(fact.id)
            if d := _dated(fact):
                self.dated.append((d, fact.id))
            if d := _due(fact):
                self.due.append((d, fact.id))
            if fact.privacy in ("confidential", "private"):
                self.private.add(fact.id)
        self.ids["all"] = sorted(self.by_id)
        for g in GROUPS[1:]:
            self.ids[g] = sorted(f.id for f in facts if _group(f) == g)
        self.dated.sort()
        self.due.sort()

    def derive(self, removed: list[Fact], added: list[Fact]) -> PageIndex:
        """The index of this page with `removed` facts gone and `added` ones in (this one unchanged).

        A fact rewritten with only unindexed fields changed (`superseded_by`, refs, ...) keeps its
        entries; any other removal rebuilds the page's index."""
        new_by_id = {f.id: f for f in added}
        if len(new_by_id) != len(added):
            return PageIndex([*self._after(removed), *added])
        swapped = {}
        for old in removed:
            new = new_by_id.get(old.id)
            if new is None or _indexed(new) != _indexed(old) or self.by_id.get(old.id) is not old:
                return PageIndex([*self._after(removed), *added])
            swapped[old.id] = new
        out = PageIndex.__new__(PageIndex)
        out.by_id = dict(self.by_id)
        out.by_id.update(swapped)
        out.terms = dict(self.terms)
        out.ids = dict(self.ids)
        out.dated, out.due, out.private = self.dated, self.due, self.private
        fresh = [f for f in added if f.id not in swapped]
        if any(f.id in out.by_id for f in fresh):  # an id already on the page: rebuild
            return PageIndex([*self._after(removed), *added])
        copied: set[str] = set()
        for fact in fresh:
            out.by_id[fact.id] = fact
            for term in term_set(fact.text):
                if term not in copied:
                    out.terms[term] = list(out.terms.get(term, ()))
                    copied.add(term)
                out.terms[term].append(fact.id)
            for g in ("all", _group(fact)):
                if out.ids[g] is self.ids[g]:
                    out.ids[g] = list(self.ids[g])
                insort(out.ids[g], fact.id)
            if d := _dated(fact):
                if out.dated is self.dated:
                    out.dated = list(self.dated)
                insort(out.dated, (d, fact.id))
            if d := _due(fact):
                if out.due is self.due:
                    out.due = list(self.due)
                insort(out.due, (d, fact.id))
            if fact.privacy in ("confidential", "private"):
                if out.private is self.private:
                    out.private = set(self.private)
                out.private.add(fact.id)
        return out

    def _after(self, removed: list[Fact]) -> list[Fact]:
        gone = {id(f) for f in removed}
        return [f for f in self.by_id.values() if id(f) not in gone]

    def future(self, today: str) -> list[str]:
        """Ids of the facts `is_future` drops today."""
        return [fid for _d, fid in self.dated[bisect_right(self.dated, (today, "\U0010ffff")):]]

    def expired(self, today: str) -> list[str]:
        """Ids of the facts `is_expired` drops today."""
        return [fid for d, fid in self.due[: bisect_left(self.due, (today, ""))] if d]


@dataclass
class _Node:
    """One activated page's candidates: matching facts scored, the rest at the base score."""

    slug: str
    index: PageIndex
    hits: dict[str, int]
    """Fact id → how many of the query's terms it has, for the kept facts that have any."""
    scores: dict[int, float]
    """Terms matched → score (0: the base score of every kept fact sharing no term)."""
    excluded: set[str]
    """Filtered out today (future, expired) or withheld."""
    count: int

    def stream(self, group: str = "all") -> Iterator[tuple[float, str]]:
        """(−score, fact id) of this page's candidates of a group, in the plain rule's order."""
        skip_matched, skip_out, neg = self.hits, self.excluded, -self.scores[0]
        rest = ((neg, fid) for fid in self.index.ids[group] if fid not in skip_matched and fid not in skip_out)
        return heapq.merge(self._matched(group), rest)

    def _matched(self, group: str) -> Iterator[tuple[float, str]]:
        hits, scores = self.hits, self.scores
        if group != "all":
            by_id = self.index.by_id
            hits = {fid: k for fid, k in hits.items() if _group(by_id[fid]) == group}
        counts = sorted(set(hits.values()), reverse=True)
        if all(scores[a] > scores[b] for a, b in zip(counts, counts[1:], strict=False)):
            # More terms, strictly higher score: facts by count, then id; each count's facts are
            # picked and sorted only when the reader gets that far.
            for k in counts:
                neg = -scores[k]
                for fid in sorted([fid for fid, n in hits.items() if n == k]):
                    yield neg, fid
        else:  # scores that round together (a tiny activation): one sort by the plain key
            yield from sorted((-scores[k], fid) for fid, k in hits.items())


def _tagged(node: _Node) -> Iterator[tuple[float, str, str]]:
    slug = node.slug
    return ((neg, fid, slug) for neg, fid in node.stream())


class IndexPool:
    """Candidates of a selection from the pages' indexes (see the module docstring)."""

    def __init__(self) -> None:
        self.nodes: list[_Node] = []

    def add(self, slug: str, index: PageIndex, level: float, terms: set[str], excluded: set[str]) -> int:
        """Add an activated page; return how many candidates it brings."""
        hits: dict[str, int] = Counter(chain.from_iterable(index.terms.get(t, ()) for t in terms))
        for fid in excluded:
            hits.pop(fid, None)
        n = len(terms)
        # The plain rule's expression: coverage = matched terms / terms (0.0 without terms).
        scores = {k: level * (0.5 + 0.5 * (k / n if terms else 0.0)) for k in {0, *hits.values()}}
        count = len(index.by_id) - len(excluded)
        self.nodes.append(_Node(slug, index, hits, scores, excluded, count))
        return count

    @property
    def count(self) -> int:
        return sum(node.count for node in self.nodes)

    def ordered(self) -> Iterator[tuple[float, str, str]]:
        """Every candidate as (−score, fact id, slug), best first."""
        return heapq.merge(*(_tagged(node) for node in self.nodes))

    def capped(self, cap: int) -> Iterator[tuple[float, str, str]]:
        """`ordered()` without the candidates of a subject once `cap` of its candidates were taken.

        The consumer must take every yielded candidate (the per-subject count is kept here)."""
        heap: list[tuple[float, str, int]] = []
        streams = [node.stream() for node in self.nodes]
        taken = [0] * len(self.nodes)
        if cap <= 0:
            return
        for i, stream in enumerate(streams):
            first = next(stream, None)
            if first is not None:
                heap.append((first[0], first[1], i))
        heapq.heapify(heap)
        while heap:
            neg, fid, i = heap[0]
            yield neg, fid, self.nodes[i].slug
            taken[i] += 1
            following = next(streams[i], None) if taken[i] < cap else None
            if following is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (following[0], following[1], i))

    def top(self, slug: str, n: int) -> list[tuple[float, str]]:
        """A subject's first `n` candidates by (not procedural, −score, fact id)."""
        out: list[tuple[float, str]] = []
        for node in self.nodes:
            if node.slug != slug:
                continue
            for group in ("procedural", "other"):
                for item in node.stream(group):
                    if len(out) >= n:
                        return out
                    out.append(item)
        return out
