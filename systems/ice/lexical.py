"""Exact FTS5 bm25 top-k that scores only the turns that can reach the top k.

`EpisodicStore.lexical_search` is defined as

    SELECT turn_id ... WHERE turns_fts MATCH '"w1" OR "w2" ...' [AND topic = ?]
    ORDER BY bm25(turns_fts), rowid LIMIT k

and FTS5 computes bm25 for every matching turn before it sorts, so a query's cost grows with
the history even when a rare word decides the top k. `LexicalIndex` keeps FTS5's own tokens of
every turn (read from the FTS5 index through `fts5vocab`, and for new turns from a scratch FTS5
table with the same tokenizer) as per-term postings, and returns the same ids in the same order:

- the score of a turn is FTS5's bm25 (sqlite/ext/fts5/fts5_aux.c, `fts5Bm25Function`), computed
  with the same double operations in the same order: per phrase i, in query order,
  `score += idf[i] * ((f[i] * (k1 + 1)) / (f[i] + k1 * (1 - b + b * D / avgdl)))`, with
  `idf = log((N - n + 0.5) / (n + 0.5))` (1e-6 when <= 0), N the turns, n the turns the phrase
  occurs in, D the turn's token count, avgdl the mean; bm25 = -score, ties by rowid;
- max-score cut: a phrase contributes strictly less than `idf * (k1 + 1)`. Phrases are taken
  in falling order of that bound; once the k-th best full score among the turns holding one of
  the taken phrases exceeds the sum of the other phrases' bounds, no other turn can enter the
  top k (its score is below that sum), so only the taken phrases' postings are scored.

Multi-token phrases (`"caroline's"` is the phrase `carolin s`) are matched on the stored token
sequences; their postings are cached and extended with new turns only.
"""

from __future__ import annotations

import math
import sqlite3

import numpy as np

K1 = 1.2
B = 0.75
BOUND_MARGIN = 1e-9
"""Relative slack on the max-score bound (the bound is strict; this covers rounding)."""


class _Postings:
    """Positions (storage order) of the turns holding a term or phrase, and how often."""

    __slots__ = ("pos", "tf", "n")

    def __init__(self) -> None:
        self.pos = np.zeros(4, dtype=np.int64)
        self.tf = np.zeros(4, dtype=np.float64)
        self.n = 0

    def append(self, position: int, freq: int) -> None:
        if self.n == self.pos.shape[0]:
            self.pos = np.concatenate([self.pos, np.zeros(self.n, dtype=np.int64)])
            self.tf = np.concatenate([self.tf, np.zeros(self.n, dtype=np.float64)])
        self.pos[self.n] = position
        self.tf[self.n] = freq
        self.n += 1

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pos[:self.n], self.tf[:self.n]


class Tokenizer:
    """FTS5's `porter unicode61` tokens of a text, from a scratch in-memory FTS5 table."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute("CREATE VIRTUAL TABLE s USING fts5(content, tokenize='porter unicode61')")
        self.conn.execute("CREATE VIRTUAL TABLE s_i USING fts5vocab(s, 'instance')")
        self._memo: dict[str, tuple[str, ...]] = {}

    def tokens(self, text: str) -> tuple[str, ...]:
        self.conn.execute("INSERT INTO s (rowid, content) VALUES (1, ?)", (text,))
        out = tuple(r[0] for r in self.conn.execute("SELECT term FROM s_i ORDER BY offset"))
        self.conn.execute("DELETE FROM s WHERE rowid = 1")
        return out

    def phrase(self, word: str) -> tuple[str, ...]:
        """A query phrase's tokens, memoised (queries repeat their words)."""
        hit = self._memo.get(word)
        if hit is None:
            if len(self._memo) > 50_000:
                self._memo.clear()
            hit = self._memo[word] = self.tokens(word)
        return hit

    def close(self) -> None:
        self.conn.close()


class LexicalIndex:
    """Postings, token sequences, lengths and topics of every stored turn, in storage order."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.terms: dict[str, _Postings] = {}
        self.docs: list[tuple[str, ...]] = []
        self.ids: list[str] = []
        self.total_tokens = 0
        self._lengths = np.zeros(16, dtype=np.float64)
        self._topics = np.zeros(16, dtype=np.int64)
        self.topic_code: dict[str, int] = {}
        self._phrases: dict[tuple[str, ...], tuple[int, _Postings]] = {}
        """Multi-token phrase -> (turns scanned so far, its postings)."""

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def from_database(cls, conn: sqlite3.Connection, tokenizer: Tokenizer) -> LexicalIndex:
        """Read every turn's tokens from the FTS5 index itself (a temp `fts5vocab` table)."""
        index = cls(tokenizer)
        rows = conn.execute("SELECT rowid, turn_id, topic FROM turns ORDER BY rowid").fetchall()
        position = {r[0]: i for i, r in enumerate(rows)}
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.turns_fts_instance"
                     " USING fts5vocab(main, turns_fts, instance)")
        tokens: list[list[tuple[int, str]]] = [[] for _ in rows]
        for term, doc, offset in conn.execute("SELECT term, doc, offset FROM temp.turns_fts_instance"):
            tokens[position[doc]].append((offset, term))
        for (_rowid, turn_id, topic), toks in zip(rows, tokens, strict=True):
            toks.sort()
            index.add(turn_id, topic, tuple(t for _o, t in toks))
        return index

    def add(self, turn_id: str, topic: str, tokens: tuple[str, ...]) -> None:
        n = len(self.ids)
        if n == self._lengths.shape[0]:
            self._lengths = np.concatenate([self._lengths, np.zeros(n, dtype=np.float64)])
            self._topics = np.concatenate([self._topics, np.zeros(n, dtype=np.int64)])
        self._lengths[n] = len(tokens)
        self._topics[n] = self.topic_code.setdefault(topic, len(self.topic_code))
        self.ids.append(turn_id)
        self.docs.append(tokens)
        self.total_tokens += len(tokens)
        counts: dict[str, int] = {}
        for t in tokens:
            counts[t] = counts.get(t, 0) + 1
        for t, f in counts.items():
            post = self.terms.get(t)
            if post is None:
                post = self.terms[t] = _Postings()
            post.append(n, f)

    # -- phrases -----------------------------------------------------------------------------
    def _phrase_postings(self, phrase: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        if len(phrase) == 1:
            post = self.terms.get(phrase[0])
            return post.view() if post is not None else (np.zeros(0, np.int64), np.zeros(0))
        scanned, post = self._phrases.get(phrase, (0, None))
        if post is None:
            post = _Postings()
        first = self.terms.get(phrase[0])
        if first is not None and scanned < len(self.ids):
            pos, _tf = first.view()
            m = len(phrase)
            for p in pos[np.searchsorted(pos, scanned):].tolist():
                doc = self.docs[p]
                f = sum(1 for s in range(len(doc) - m + 1) if doc[s:s + m] == phrase)
                if f:
                    post.append(p, f)
        self._phrases[phrase] = (len(self.ids), post)
        return post.view()

    # -- search ------------------------------------------------------------------------------
    def search(self, words: list[str], k: int, topic: str | None) -> list[str]:
        """The top k turn ids of the OR query over `words`, exactly as FTS5's bm25 orders them."""
        n_docs = len(self.ids)
        if k <= 0 or n_docs == 0:
            return []
        code = None
        if topic:
            code = self.topic_code.get(topic)
            if code is None:
                return []
        avgdl = float(self.total_tokens) / float(n_docs)
        phrases = []  # (query order, idf, positions, tfs)
        for order, word in enumerate(words):
            pos, tf = self._phrase_postings(self.tokenizer.phrase(word))
            n_hit = int(pos.shape[0])
            if n_hit == 0:
                continue  # matches nothing: adds 0.0 to every score
            idf = math.log((n_docs - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            phrases.append((order, idf, pos, tf))
        if not phrases:
            return []
        bounds = {p[0]: p[1] * (K1 + 1.0) for p in phrases}
        # Rarest-first: highest bound first, then the shorter postings.
        by_bound = sorted(phrases, key=lambda p: (-bounds[p[0]], p[2].shape[0], p[0]))
        lengths = self._lengths[:n_docs]
        topics = self._topics[:n_docs]
        # Turns the answer may come from: once every one of them is a candidate, the
        # candidates hold every match (a query whose words are everywhere: score them all once).
        scope = n_docs if code is None else int(np.count_nonzero(topics == code))
        # The candidates are the turns holding a taken phrase: marked per turn as phrases are
        # taken (the sorted positions `np.unique` of the postings gives, without sorting them).
        held = np.full(n_docs, False)
        marked = 0
        for taken in range(1, len(by_bound) + 1):
            rest = math.fsum(bounds[p[0]] for p in by_bound[taken:])
            final = taken == len(by_bound)
            if not final and math.fsum(bounds[p[0]] for p in by_bound[:taken]) <= rest * (
                    1.0 + BOUND_MARGIN):
                continue  # the cut cannot hold yet: every score is below its phrases' bounds
            for p in by_bound[marked:taken]:
                held[p[2]] = True
            marked = taken
            cand = np.flatnonzero(held)
            if code is not None:
                cand = cand[topics[cand] == code]
            last = final or cand.shape[0] == scope
            if not last and cand.shape[0] < k:
                continue
            scores = self._scores(phrases, cand, lengths, avgdl)
            best = top_k_stable(scores, k)
            if last:
                return [self.ids[i] for i in cand[best]]
            kth = scores[best[-1]]
            if best.shape[0] == k and kth > rest * (1.0 + BOUND_MARGIN):
                return [self.ids[i] for i in cand[best]]
        raise AssertionError("unreachable: the last round scores every match")

    @staticmethod
    def _scores(phrases, cand: np.ndarray, lengths: np.ndarray, avgdl: float) -> np.ndarray:
        """FTS5's bm25 score (before the sign flip) of each candidate, phrases in query order."""
        if cand.shape[0] * 4 >= lengths.shape[0]:
            # Most turns are candidates: add each phrase's share over its postings, in the
            # same order (every turn's sum is the same sequence of additions).
            norm_all = K1 * (1 - B + B * lengths / avgdl)
            full = np.zeros(lengths.shape[0], dtype=np.float64)
            for _order, idf, pos, tf in phrases:
                full[pos] += idf * ((tf * (K1 + 1.0)) / (tf + norm_all[pos]))
            return full[cand]
        score = np.zeros(cand.shape[0], dtype=np.float64)
        if cand.shape[0] == 0:
            return score
        d = lengths[cand]
        norm = K1 * (1 - B + B * d / avgdl)
        for _order, idf, pos, tf in phrases:
            at = np.searchsorted(pos, cand)
            at_c = np.minimum(at, pos.shape[0] - 1)
            hit = pos[at_c] == cand
            if not hit.any():
                continue
            f = tf[at_c[hit]]
            score[hit] += idf * ((f * (K1 + 1.0)) / (f + norm[hit]))
        return score


def top_k_stable(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest scores, best first, ties in position order.

    The same result as `np.argsort(-scores, kind="stable")[:k]` without sorting everything:
    every score above the k-th best, then the earliest of those equal to it.
    """
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= scores.size:
        return np.argsort(-scores, kind="stable")
    kth = np.partition(scores, scores.size - k)[scores.size - k]
    above = np.flatnonzero(scores > kth)
    ties = np.flatnonzero(scores == kth)[:k - above.size]
    chosen = np.concatenate([above, ties])
    chosen.sort()
    return chosen[np.argsort(-scores[chosen], kind="stable")]
