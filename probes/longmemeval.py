"""LongMemEval (oracle, S, M; original and cleaned) read as one trajectory per question.

The files are one JSON array of question records (S is ~270 MB, M several GB),
so they are read as a stream: :func:`iter_json_records` decodes one record at a
time from a buffered file, and memory stays near the size of one record.

Decisions:

- **Sessions** are replayed in date order (``haystack_dates`` are not sorted in
  oracle files; ties keep file order). They are renamed ``s001``, ``s002``, ...
  in that order and turns ``s001:t000``, ...: the official session ids
  (``answer_a25d4a91_1``) say which sessions hold the answer, and an adapter
  sees session and turn ids. The trajectory id is ``lme-`` plus a hash of the
  question id, because the id's ``_abs`` suffix would reveal abstention.
- **Timestamps.** Dates (``"2023/05/20 (Sat) 02:21"``) are read as UTC. A
  session's first turn is at its date, each next turn one minute later,
  compressed to whole seconds to stay before the next session (or before the
  question, for the last session); see :func:`probes.native.session_turn_times`.
- **Checkpoint.** One, at ``question_date``. Where the question is dated before
  the last turn (``gpt4_70e84552_abs`` has a session 21 minutes after its
  question), the checkpoint is moved to the last turn, since simulated time may
  not run backwards; the item's ``notes`` say so and ``question_date`` keeps the
  original.
- **Probe.** Id = question id, category = question type. LongMemEval asks once,
  at the end: ``ask_at`` is the last turn. ``_abs`` questions are ``abstention``
  probes; the others are ``current`` probes with one version valid from the
  first turn (the benchmark gives no turn where the answer became true).
- **Gold** (``has_answer``, ``answer_session_ids``) lives only in
  :class:`GoldLabels`, for retrieval metrics. Turns carry role and content
  only, and the probe's version names no evidence.
- **Alternatives.** An answer ending in ``(or ...)`` (``"25 minutes and 50
  seconds (or 25:50)"``) keeps the whole text as the version's answer (what the
  official judge is shown) and gets each alternative as an alias (``"25 minutes
  and 50 seconds"``, ``"25:50"``), so the deterministic judge accepts either.
- **Corpus ids** for LongMemEval's retrieval metrics are built as the official
  ``process_item_flat_index`` builds them (see :mod:`lsrep.longmemeval_metrics`):
  one per user turn, in file order, in :attr:`GoldLabels.corpus_ids`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsrep.probes.native import session_turn_times
from pydantic import BaseModel, ConfigDict, ValidationError

from lsrep.errors import InputError, pydantic_reason
from lsrep.longmemeval_metrics import turn_corpus_id
from lsrep.protocol.models import Probe, ReferenceVersion, Trajectory, Turn

QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
)
"""The official question types (kept as the probe category; others pass through)."""

_DATE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$"
)
_CHUNK = 1 << 20
# A decode error this close to the end of the buffer may be a record cut by the read.
_TAIL_SLACK = 16


class GoldLabels(BaseModel):
    """Benchmark labels for one question, for the harness's retrieval metrics only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question_id: str
    """The official question id."""
    answer: str
    """The official answer text (for abstention questions, the explanation)."""
    answer_session_ids: tuple[str, ...]
    """Official ids of the sessions holding the answer, as in the file."""
    answer_sessions: tuple[str, ...]
    """The same sessions by their trajectory session ids."""
    evidence_turn_ids: tuple[str, ...]
    """Trajectory turn ids whose source turn has ``has_answer: true``."""
    session_id_map: dict[str, str]
    """Trajectory session id -> official haystack session id."""
    corpus_ids: tuple[str, ...] = ()
    """Official turn-level corpus ids (user turns, haystack file order)."""
    corpus_turns: tuple[str, ...] = ()
    """The trajectory turn id of each corpus item (same order)."""
    user_target: bool = False
    """Some user turn has ``has_answer``: the official run_retrieval.py averages only such questions."""


@dataclass(frozen=True)
class LongMemEvalItem:
    """One LongMemEval question as a trajectory, a probe, a checkpoint time and gold labels."""

    question_id: str
    """The official question id."""
    question_type: str
    """The official question type (also the probe's category)."""
    trajectory_id: str
    """Neutral trajectory id (``lme-`` + 12 hex digits of SHA-256 of the question id)."""
    trajectory: tuple[Turn, ...]
    """The haystack's turns in replay order."""
    probe: Probe
    """The question, asked once after the last turn."""
    question_date: datetime
    """``question_date`` as given."""
    checkpoint_time: datetime
    """Simulated time of the one checkpoint: ``question_date``, or the last turn's if later."""
    gold: GoldLabels
    """Labels for retrieval metrics; never given to an adapter."""
    notes: tuple[str, ...] = ()
    """Data quirks met while converting this record."""

    def as_trajectory(self, conversation: str = "sessions") -> Trajectory:
        """The turns as a validated :class:`Trajectory`.

        ``conversation="sessions"`` keeps the haystack sessions; ``"single"`` replays
        the same turns (same ids and times) as one session, ``s1``.
        """
        turns = self.trajectory
        if conversation == "single":
            turns = tuple(t.model_copy(update={"session_id": "s1"}) for t in turns)
        elif conversation != "sessions":
            raise ValueError(f"unknown conversation mode {conversation!r} (sessions or single)")
        return Trajectory(trajectory_id=self.trajectory_id, turns=turns)


def iter_longmemeval(
    path: Path | str, *, question_ids: Collection[str] | None = None
) -> Iterator[LongMemEvalItem]:
    """Stream the questions of a LongMemEval file (optionally only those named)."""
    path = Path(path)
    for number, line, record in iter_json_records(path):
        if not isinstance(record, dict):
            raise InputError(path, f"record {number} is not an object", line)
        if question_ids is not None and record.get("question_id") not in question_ids:
            continue
        try:
            yield item_from_record(record)
        except (KeyError, TypeError, ValueError) as exc:
            reason = pydantic_reason(exc) if isinstance(exc, ValidationError) else str(exc)
            if isinstance(exc, KeyError):
                reason = f"missing field {exc}"
            name = record.get("question_id", "?")
            raise InputError(path, f"record {number} ({name}): {reason}", line) from None


def parse_date(text: str) -> datetime:
    """Parse a LongMemEval date such as ``"2023/05/20 (Sat) 02:21"`` (as UTC)."""
    return _parse_date(str(text))


@lru_cache(maxsize=4096)
def _parse_date(text: str) -> datetime:
    match = _DATE.match(text)
    if match is None:
        raise ValueError(f"unrecognised LongMemEval date {text!r}")
    year, month, day, hour, minute, second = match.groups()
    return datetime(
        int(year), int(month), int(day), int(hour), int(minute), int(second or 0), tzinfo=UTC
    )


def _turn(turn_id: str, session_id: str, when: datetime, role: str, content: str) -> Turn:
    """`Turn(...)` for the values this module builds, without validating them again per turn.

    Every field is already of its type here (ids built above, never empty; `when` an aware
    datetime from `session_turn_times`; role and content `str(...)` of the file's values), so the
    only rule left to check is a non-empty role; anything else goes through `Turn(...)`, which
    raises the file's error as before (tests/probes/test_longmemeval_loader.py compares both)."""
    if role and type(when) is datetime and when.utcoffset() is not None:
        return Turn.model_construct(turn_id=turn_id, session_id=session_id, timestamp=when, role=role,
                                    content=content)
    return Turn(turn_id=turn_id, session_id=session_id, timestamp=when, role=role, content=content)


def item_from_record(record: dict[str, Any]) -> LongMemEvalItem:
    """Convert one official question record."""
    question_id = str(record["question_id"])
    sessions = record["haystack_sessions"]
    dates = record["haystack_dates"]
    source_ids = [str(s) for s in record["haystack_session_ids"]]
    if not len(sessions) == len(dates) == len(source_ids):
        raise ValueError(
            f"haystack_sessions ({len(sessions)}), haystack_dates ({len(dates)}) and "
            f"haystack_session_ids ({len(source_ids)}) differ in length"
        )
    question_date = parse_date(record["question_date"])
    starts = [parse_date(d) for d in dates]
    order = sorted(range(len(sessions)), key=lambda i: starts[i])
    width = max(3, len(str(len(order))))
    notes: list[str] = []

    turns: list[Turn] = []
    evidence: list[str] = []
    corpus: list[tuple[int, int, str, str]] = []  # (file session, turn index, corpus id, turn id)
    session_map: dict[str, str] = {}
    shifted = 0
    for position, source in enumerate(order):
        session_id = f"s{position + 1:0{width}d}"
        session_map[session_id] = source_ids[source]
        start = starts[source]
        if turns and start < turns[-1].timestamp:
            shifted += 1
            start = turns[-1].timestamp
        following = starts[order[position + 1]] if position + 1 < len(order) else question_date
        raw_turns = sessions[source]
        times = session_turn_times(
            start, len(raw_turns), next_start=following if following > start else None
        )
        for number, (raw, when) in enumerate(zip(raw_turns, times, strict=True)):
            turn_id = f"{session_id}:t{number:03d}"
            turns.append(_turn(turn_id, session_id, when, str(raw["role"]), str(raw["content"])))
            if raw.get("has_answer") is True:
                evidence.append(turn_id)
            if raw["role"] == "user":
                corpus.append((source, number, turn_corpus_id(source_ids[source], number,
                                                              raw.get("has_answer") is True), turn_id))
    if not turns:
        raise ValueError("the haystack has no turns")
    if shifted:
        notes.append(f"{shifted} session(s) dated within the previous session's turns were moved "
                     "to its last turn")

    checkpoint_time = question_date
    if turns[-1].timestamp > question_date:
        checkpoint_time = turns[-1].timestamp
        notes.append(
            f"question_date {question_date.isoformat()} precedes the last turn "
            f"({turns[-1].timestamp.isoformat()}); checkpoint moved to the last turn"
        )

    answer_ids = tuple(str(s) for s in record.get("answer_session_ids", ()))
    absent = [s for s in answer_ids if s not in source_ids]
    if absent:
        notes.append(f"answer_session_ids not in the haystack: {absent}")
    answer = str(record["answer"])
    gold = GoldLabels(
        question_id=question_id,
        answer=answer,
        answer_session_ids=answer_ids,
        answer_sessions=tuple(s for s, src in session_map.items() if src in answer_ids),
        evidence_turn_ids=tuple(evidence),
        session_id_map=session_map,
        corpus_ids=tuple(c[2] for c in sorted(corpus)),
        corpus_turns=tuple(c[3] for c in sorted(corpus)),
        user_target=any(t in evidence for t in (c[3] for c in corpus)),
    )
    question_type = str(record["question_type"])
    return LongMemEvalItem(
        question_id=question_id,
        question_type=question_type,
        trajectory_id="lme-" + hashlib.sha256(question_id.encode()).hexdigest()[:12],
        trajectory=tuple(turns),
        probe=_probe(question_id, question_type, str(record["question"]), answer, turns),
        question_date=question_date,
        checkpoint_time=checkpoint_time,
        gold=gold,
        notes=tuple(notes),
    )


def _probe(question_id: str, question_type: str, question: str, answer: str, turns: list[Turn]) -> Probe:
    last = (turns[-1].turn_id,)
    if question_id.endswith("_abs"):
        return Probe(
            probe_id=question_id, question=question, kind="abstention",
            category=question_type, ask_at=last,
        )
    version = ReferenceVersion(answer=answer, aliases=answer_alternatives(answer),
                               valid_from=turns[0].turn_id)
    return Probe(
        probe_id=question_id, question=question, kind="current", category=question_type,
        before_first="skip", references=(version,), ask_at=last,
    )


_OR = re.compile(r"^(?P<main>.*?\S)\s*\(\s*or\s+(?P<alts>[^()]+?)\s*\)\s*\.?\s*$", re.IGNORECASE)


def answer_alternatives(answer: str) -> tuple[str, ...]:
    """The alternatives of an answer written ``"X (or Y)"`` (or ``"X (or Y, or Z)"``): X, Y, Z."""
    match = _OR.match(answer)
    if match is None:
        return ()
    alts = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", match["alts"])
    return tuple(dict.fromkeys(a for a in (match["main"], *alts) if a))


def iter_json_records(path: Path | str, *, chunk_size: int = _CHUNK) -> Iterator[tuple[int, int, Any]]:
    """Stream the elements of a top-level JSON array as ``(index, line, value)``.

    Also reads JSON Lines (objects one after another). Memory stays near the
    largest element plus ``chunk_size``: each element is decoded with the
    standard decoder from a buffer that grows (doubling) only while the element
    is incomplete and is cut back after it.
    """
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    with handle:
        try:
            yield from _records(path, _Buffer(handle, chunk_size))
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from None


def _records(path: Path, reader: _Buffer) -> Iterator[tuple[int, int, Any]]:
    """The array (or JSON Lines) walk behind :func:`iter_json_records`."""
    decoder = json.JSONDecoder()
    first = reader.peek()
    if first is None:
        raise InputError(path, "file is empty")
    in_array = first == "["
    if in_array:
        reader.pos += 1
    elif first != "{":
        raise InputError(path, "expected a JSON array of question records", reader.line())
    count = 0
    while True:
        char = reader.peek()
        if in_array:
            if char is None:
                raise InputError(path, "file ends inside the array (missing ']')", reader.line())
            if char == "]":
                reader.pos += 1
                if reader.peek() is not None:
                    raise InputError(path, "content after the closing ']'", reader.line())
                return
            if count:
                if char != ",":
                    raise InputError(path, f"expected ',' or ']' after record {count - 1}", reader.line())
                reader.pos += 1
                if reader.peek() is None:
                    raise InputError(path, "file ends inside the array (missing ']')", reader.line())
        elif char is None:
            return
        line = reader.line()
        value = reader.decode(decoder, path, count, line)
        yield count, line, value
        count += 1
        reader.compact()


class _Buffer:
    """A text window over a file for element-at-a-time decoding."""

    def __init__(self, handle: Any, chunk_size: int) -> None:
        self.handle = handle
        self.chunk_size = chunk_size
        self.text = ""
        self.pos = 0
        self.eof = False
        self.lines_before = 0

    def fill(self, size: int) -> bool:
        if self.eof:
            return False
        more = self.handle.read(size)
        if not more:
            self.eof = True
            return False
        self.compact()
        self.text += more
        return True

    def peek(self) -> str | None:
        """The next non-blank character (not consumed), or None at the end."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            self.compact()
            if not self.fill(self.chunk_size):
                return None

    def line(self) -> int:
        return self.lines_before + self.text.count("\n", 0, self.pos) + 1

    def compact(self) -> None:
        self.lines_before += self.text.count("\n", 0, self.pos)
        self.text = self.text[self.pos :]
        self.pos = 0

    def decode(self, decoder: json.JSONDecoder, path: Path, index: int, line: int) -> Any:
        size = self.chunk_size
        while True:
            try:
                value, end = decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(self.text) - _TAIL_SLACK
                if cut and self.fill(size):
                    size = max(size, len(self.text))  # double the window: linear total work
                    continue
                raise InputError(path, f"record {index}: invalid JSON: {exc.msg}", line) from None
            # A bare number that ends at the buffer's end may continue in the next chunk.
            if end == len(self.text) and not isinstance(value, dict | list) and self.fill(size):
                continue
            self.pos = end
            return value
