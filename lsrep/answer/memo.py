"""The offline reader's sentences, and its per-fragment and per-sentence work memoised (issue #20).

A campaign asks the same questions against mostly the same fragments, checkpoint after checkpoint
(LoCoMo conv-26: 1,932 answers to 199 questions; full-context hands the same 256 turns to every
probe of a checkpoint, vector-RAG 30 of 406 distinct fragments to each). What the reader does to one
fragment, or to one sentence for one question, is memoised here; what it does across sentences
(weights, the best sentence, lists, counts, date arithmetic) is recomputed at every call from the
memoised parts (`lsrep.answer.extractive`).

Exact by construction: each memoised function is called with its key and nothing else, so what it
returns cannot depend on anything its key leaves out:

- `fragment_sentences(text)`, `fragment_view(text)`: a fragment's sentences (with the date of their
  own line, None where the line has none), its speakers' words and each sentence's words;
- `context(texts, today)`: a call's sentences in order (`Sentence`, an undated one dated `today`),
  their words, the speakers' words, and what is derived from them alone (`Context.derived`);
- `question_matches`: per fragment, the question words each of its sentences gives (`matched`), by
  line and counted (`matches`), kept by the fragment's text and the question's words; a sentence's
  hits by the question's words and those of its words that can give one (`_matched`: `matched`
  reads no other, a test checks it);
- `witnesses(bag, wanted)`: the sentence words that give a question word;
- `per_sentence(f)`: `f(kind, sentence, question)` of a sentence rebuilt from the key (its text,
  line, date and speaker; order 0: a span read from one sentence never depends on where it stands).

Bounded: least-recently-used caches of 8,192 fragment views (beside `fragment_sentences`' 16,384
texts), 16 contexts, 32,768 witness and match sets and 65,536 sentence spans, and the match tables
(`question_matches`) dropped whole past 131,072 (question, fragment) pairs, one dict slot each (equal
entries shared). Measured: 21 MB held after LoCoMo conv-26 under full-context (1,932 answers, 80k
pairs; tracemalloc). Everything is a function of its key, so results stay deterministic whatever
the order of calls or threads. `disabled()` bypasses the memo (tests compare answers with and without
it); `clear()` empties it. Functions of other modules memoised with `memoised` are covered by both:
the reader's analysis of a question alone (`extractive._question`, 4,096 questions) and a line's
namings (`bridge._named_in_line`, 16,384 (line, speakers) pairs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from functools import lru_cache, wraps
from typing import Any, NamedTuple, TypeVar

from lsrep.answer.related import matched as _matched_words
from lsrep.answer.related import related as _related_words
from lsrep.answer.related import witnesses as _witnesses
from lsrep.answer.words import keys

F = TypeVar("F", bound=Callable[..., Any])
EMPTY: frozenset[str] = frozenset()

_ENABLED = True
_CACHES: list[Any] = []


def memoised(maxsize: int) -> Callable[[F], F]:
    """An LRU cache of `maxsize` entries on a function of its (hashable) arguments, bypassed under `disabled()`."""

    def wrap(fn: F) -> F:
        cached = lru_cache(maxsize=maxsize)(fn)
        _CACHES.append(cached)

        @wraps(fn)
        def call(*key: Any) -> Any:
            return cached(*key) if _ENABLED else fn(*key)

        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        call.cached, call.fresh = cached, fn  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap


def clear() -> None:
    """Empty every cache of this module (the pre-existing `keys` and `fragment_sentences` too)."""
    global _tables, _shapes, _kept
    for cached in (*_CACHES, fragment_sentences, keys):
        cached.cache_clear()
    _tables, _shapes, _kept = {}, {}, 0


def held() -> int:
    """How many entries the memo holds now (every cache, and the match tables' pairs)."""
    return sum(c.cache_info().currsize for c in (*_CACHES, fragment_sentences, keys)) + _kept


@contextmanager
def disabled() -> Iterator[None]:
    """Within: every memoised function of this module computes afresh (for tests; not thread-local)."""
    global _ENABLED
    prior, _ENABLED = _ENABLED, False
    try:
        yield
    finally:
        _ENABLED = prior


class Sentence(NamedTuple):
    """One sentence of a call's context: its text, its line, its date, its speaker and its position.
    (A named tuple: a call builds one per sentence of its context, 203,444 in LoCoMo conv-26 under vector-RAG.)"""

    text: str
    line: str
    when: date
    speaker: str | None
    order: int


_LINE_HEAD = re.compile(
    r"^\s*\[(\d{4})-(\d{2})-(\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?)?(?:\s+(?P<inside>[^\]]{1,60}))?\]\s*"
    r"(?:(?P<who>[^:\[\]()]{1,60}?)\s*(?:\((?:user|assistant|system)\))?\s*:\s+)?")
_ANY_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


@lru_cache(maxsize=1 << 14)
def fragment_sentences(text: str) -> tuple[tuple[str, str, date | None, str | None], ...]:
    """(sentence, its line, its date or None for the simulated now, speaker) of one fragment's text.

    Memoised by the text: the same turns come back checkpoint after checkpoint, and nothing here
    depends on the probe (a line with no date of its own is dated by the caller's now)."""
    out: list[tuple[str, str, date | None, str | None]] = []
    last = None
    for raw in text.splitlines():
        head = _LINE_HEAD.match(raw)
        speaker = None
        body = raw
        if head:
            last = date(int(head.group(1)), int(head.group(2)), int(head.group(3)))
            speaker = (head.group("who") or head.group("inside") or "").strip() or None
            body = raw[head.end():]
        elif last is None:
            found = _ANY_DATE.search(text)
            if found:
                try:
                    last = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
                except ValueError:
                    last = None
        body = " ".join(body.replace("[", " ").replace("]", " ").split())
        if not body:
            continue
        out.extend((part.strip(), body, last, speaker) for part in _SENTENCE.split(body) if part.strip())
    return tuple(out)


class FragmentView(NamedTuple):
    """One fragment's sentences and what the reader reads of them whatever the question."""

    parts: tuple[tuple[str, str, date | None, str | None], ...]
    bags: tuple[frozenset[str], ...]
    """Each sentence's words with its speaker's (`keys`)."""
    names: frozenset[str]
    """The speakers' words."""
    lines: tuple[str, ...]
    """The distinct lines, in order of their first sentence."""
    line_of: tuple[int, ...]
    """Each sentence's line, as an index into `lines`."""
    columns: tuple[tuple, tuple, tuple, tuple]
    """`parts` by column: the sentences' texts, lines, dates (None: the caller's now) and speakers."""
    undated: bool
    """Some sentence has no date of its own."""


@memoised(1 << 13)
def fragment_view(text: str) -> FragmentView:
    parts = fragment_sentences(text)
    who = [keys(speaker) if speaker else EMPTY for _, _, _, speaker in parts]
    index: dict[str, int] = {}
    line_of = tuple(index.setdefault(line, len(index)) for _, line, _, _ in parts)
    columns = tuple(zip(*parts, strict=True)) if parts else ((), (), (), ())
    return FragmentView(parts, tuple(keys(p[0]) | w for p, w in zip(parts, who, strict=True)),
                        EMPTY.union(*who), tuple(index), line_of, columns, None in columns[2])


class Context:
    """A call's sentences in order, each sentence's words (`bags`), the speakers' words (`names`) and the
    distinct lines (in order of their first sentence)."""

    __slots__ = ("texts", "views", "starts", "sentences", "bags", "names", "lines", "_derived")

    def __init__(self, texts: tuple[str, ...], today: date) -> None:
        self.texts = texts
        self.views = tuple(map(fragment_view, texts))
        starts: list[int] = []
        said: list[str] = []
        lines: list[str] = []
        whens: list[date] = []
        speakers: list[str | None] = []
        bags: list[frozenset[str]] = []
        for view in self.views:
            starts.append(len(said))
            text, line, when, speaker = view.columns
            said += text
            lines += line
            whens += [w or today for w in when] if view.undated else when
            speakers += speaker
            bags += view.bags
        self.starts = tuple(starts)
        # Sentence(text, line, when or today, speaker, order), column by column.
        self.sentences = tuple(map(Sentence, said, lines, whens, speakers, range(len(said))))
        self.bags = tuple(bags)
        self.names = EMPTY.union(*{view.names for view in self.views})
        self.lines = tuple(dict.fromkeys(lines))
        self._derived: dict[str, Any] = {}

    def derived(self, name: str, build: Callable[[], Any]) -> Any:
        """`build()` once per context: `build` must read nothing but this context's sentences and words."""
        if name not in self._derived:
            self._derived[name] = build()
        return self._derived[name]


@memoised(16)
def context(texts: tuple[str, ...], today: date) -> Context:
    return Context(texts, today)


class Matches(NamedTuple):
    """The question words each sentence of one fragment gives (`lsrep.answer.related.matched`)."""

    hits: tuple[frozenset[str], ...]
    found: tuple[int, ...]
    """The sentences giving any word beyond the fragment's speakers' (a sentence giving only a speaker's
    name gives nothing beyond the context's speakers' either)."""
    line_hits: tuple[tuple[int, frozenset[str]], ...]
    """(line as an index into `FragmentView.lines`, the words its sentences give) of each line giving any."""
    counts: tuple[tuple[str, int], ...]
    """How many sentences give each question word."""


@memoised(1 << 12)
def _triggers(wanted: frozenset[str]) -> frozenset[str]:
    """The words that can give a question word: the words and their related ones."""
    return wanted.union(*(_related_words(q) for q in wanted))


@memoised(1 << 15)
def _matched(words: frozenset[str], wanted: frozenset[str]) -> frozenset[str]:
    return _matched_words(words, wanted)


def matches(view: FragmentView, wanted: frozenset[str]) -> Matches:
    """What `question_matches` keeps of one fragment for one question (a function of the two)."""
    if _ENABLED:
        # `matched` reads of a sentence's words only those that can give a question word (`_triggers`):
        # those few, most often only a speaker's name, decide it (tests/answer/test_memo.py checks it).
        triggers, given = _triggers.cached(wanted), _matched.cached  # type: ignore[attr-defined]
        hits = tuple(given(words, wanted) if (words := bag & triggers) else EMPTY for bag in view.bags)
    else:
        hits = tuple(_matched_words(bag, wanted) for bag in view.bags)
    found: list[int] = []
    line_hits: dict[int, frozenset[str]] = {}
    counts: dict[str, int] = {}
    for i, (hit, line) in enumerate(zip(hits, view.line_of, strict=True)):
        if hit:
            if not hit <= view.names:
                found.append(i)
            line_hits[line] = line_hits.get(line, EMPTY) | hit
            for t in hit:
                counts[t] = counts.get(t, 0) + 1
    return Matches(hits, tuple(found), tuple(line_hits.items()), tuple(counts.items()))


MAX_MATCHES = 1 << 17
"""(question, fragment) pairs kept (`question_matches`): past this, all are dropped and the tables start afresh."""
_tables: dict[frozenset[str], dict[str, Matches]] = {}
_shapes: dict[Matches, Matches] = {}
_kept = 0


def _table(wanted: frozenset[str]) -> dict[str, Matches]:
    """The matches of one question's words, by fragment text. A fragment's entry costs one dict slot: equal
    Matches are shared (`_shapes`; most fragments give a question nothing, or only a speaker's name)."""
    global _tables, _shapes, _kept
    if _kept > MAX_MATCHES:
        _tables, _shapes, _kept = {}, {}, 0
    table = _tables.get(wanted)
    if table is None:
        table = _tables[wanted] = {}
    return table


def question_matches(ctx: Context, wanted: frozenset[str]) -> tuple[
        list[frozenset[str]], dict[str, frozenset[str]], dict[str, int], list[int]]:
    """For a whole context: each sentence's hits, each line's (every line, in order of its first sentence),
    how many sentences give each question word, and the sentences giving any word beyond their fragment's
    speakers' (in order). Per fragment, `matches` is memoised by its text and the question's words."""
    global _kept
    hits = [EMPTY] * len(ctx.sentences)
    lines = dict.fromkeys(ctx.lines, EMPTY)
    df: dict[str, int] = {}
    found: list[int] = []
    table = _table(wanted) if _ENABLED else {}
    for text, view, start in zip(ctx.texts, ctx.views, ctx.starts, strict=True):
        m = table.get(text)
        if m is None:
            m = matches(view, wanted)
            if _ENABLED:
                m = table[text] = _shapes.setdefault(m, m)
                _kept += 1
        if not m.counts:
            continue  # nothing matched
        hits[start:start + len(m.hits)] = m.hits
        for k, hit in m.line_hits:
            line = view.lines[k]
            lines[line] = lines[line] | hit
        for t, count in m.counts:
            df[t] = df.get(t, 0) + count
        if m.found:
            found.extend([start + i for i in m.found])
    return hits, lines, df, found


witnesses = memoised(1 << 15)(_witnesses)


def per_sentence(fn: Callable[[str, Sentence, str], Any]) -> Callable[[str, Sentence, str], Any]:
    """Memoise `fn(kind, sentence, question)` by kind, question and the sentence's text, line, date and
    speaker; `fn` sees a sentence rebuilt from those (order 0), so its result is a function of the key."""

    @memoised(1 << 16)
    def keyed(kind: str, question: str, text: str, line: str, when: date, speaker: str | None) -> Any:
        return fn(kind, Sentence(text, line, when, speaker, 0), question)

    cached = keyed.cached  # type: ignore[attr-defined]

    @wraps(fn)
    def call(kind: str, s: Sentence, question: str) -> Any:
        if not _ENABLED:
            return fn(kind, s, question)
        return cached(kind, question, s.text, s.line, s.when, s.speaker)

    call.cache_info = keyed.cache_info  # type: ignore[attr-defined]
    return call
