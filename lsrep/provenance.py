"""Content provenance: where the text of a returned fragment comes from, decided by content.

A fragment cites turns (`source_turn_ids`), but a citation is the adapter's claim. This
module checks the claim against the text. Every turn of the trajectory is indexed once
(word shingles over normalised content tokens, each shingle with the positions of the
turns that contain it, so the first position is where it was first said); a fragment's
shingles are then looked up and compared with the checkpoint's prefix:

- **proven leak**: at least `LEAK_MIN_SHINGLES` of the fragment's shingles were never said
  in the replayed prefix and first occur in one and the same later turn — text copied from
  a turn not yet replayed, whatever the fragment cites (derived text included);
- **unsourced**: a fragment that is not declared derived (see `DERIVED_KINDS`) and whose
  shingles are mostly (`SOURCED_MIN_SHARE`) absent from every replayed turn;
- **misattributed**: a fragment citing turns, whose text matches turns but mostly
  (`ATTRIBUTED_MIN_SHARE`) not the ones it cites.

Normalisation makes rendering prefixes transparent on both sides: dates and times are
removed, tokens that are speaker names or roles of the trajectory are removed, and
stopwords are removed, so "[2026-03-02 09:00] Ana (user): text" and "text" give the same
shingles. The thresholds and how they were tuned (zero alarms on every built-in system on
the bundled campaigns and the shared LoCoMo conversations) are in docs/integrity.md.

Cost: indexing is linear in the trajectory; a fragment's analysis is cached by its text,
and its verdict by (text, prefix, citations), so a context returned again at the same
checkpoint costs a dictionary lookup.
"""

from __future__ import annotations

import codecs
import concurrent.futures as cf
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import filterfalse
from typing import Any

from lsrep.paraphrase import TokenFirsts
from lsrep.postings import NgramPostings
from lsrep.text import STOPWORDS, normalise_answer

SHINGLE = 3
"""Shingle length in normalised content tokens (shorter texts use one shingle of their length)."""
LEAK_MIN_SHINGLES = 2
"""Shingles first said in one later turn (and never in the prefix) that prove a leak."""
SOURCED_MIN_SHARE = 0.5
"""A non-derived fragment is sourced when at least this share of its shingles was said in the prefix."""
ATTRIBUTED_MIN_SHARE = 0.5
"""A citing fragment is attributed when at least this share of its matched shingles is in a cited turn."""
CITED_WORDS_MIN_SHARE = 0.8
"""...or when it cites at most `CITED_WORDS_MAX_TURNS` turns and this share of its distinct words
occur in them (clauses of one turn re-joined); citing many turns cannot buy that pass."""
CITED_WORDS_MAX_TURNS = 3
MIN_TOKENS = 2
"""Fragments with fewer normalised content tokens carry too little text to judge."""
COPY_MIN_SHARE = 0.5
"""Evidence: a turn's content is in the context when this share of its shingles is..."""
COMMON_POSTINGS = 32
"""Shingles said in more turns than this ("thanks", "sounds great") are not tied to a turn when
ranking the best-matching turn; evidence presence still counts them."""
SENTENCE_MIN_TOKENS = 4
"""...or when one of its sentences with at least this many content tokens is there whole."""
CARRIED_MIN_WORDS = 2
"""Citation precision: a fragment carries a cited turn's content when it shares at least this many
distinct content words with the turn (fewer if the fragment has fewer), leaving out words said in
more than `COMMON_POSTINGS` turns, or when the turn's content is in it as evidence counts it."""

DERIVED_KINDS: frozenset[str] = frozenset({
    "summary", "summaries", "fact", "facts", "derived", "extracted", "profile", "reflection", "insight",
    "slot", "note", "notes",
})
"""Fragment kinds that declare derived text (summaries, extracted facts): exempt from
`unsourced`, still checked for leaks and misattribution. A fragment may also declare itself
derived whatever its kind (`Fragment.derived = True`), see `is_derived`."""


def is_derived(fragment) -> bool:
    """Whether a fragment declares derived text: `derived = True`, or a kind in `DERIVED_KINDS`."""
    return bool(getattr(fragment, "derived", False)) or fragment.kind in DERIVED_KINDS

_DATED_GROUP = re.compile(r"[\[(][^\[\]()\n]*?\d{4}-\d{2}-\d{2}[^\[\]()\n]*[\])]")
"""A bracketed or parenthesised group holding a date: rendering metadata ("(source: turn 8, 2023-05-08)")."""
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)
_TOKEN = re.compile(r"[a-z0-9]+")
_ASCII_PARTS = bytes(c if chr(c).isascii() and (chr(c).isdigit() or "a" <= chr(c) <= "z")
                     else 10 if chr(c) in ".!?;:\n" else 32 for c in range(256))
"""`_TOKEN`'s characters kept, the segment marks `.!?;:` and line breaks made line breaks, every other
byte a space (`segments`)."""
_DIGIT_SEP = re.compile(r"\d[-:]\d")
"""A date or a time holds a digit, a dash or colon, a digit: texts without one skip both substitutions."""


def rendering_tokens(speakers: Iterable[str | None], roles: Iterable[str]) -> frozenset[str]:
    """Tokens adapters add when they render a turn (speaker names and roles)."""
    out: set[str] = set()
    for value in (*speakers, *roles):
        if value:
            out.update(_TOKEN.findall(value.lower()))
    return frozenset(out)


def segments(text: str, drop: frozenset[str] = frozenset()) -> tuple[tuple[str, ...], ...]:
    """Content tokens per sentence-like segment: lowercase alphanumerics without dated groups,
    dates, times, stopwords or `drop`; empty segments left out."""
    memo = _segment_memo(drop)
    skip = memo.skip
    text = text.lower()
    if ("-" in text or ":" in text) and _DIGIT_SEP.search(text):  # dates and times need digits beside '-' or ':'
        text = _DATETIME.sub(" ", _DATED_GROUP.sub(" ", text))
    # The split at C speed: segment marks become line breaks, every other character but [a-z0-9]
    # a space (a run of non-ASCII characters too: none is a token's or a segment mark's, `_TOKEN`,
    # `_ASCII_PARTS`); then a segment's tokens are its whitespace-separated words, split and filtered
    # once per distinct segment (`_SegmentMemo`).
    raw = text.encode("ascii") if text.isascii() else text.encode("ascii", _NON_ASCII_AS_SPACE)
    out = []
    get, skipped = memo.get, skip.__contains__
    for part in raw.translate(_ASCII_PARTS).decode("ascii").split("\n"):
        toks = get(part)
        if toks is None:
            toks = tuple(filterfalse(skipped, part.split()))  # a tenth faster than a comprehension
            if len(memo) < SEGMENT_MEMO_MAX:
                memo[part] = toks
        if toks:
            out.append(toks)
    return tuple(out)


def _space_for_non_ascii(error: UnicodeEncodeError) -> tuple[str, int]:
    """Codec error handler: a run of characters ASCII cannot encode becomes one space."""
    return " ", error.end


_NON_ASCII_AS_SPACE = "lsrep.non_ascii_as_space"
codecs.register_error(_NON_ASCII_AS_SPACE, _space_for_non_ascii)


@lru_cache(maxsize=64)
def _skip_set(drop: frozenset[str]) -> frozenset[str]:
    return STOPWORDS | drop


SEGMENT_MEMO_MAX = 2048
"""Distinct segment texts a memo holds (2.6 MB when full of 15-word segments said once); once full
it keeps them, and a segment not in it is split each time (emptying and refilling it cost text
without repeats a third more)."""


class _SegmentMemo(dict):
    """An ASCII segment's text (translated: `[a-z0-9]` and spaces) -> its content tokens, for one
    set of dropped tokens (`skip`: those and the stopwords). Conversations repeat their segments
    ("good question", a template's sentences, a fragment that is a turn's copy): each distinct one
    is split and filtered once."""

    def __init__(self, skip: frozenset[str]) -> None:
        super().__init__()
        self.skip = skip


@lru_cache(maxsize=8)
def _segment_memo(drop: frozenset[str]) -> _SegmentMemo:
    return _SegmentMemo(_skip_set(drop))


def normalise(text: str, drop: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """All content tokens of a text in order (its segments joined)."""
    return tuple(t for seg in segments(text, drop) for t in seg)


def shingles(segs: Sequence[Sequence[str]], size: int = SHINGLE) -> tuple[tuple[str, ...], ...]:
    """Distinct word shingles in order of first appearance, never across a segment boundary;
    a segment shorter than `size` is one shingle of its length."""
    out: dict[tuple[str, ...], None] = {}
    for toks in segs:
        n = min(size, len(toks))
        for i in range(len(toks) - n + 1):
            out[tuple(toks[i:i + n])] = None
    return tuple(out)


@dataclass(frozen=True)
class TextAnalysis:
    """A text's shingles with the turn positions that contain each (cached per text)."""

    n_tokens: int
    tokens: tuple[str, ...]
    positions: tuple[tuple[int, ...], ...]
    """For each shingle, the sorted positions of the turns containing it (empty: said nowhere)."""
    grams: tuple[tuple[str, ...], ...]
    gram_set: frozenset[tuple[str, ...]]
    """The same shingles as a set (evidence presence: which of a turn's shingles the text holds)."""
    settled: int
    """The prefix length from which every matched shingle has been said (later prefixes judge
    the text the same way, so verdicts are cached under min(prefix, settled))."""


@dataclass(frozen=True)
class FragmentVerdict:
    """Content provenance of one fragment at one checkpoint."""

    shingles: int
    """Shingles judged (0: too short to judge)."""
    sourced_share: float | None
    """Share of shingles said in the replayed prefix."""
    leak_turn: int | None
    """Position of the later turn the text was copied from (a proven leak), else None."""
    leak_shingles: int
    """Shingles first said in that later turn."""
    unsourced: bool
    misattributed: bool
    best_turn: int | None
    """Replayed turn sharing the most shingles with the text, among the turns up to the one that
    completed it (None: no match)."""
    leak_evidence: str = ""
    """What proves the leak: `shingles` (copied word sequences) or `tokens` (a paraphrase: the
    distinctive words of one later turn, see `lsrep.paraphrase`); empty when there is none."""

    @property
    def leak(self) -> bool:
        return self.leak_turn is not None


_BUILDER = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsrep-turn-index")


class TurnIndex:
    """Every turn of a trajectory, shingled once, with its position."""

    def __init__(self, contents: Sequence[str], drop: frozenset[str] = frozenset(), size: int = SHINGLE) -> None:
        self.size = size
        self.drop = drop
        self.contents = tuple(contents)
        # Every n-gram up to `size` inside a segment, posted once per turn in turn order: built
        # eagerly for 1-grams, and for longer n-grams on first lookup (`lsrep.postings`): a context's
        # fragments look up a few thousand n-grams, where the trajectory holds ~100 per turn.
        self.postings = NgramPostings([segments(content, drop) for content in self.contents], size)
        # Per-turn shingle sets, sentences and words are needed only for the turns a check asks
        # about (evidence, cited turns): built on first use.
        self.turn_grams = _PerTurn(self, self.turn_shingles)
        self.turn_sentences = _PerTurn(self, self.turn_sentence_shingles)
        self.turn_tokens = _PerTurn(self, self.turn_words)
        # Only for the turns a check asks about; a turn's segments are kept for its other views.
        self._segs: dict[int, tuple[tuple[str, ...], ...]] = {}
        self._grams: dict[int, frozenset[tuple[str, ...]]] = {}
        self._sentences: dict[int, tuple[frozenset[tuple[str, ...]], ...]] = {}
        self._turn_words: dict[int, frozenset[str]] = {}
        self.firsts = TokenFirsts(self.postings.unigrams)
        self._analyses: dict[str, TextAnalysis] = {}
        self._answer_texts: dict[str, str] = {}
        self._contexts: dict[tuple[str, ...], tuple[str, list[TextAnalysis], frozenset]] = {}
        self.fragment_cache: dict[tuple, tuple] = {}
        self.context_cache: dict[tuple, tuple] = {}
        """Per (text, citations, kind): what `context_audit` needs to judge it at any prefix."""
        self.last_context: tuple | None = None
        """The last context `context_audit` judged: (its fragments, prefix, texts, judgement)."""
        self.turn_order: tuple | None = None
        """(turn index mapping, its length, its ids by position): `context_audit._turn_order`."""
        self._verdicts: dict[tuple[str, int, tuple[int, ...], bool], FragmentVerdict] = {}

    @classmethod
    def of_turns(cls, turns: Sequence) -> TurnIndex:
        """Index protocol turns (anything with content, speaker and role)."""
        drop = rendering_tokens((t.speaker for t in turns), (t.role for t in turns))
        return cls([t.content for t in turns], drop)

    @classmethod
    def in_background(cls, turns: Sequence) -> cf.Future:
        """`of_turns` in a worker thread, for a caller that waits on another process meanwhile."""
        return _BUILDER.submit(cls.of_turns, turns)

    def __len__(self) -> int:
        return len(self.contents)

    def _turn_segments(self, pos: int) -> tuple[tuple[str, ...], ...]:
        segs = self._segs.get(pos)
        if segs is None:
            segs = self._segs[pos] = segments(self.contents[pos], self.drop)
        return segs

    def turn_shingles(self, pos: int) -> frozenset[tuple[str, ...]]:
        """Turn `pos`'s shingles (cached)."""
        hit = self._grams.get(pos)
        if hit is None:
            hit = self._grams[pos] = frozenset(shingles(self._turn_segments(pos), self.size))
        return hit

    def turn_sentence_shingles(self, pos: int) -> tuple[frozenset[tuple[str, ...]], ...]:
        """The shingles of each of turn `pos`'s sentences of `SENTENCE_MIN_TOKENS` or more content
        tokens (cached; built only where a turn's shingle share alone does not decide)."""
        hit = self._sentences.get(pos)
        if hit is None:
            hit = self._sentences[pos] = tuple(frozenset(shingles([toks], self.size))
                                               for toks in self._turn_segments(pos)
                                               if len(toks) >= SENTENCE_MIN_TOKENS)
        return hit

    def turn_words(self, pos: int) -> frozenset[str]:
        """Turn `pos`'s content tokens (cached; citation checks ask for the words of every cited turn)."""
        words = self._turn_words.get(pos)
        if words is None:
            words = self._turn_words[pos] = frozenset(t for seg in self._turn_segments(pos) for t in seg)
        return words

    def analyse(self, text: str) -> TextAnalysis:
        hit = self._analyses.get(text)
        if hit is None:
            segs = segments(text, self.drop)
            toks = tuple(t for seg in segs for t in seg)
            grams = shingles(segs, self.size)
            empty: list[int] = []
            positions = tuple(tuple(self.postings.get(g, empty)) for g in grams)
            settled = max(max((where[0] + 1 for where in positions if where), default=0),
                          self.firsts.settled(toks))
            hit = TextAnalysis(len(toks), toks, positions, grams, frozenset(grams), settled)
            if len(self._analyses) > 200_000:
                self._analyses.clear()
            self._analyses[text] = hit
        return hit

    def answer_text(self, text: str) -> str:
        """`normalise_answer(text)`, cached (answer-in-context checks search it)."""
        hit = self._answer_texts.get(text)
        if hit is None:
            if len(self._answer_texts) > 200_000:
                self._answer_texts.clear()
            hit = self._answer_texts[text] = normalise_answer(text)
        return hit

    def context_view(self, texts: tuple[str, ...]) -> tuple[str, list[TextAnalysis], frozenset]:
        """A whole context normalised for answer search, its texts' analyses and the union of their
        shingles (cached: the same context is returned to every probe of a checkpoint by many systems)."""
        hit = self._contexts.get(texts)
        if hit is None:
            if len(self._contexts) > 256:
                self._contexts.clear()
            answer_text, analyse = self.answer_text, self.analyse
            haystack = f" {' '.join([answer_text(x) for x in texts])} "
            analyses = [analyse(x) for x in texts]
            hit = self._contexts[texts] = (haystack, analyses, frozenset().union(*[a.gram_set for a in analyses]))
        return hit

    def verdict(self, text: str, prefix_len: int, cited: Iterable[int] = (), derived: bool = False) -> FragmentVerdict:
        """Judge a fragment's text against the first `prefix_len` turns and the turns it cites."""
        cited_t = tuple(sorted(set(cited)))
        analysis = self.analyse(text)
        prefix_len = min(prefix_len, analysis.settled)
        key = (text, prefix_len, cited_t, derived)
        hit = self._verdicts.get(key)
        if hit is None:
            hit = self._judge(analysis, prefix_len, cited_t, derived)
            if len(self._verdicts) > 200_000:
                self._verdicts.clear()
            self._verdicts[key] = hit
        return hit

    def _judge(self, a: TextAnalysis, prefix_len: int, cited: tuple[int, ...], derived: bool) -> FragmentVerdict:
        if a.n_tokens < MIN_TOKENS:
            return FragmentVerdict(0, None, None, 0, False, False, None)
        cited_set = set(cited)
        past = matched = in_cited = 0
        future: dict[int, int] = {}
        per_turn: dict[int, int] = {}
        # Attribution is judged on full-length shingles when the text has any: a one- or two-word
        # segment ("visited:", "user (person)") is an extractor's label, said in many turns, and
        # says nothing about which turn the text came from.
        n_full = sum(len(g) >= self.size for g, where in zip(a.grams, a.positions, strict=True) if where)
        full = n_full > 0
        for gram, positions in zip(a.grams, a.positions, strict=True):
            if not positions:
                continue
            if not full or len(gram) >= self.size:
                matched += 1
                if cited_set and not cited_set.isdisjoint(positions):
                    in_cited += 1
            if positions[0] < prefix_len:
                past += 1
                if len(positions) <= COMMON_POSTINGS:
                    for p in positions:
                        if p >= prefix_len:
                            break
                        per_turn[p] = per_turn.get(p, 0) + 1
            else:
                future[positions[0]] = future.get(positions[0], 0) + 1
        total = len(a.positions)
        leak_turn, leak_n = None, 0
        if future:
            # The later turn most of the never-said text first appears in; ties to the earliest.
            turn, n = max(future.items(), key=lambda kv: (kv[1], -kv[0]))
            if n >= min(LEAK_MIN_SHINGLES, total) and (a.n_tokens > self.size or n == total):
                leak_turn, leak_n = turn, n
        evidence = "shingles" if leak_turn is not None else ""
        if leak_turn is None and (token_leak := self.firsts.leak(a.tokens, prefix_len)) is not None:
            (leak_turn, leak_n), evidence = token_leak, "tokens"
        share = past / total
        unsourced = not derived and leak_turn is None and share < SOURCED_MIN_SHARE
        if unsourced and 0 < len(cited) <= CITED_WORDS_MAX_TURNS:
            # Clauses of a cited turn re-joined ("X and Y"): its words are that turn's. (Citing a
            # turn not yet replayed is a proven leak on its own, checked by the caller.)
            words = set(a.tokens)
            said = set().union(*(self.turn_tokens[c] for c in cited))
            unsourced = len(words & said) < CITED_WORDS_MIN_SHARE * len(words)
        # Without a full-length shingle (labels and a one-word value, "likes: action") there is
        # too little text to say where it came from: not judged.
        misattributed = (bool(cited) and full and matched >= min(2, n_full)
                         and in_cited / matched < ATTRIBUTED_MIN_SHARE)
        best = max(per_turn.items(), key=lambda kv: (kv[1], -kv[0]))[0] if per_turn else None
        return FragmentVerdict(total, share, leak_turn, leak_n, unsourced, misattributed, best, evidence)

    # -- citations -----------------------------------------------------------------------------
    def carried(self, text: str, cited: Iterable[int]) -> tuple[int, ...]:
        """The cited turn positions whose content the text carries (see `CARRIED_MIN_WORDS`).

        Verbatim and derived text alike: an extracted fact carries the words of the turn it was
        extracted from, not those of the other turns of its session that an over-citing adapter
        names; a patched memory no longer carries the words the patch replaced."""
        wanted = sorted({c for c in cited if 0 <= c < len(self.turn_tokens)})
        if not wanted:
            return ()
        words = {t for t in self.analyse(text).tokens
                 if len(self.postings.get((t,), ())) <= COMMON_POSTINGS}
        need = min(CARRIED_MIN_WORDS, len(words))
        out = []
        for c in wanted:
            if need and len(words & self.turn_tokens[c]) >= need:
                out.append(c)
            elif self.turns_in_context([c], (text,)):
                out.append(c)
        return tuple(out)

    # -- evidence ------------------------------------------------------------------------------
    def turns_in_context(self, turns: Iterable[int], texts: tuple[str, ...]) -> set[int]:
        """The given turns whose content is in the context (by shingles, not by citation).

        A turn counts when at least `COPY_MIN_SHARE` of its shingles occur in the context's
        texts, or when all shingles of one of its sentences of `SENTENCE_MIN_TOKENS` or more
        content tokens do (an extracted sentence carries the turn's fact).
        """
        wanted = [t for t in turns if 0 <= t < len(self.turn_grams)]
        if not wanted or not texts:
            return set()
        # One text (a fragment's own check, `carried`): its shingles, without a context view.
        held = self.analyse(texts[0]).gram_set if len(texts) == 1 else self.context_view(texts)[2]
        present: set[int] = set()
        for t in wanted:
            grams = self.turn_grams[t]
            if not grams:
                continue
            found = grams & held
            if len(found) >= COPY_MIN_SHARE * len(grams) or any(sent <= found for sent in self.turn_sentences[t]):
                present.add(t)
        return present


class _PerTurn(Sequence):
    """One of a `TurnIndex`'s per-turn views (shingles, sentences or tokens) as a sequence, each
    turn's built on first use by `view`."""

    def __init__(self, index: TurnIndex, view: Callable[[int], Any]) -> None:
        self.index, self.view = index, view

    def __len__(self) -> int:
        return len(self.index.contents)

    def __getitem__(self, pos):
        if isinstance(pos, slice):
            return [self[i] for i in range(*pos.indices(len(self)))]
        if pos < 0:
            pos += len(self)
        if not 0 <= pos < len(self):
            raise IndexError(pos)
        return self.view(pos)


def duplicate_key(text: str, cited: Sequence[str], kind: str, index: TurnIndex) -> tuple | None:
    """What makes two fragments of one context duplicates: the same normalised text citing the
    same turns, of the same kind. The same words said in two turns, each cited, are not; nor is
    a memory bullet beside the raw turn it was made from (kinds differ), nor repeated scaffolding
    that cites nothing ("see also: ..."). None: not a citation, or too short to tell."""
    toks = index.analyse(text).tokens
    if len(toks) < MIN_TOKENS or not cited:
        return None
    return (toks, tuple(cited) if len(cited) < 2 else tuple(sorted(set(cited))), kind)


def cited_positions(ids: Iterable[str], index_of: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(index_of[t] for t in ids if t in index_of)
