"""Full-haystack BM25 over a trajectory prefix: the harness's own ranking reference point.

THALIA's Inspector narrows the transcript to a few windows before anything is ranked; the
seed measured the cost as Inspector window recall against full-haystack ranking hit@10
(seed-systems T-1). This module computes the second number independently of any system:
Okapi BM25 (k1 = 1.5, b = 0.75) over every stored turn said before the checkpoint, lower-cased
`[a-z0-9]+` tokens, ties broken by turn order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

K1, B = 1.5, 0.75
_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Haystack:
    """The turns of one trajectory in replay order, ready to rank any prefix of them."""

    def __init__(self, turns: Iterable[Mapping[str, Any]]) -> None:
        ordered = sorted(turns, key=lambda t: t["idx"])
        self.ids = [t["turn_id"] for t in ordered]
        self.bags = [Counter(tokens(t["content"] or "")) for t in ordered]
        self.lengths = [sum(b.values()) for b in self.bags]
        self._df: dict[int, Counter] = {}

    def _doc_freq(self, prefix: int) -> Counter:
        if prefix not in self._df:
            df: Counter = Counter()
            for bag in self.bags[:prefix]:
                df.update(bag.keys())
            self._df[prefix] = df
        return self._df[prefix]

    def scores(self, query: str, prefix: int) -> list[tuple[str, float]]:
        """(turn id, BM25 score) of every matching turn among the first `prefix`, best first,
        ties in turn order."""
        prefix = min(prefix, len(self.bags))
        if prefix <= 0:
            return []
        df = self._doc_freq(prefix)
        avg = sum(self.lengths[:prefix]) / prefix or 1.0
        terms = [t for t in dict.fromkeys(tokens(query)) if df.get(t)]
        idf = {t: math.log(1 + (prefix - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        scored = []
        for i in range(prefix):
            bag, n = self.bags[i], self.lengths[i]
            s = 0.0
            for t in terms:
                f = bag.get(t, 0)
                if f:
                    s += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * n / avg))
            if s > 0:
                scored.append((-s, i))
        scored.sort()
        return [(self.ids[i], -s) for s, i in scored]

    def top(self, query: str, prefix: int, k: int = 10) -> list[str]:
        """Turn ids of the k best BM25 matches among the first `prefix` turns (score > 0 only)."""
        return [tid for tid, _s in self.scores(query, prefix)[:k]]
