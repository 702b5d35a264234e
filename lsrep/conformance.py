"""A conformance suite any adapter can run: small checks of the contract, each with a verdict and a reason.

`run_conformance("vector-rag")` (or `lsrep adapters check NAME`) builds the adapter as the engine
does — `validate_condition` and `build_adapter`, a private state directory, the hashing embedder,
no model — replays a small synthetic conversation into fresh instances and checks what the harness
relies on but cannot enforce by construction.

A check with nothing to observe (the system recalled nothing it could judge) is `skipped` with the
reason, never passed. `info` reports a fact that is not a defect. Only `failed` fails the suite.
"""

from __future__ import annotations

import inspect
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lsrep.contract import (
    STAGES,
    FidelityEvent,
    MechanismSpec,
    MemoryAdapter,
    QueryResult,
    ReplayTurn,
    SnapshotNotSupported,
)
from lsrep.embed.hashing import HashingEmbedder
from lsrep.errors import ConfigError
from lsrep.harness import build_adapter, validate_condition
from lsrep.host import check_mode
from lsrep.text import estimate_tokens

Status = Literal["passed", "failed", "skipped", "info"]
CONDITION = "conformance"
CONVERSATION = "conformance"
SEED = 0
BUDGET = 120
"""Retrieval budget (tokens) given to adapters that declare `honours_budget`."""
MAX_PRESSURE_TURNS = 400
"""Filler turns added at most to push a history past a declared limit."""


# -- the scenario -----------------------------------------------------------------------------------
def _history(rows: Sequence[tuple[str, str, str, str, str | None, str]], first: int = 0) -> tuple[ReplayTurn, ...]:
    return tuple(
        ReplayTurn(turn_id=tid, session_id=sid, conversation_id=CONVERSATION, index=first + i,
                   timestamp=datetime.fromisoformat(when), role=role, speaker=speaker, content=content)
        for i, (tid, sid, when, role, speaker, content) in enumerate(rows)
    )


SCENARIO = _history([
    ("c01", "s1", "2026-03-02T12:00:00+00:00", "user", "Ana", "I planted tulips in the back garden today."),
    ("c02", "s1", "2026-03-02T12:01:00+00:00", "assistant", None, "Lovely, tulips should flower in April."),
    ("c03", "s1", "2026-03-02T12:05:00+00:00", "user", "Ana", "My favourite colour is teal."),
    ("c04", "s2", "2026-03-09T12:00:00+00:00", "user", "Ana", "I planted roses in the back garden today."),
    ("c05", "s2", "2026-03-09T12:03:00+00:00", "user", "Ana", "My favourite colour is crimson now, not teal."),
    ("c06", "s3", "2026-03-16T12:00:00+00:00", "user", "Ana", "I planted lavender in the back garden today."),
    ("c07", "s3", "2026-03-16T12:02:00+00:00", "user", "Ana", "My favourite colour is amber now."),
    ("c08", "s3", "2026-03-16T12:04:00+00:00", "assistant", None, "Noted: amber it is."),
])
"""Three sessions a week apart: a planting per date and a fact revised twice."""
MIDPOINT = 5
"""The first two sessions; the third is the part a snapshot must not contain."""
BEFORE_RESET = _history([
    ("r01", "r1", "2026-02-20T12:00:00+00:00", "user", "Ana", "The locker code at the gym is QUOKKAZEPHYR 4417."),
    ("r02", "r1", "2026-02-20T12:01:00+00:00", "assistant", None, "Noted: the gym locker code is QUOKKAZEPHYR 4417."),
])
RESET_TOKEN = "quokkazephyr"
ASK_DATE = "What did I plant in the back garden on 2026-03-02?"
ASKED_DATE = date(2026, 3, 2)
ASK_RECENT = "What is my favourite colour now?"
VERSIONS = ("teal", "crimson", "amber")
"""The revised fact's values, oldest to latest."""
ASK_GARDEN = "What did I plant in the back garden?"
ASK_RESET = "What is the locker code at the gym?"
QUESTIONS = (ASK_DATE, ASK_RECENT, ASK_GARDEN, ASK_RESET)
_BY_ID = {t.turn_id: t for t in SCENARIO}


def pressure(tokens: int) -> tuple[ReplayTurn, ...]:
    """Filler turns (one more session) taking the scenario past `tokens`; none if that needs too many."""
    have = sum(estimate_tokens(t.content) for t in SCENARIO)
    line = "Filler note {i:03d}: the weather stayed mild and the garden needed no work at all."
    per = estimate_tokens(line.format(i=0))
    need = max(0, (int(tokens * 1.25) - have) // per + 1)
    if need > MAX_PRESSURE_TURNS:
        return ()
    start = SCENARIO[-1].timestamp.replace(day=20)
    rows = [(f"f{i:03d}", "s4", start.replace(hour=8 + i // 60, minute=i % 60).isoformat(), "user", "Ana",
             line.format(i=i)) for i in range(need)]
    return _history(rows, first=len(SCENARIO))


# -- results ----------------------------------------------------------------------------------------
class CheckResult(BaseModel):
    """The verdict of one check."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Check name (stable; see `CHECKS`)."""
    status: Status
    """`passed`, `failed`, `skipped` (nothing to observe) or `info` (a fact, not a defect)."""
    reason: str
    """What was observed, in one line."""


class ConformanceReport(BaseModel):
    """Every check's verdict for one adapter and its options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    """The name or `module:Class` the suite was asked to check."""
    adapter: str
    """The resolved class, as `module:Class`."""
    options: dict[str, Any]
    """The validated options, as recorded in a run."""
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return not any(r.status == "failed" for r in self.results)

    def result(self, name: str) -> CheckResult:
        return next(r for r in self.results if r.name == name)


def _passed(reason: str) -> tuple[Status, str]:
    return "passed", reason


def _failed(reason: str) -> tuple[Status, str]:
    return "failed", reason


def _skipped(reason: str) -> tuple[Status, str]:
    return "skipped", reason


# -- driving an adapter -----------------------------------------------------------------------------
class ContractViolation(Exception):
    """An adapter answered a call with something the contract does not allow."""


class Instance:
    """One adapter built as the engine builds it, fed as the default session-end schedule would."""

    def __init__(self, adapter: MemoryAdapter) -> None:
        self.adapter = adapter
        self.events: list[FidelityEvent] = []
        adapter.bind_events(self.events.append)
        self.last: datetime | None = None

    def start(self, history: Sequence[ReplayTurn]) -> None:
        self.adapter.reset(conversation_id=CONVERSATION, now=history[0].timestamp)
        self.last = None

    def feed(self, turns: Sequence[ReplayTurn], *, redeliver: bool = False, maintenance: bool = True) -> None:
        """Ingest turns; end sessions; `consolidate` at session ends and `nightly` at day changes if offered."""
        ops = self.adapter.maintenance_operations if maintenance else frozenset()
        for i, turn in enumerate(turns):
            now = turn.timestamp
            if self.last is not None and self.last.date() != now.date() and "nightly" in ops:
                self.adapter.maintain("nightly", now=now)
            self.adapter.ingest(turn, now=now)
            if redeliver:
                self.redeliver(turn)
            self.last = now
            if i == len(turns) - 1 or turns[i + 1].session_id != turn.session_id:
                self.adapter.end_session(turn.session_id, now=now)
                if "consolidate" in ops:
                    self.adapter.maintain("consolidate", now=now)

    def redeliver(self, turn: ReplayTurn) -> None:
        """The harness's retry after a call that failed once the system already had the turn."""
        try:
            self.adapter.ingest(turn, now=turn.timestamp)
        except Exception as exc:
            raise ContractViolation(f"delivering {turn.turn_id} again raised {type(exc).__name__}: "
                                    f"{' '.join(str(exc).split())[:200]} (a retry must be a quiet no-op)") from exc

    def ask(self, question: str, now: datetime | None = None) -> QueryResult:
        result = self.adapter.query(question, now=now or self.last)
        if not isinstance(result, QueryResult):
            raise ContractViolation(f"query returned {type(result).__name__}, not QueryResult")
        return result

    def ask_all(self, now: datetime | None = None) -> dict[str, QueryResult]:
        return {q: self.ask(q, now) for q in QUESTIONS}

    def digest(self) -> str | None:
        try:
            return self.adapter.state_digest()
        except (SnapshotNotSupported, NotImplementedError):
            return None


@dataclass(frozen=True)
class Replay:
    """A scenario replay: answers and digests at the midpoint and at the end, and every event."""

    mid: dict[str, QueryResult]
    end: dict[str, QueryResult]
    digest_mid: str | None
    digest_end: str | None
    events: tuple[FidelityEvent, ...]

    def results(self) -> list[tuple[str, str, QueryResult]]:
        return [("midpoint", q, r) for q, r in self.mid.items()] + [("end", q, r) for q, r in self.end.items()]


def replay_scenario(inst: Instance, *, redeliver: bool = False) -> Replay:
    inst.start(SCENARIO)
    inst.feed(SCENARIO[:MIDPOINT], redeliver=redeliver)
    digest_mid, mid = inst.digest(), inst.ask_all()
    inst.feed(SCENARIO[MIDPOINT:], redeliver=redeliver)
    digest_end, end = inst.digest(), inst.ask_all()
    return Replay(mid, end, digest_mid, digest_end, tuple(inst.events))


class Subject:
    """The adapter under test: builds fresh instances in a private folder and memoises clean replays."""

    def __init__(self, system: str, options: dict[str, Any] | None = None, adapter_host: str = "process") -> None:
        self.system = system
        self.options = dict(options or {})
        self.cls, self.validated = validate_condition(system, self.options, (), CONDITION)
        self.adapter_host = check_mode(adapter_host)
        self._host: Any = None
        self._tmp = tempfile.TemporaryDirectory(prefix="lsrep-conformance-")
        self._instances: list[Instance] = []
        self._replays: dict[str, Replay | BaseException] = {}

    def build(self, *, retrieval_budget: int | None = None, disable: tuple[str, ...] = ()) -> Instance:
        cls, opts = validate_condition(self.system, self.options, disable, CONDITION)
        state_dir = Path(self._tmp.name) / f"instance-{len(self._instances)}"
        state_dir.mkdir()
        if self.adapter_host == "in-process":
            adapter = build_adapter(cls, opts, disable=disable, state_dir=state_dir,
                                    retrieval_budget=retrieval_budget, embedder=HashingEmbedder(), llm=None, seed=SEED)
        else:
            adapter = self._hosted(cls, disable, retrieval_budget)
        inst = Instance(adapter)
        self._instances.append(inst)
        return inst

    def _hosted(self, cls: type[MemoryAdapter], disable: tuple[str, ...], retrieval_budget: int | None) -> Any:
        # One host process for the whole suite; every instance is built fresh inside it.
        from lsrep.host.client import HostedAdapter, HostProcess, import_path

        if self._host is None:
            self._host = HostProcess(embedder=HashingEmbedder())
            self._host.start_path(import_path(cls))
        return HostedAdapter(self._host, cls, options=self.options, disable=disable,
                             retrieval_budget=retrieval_budget, seed=SEED, owns_host=False)

    def replay(self, label: str) -> Replay:
        """A clean replay in its own instance; `a` and `b` are two identical ones."""
        if label not in self._replays:
            try:
                self._replays[label] = replay_scenario(self.build())
            except Exception as exc:  # noqa: BLE001 - reported by every check that needs it
                self._replays[label] = exc
        got = self._replays[label]
        if isinstance(got, BaseException):
            raise got
        return got

    def close(self) -> None:
        for inst in self._instances:
            try:
                inst.adapter.close()
            except Exception:  # noqa: BLE001, S110 - closing is best effort once the verdicts are in
                pass
        if self._host is not None:
            self._host.close()
        self._tmp.cleanup()


# -- observing results ------------------------------------------------------------------------------
def _mentions(text: str | None, word: str) -> bool:
    return bool(text) and re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) is not None


def _said(result: QueryResult) -> list[str]:
    """Everything a result puts in front of a reader: fragment texts, the context block, the answer."""
    return [f.text for f in result.fragments] + [t for t in (result.context_text, result.answer) if t]


_MONTHS = ("January February March April May June July August September October November December").split()
_MOIS = "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split()


def _date_pattern(d: date) -> re.Pattern[str]:
    m, short, day, y = _MONTHS[d.month - 1], _MONTHS[d.month - 1][:3], d.day, d.year
    forms = [d.isoformat(), f"{d:%Y/%m/%d}", f"{d:%d/%m/%Y}", f"{d:%m/%d/%Y}", f"{d:%d.%m.%Y}",
             f"{day} {m} {y}", f"{m} {day}, {y}", f"{m} {day} {y}", f"{day} {short} {y}", f"{short} {day}, {y}",
             f"{short} {day} {y}", f"{day} {_MOIS[d.month - 1]} {y}"]
    return re.compile(r"(?<!\d)(" + "|".join(re.escape(f) for f in forms) + r")(?!\d)", re.IGNORECASE)


def carries_date(text: str, d: date) -> bool:
    """Whether text states the calendar date d (ISO, numeric or written-out forms)."""
    return _date_pattern(d).search(text) is not None


def _tokens(result: QueryResult) -> int:
    return sum(estimate_tokens(f.text) for f in result.fragments)


def _differs(a: dict[str, QueryResult], b: dict[str, QueryResult]) -> str | None:
    for q in a:
        if a[q] != b.get(q):
            return f"{q!r}"
    return None


# -- the checks -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One conformance check: its name, what it catches, and the function that judges it."""

    name: str
    catches: str
    run: Callable[[Subject], tuple[Status, str]]


CHECKS: dict[str, Check] = {}


def check(name: str, catches: str):
    def wrap(fn: Callable[[Subject], tuple[Status, str]]):
        CHECKS[name] = Check(name, catches, fn)
        return fn

    return wrap


@check("options_model", "an Options model that silently accepts misspelt keys, or options that do not "
       "survive the run record's JSON")
def check_options_model(s: Subject) -> tuple[Status, str]:
    model = s.cls.Options
    fields = list(model.model_fields)
    try:
        model.model_validate({**s.options, "__conformance_unknown_key__": 1})
        return _failed("Options accepts unknown keys: a misspelt option would be ignored "
                       "(use model_config = ConfigDict(extra='forbid'))")
    except ValidationError:
        pass
    recorded = s.validated.model_dump(mode="json")
    if model.model_validate(recorded) != s.validated:
        return _failed("the options do not round-trip through JSON, so a run cannot be rebuilt from its record")
    return _passed(f"{len(fields)} option(s); unknown keys rejected; JSON round-trip ok")


_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "reset": ((), {"conversation_id": CONVERSATION, "now": SCENARIO[0].timestamp}),
    "ingest": ((SCENARIO[0],), {"now": SCENARIO[0].timestamp}),
    "query": ((ASK_GARDEN,), {"now": SCENARIO[0].timestamp}),
    "end_session": (("s1",), {"now": SCENARIO[0].timestamp}),
    "maintain": (("consolidate",), {"now": SCENARIO[0].timestamp}),
    "snapshot": ((), {}), "restore": ((None,), {}), "state_digest": ((), {}), "close": ((), {}),
}


@check("call_signatures", "methods the harness cannot call as it does (e.g. `now` positional or renamed)")
def check_call_signatures(s: Subject) -> tuple[Status, str]:
    bad = []
    for name, (args, kwargs) in _CALLS.items():
        try:
            inspect.signature(getattr(s.cls, name)).bind(None, *args, **kwargs)
        except TypeError as exc:
            bad.append(f"{name}: {exc}")
    if bad:
        return _failed("; ".join(bad))
    return _passed(f"{len(_CALLS)} methods accept the harness's calls")


@check("replay_runs", "an adapter that raises on a plain replay, a declared maintenance operation that fails, "
       "or a system that declares `answers` but returns none")
def check_replay_runs(s: Subject) -> tuple[Status, str]:
    s.replay("a")
    inst = s.build()
    inst.start(SCENARIO)
    inst.feed(SCENARIO)
    ops = sorted(s.cls.maintenance_operations)
    for op in ops:
        inst.adapter.maintain(op, now=inst.last)
    results = inst.ask_all()
    if s.cls.answers:
        silent = [q for q, r in results.items() if r.answer is None]
        if silent:
            return _failed(f"declares answers = True but returned no answer to {silent[0]!r}")
    return _passed(f"{len(SCENARIO)} turns in 3 sessions, maintenance [{', '.join(ops) or 'none'}], "
                   f"{2 * len(QUESTIONS)} queries")


@check("reset_empties_state", "a reset that leaves anything of the previous history recallable")
def check_reset(s: Subject) -> tuple[Status, str]:
    inst = s.build()
    inst.start(BEFORE_RESET)
    inst.feed(BEFORE_RESET)
    before_ids = {t.turn_id for t in BEFORE_RESET}

    def traces(result: QueryResult) -> list[str]:
        found = [f"text {t[:60]!r}" for t in _said(result) if RESET_TOKEN in t.lower()]
        found += [f"a fragment citing {t}" for f in result.fragments for t in f.source_turn_ids if t in before_ids]
        return found

    if not traces(inst.ask(ASK_RESET)):
        return _skipped("the pre-reset fact was not recalled even before reset, so reset cannot be judged")
    inst.start(SCENARIO)
    inst.feed(SCENARIO)
    for q, result in inst.ask_all().items():
        found = traces(result)
        if found:
            return _failed(f"after reset, {q!r} still returns {found[0]}")
    return _passed("a fact recalled before reset is gone after it (same conversation id)")


@check("timestamps_reach_system", "turn timestamps dropped (or replaced by the wall clock) on the way into "
       "the system: dated questions cannot be answered")
def check_timestamps(s: Subject) -> tuple[Status, str]:
    result = s.replay("a").end[ASK_DATE]
    if result.answer and _mentions(result.answer, "tulips") and not (
            _mentions(result.answer, "roses") or _mentions(result.answer, "lavender")):
        return _passed("the system's own answer picks the planting of the asked date")
    cited = [(f, [_BY_ID[t] for t in f.source_turn_ids if t in _BY_ID]) for f in result.fragments]
    cited = [(f, turns) for f, turns in cited if turns]
    if not cited:
        return _skipped("no fragment cites a scenario turn and no answer was given; nothing to judge")
    all_dates = {t.timestamp.date() for t in SCENARIO}
    dated, misdated = 0, []
    for f, turns in cited:
        own = {t.timestamp.date() for t in turns}
        if any(carries_date(f.text, d) for d in own):
            dated += 1
        elif any(carries_date(f.text, d) for d in all_dates - own):
            misdated.append(f"{f.source_turn_ids[0]} ({min(own)}) is labelled with another turn's date")
    if misdated:
        return _failed(misdated[0])
    if dated:
        return _passed(f"{dated}/{len(cited)} cited fragments carry their turn's date")
    if all(t.timestamp.date() == ASKED_DATE for _, turns in cited for t in turns):
        return _passed("only turns from the asked date were returned: the system filters by time")
    seen = sorted({t.timestamp.date().isoformat() for _, turns in cited for t in turns})
    return _failed(f"fragments cite turns from {', '.join(seen)} but none states when it was said, and they "
                   f"were not filtered by the asked date (pass turn.timestamp into the system)")


@check("session_boundaries", "(info only) whether session boundaries have any observable effect")
def check_sessions(s: Subject) -> tuple[Status, str]:
    flat = tuple(t.model_copy(update={"session_id": "s-all"}) for t in SCENARIO)
    seen = []
    for history in (SCENARIO, flat):
        inst = s.build()
        inst.start(history)
        inst.feed(history, maintenance=False)
        seen.append((inst.digest(), inst.ask_all()))
    (d1, a1), (d2, a2) = seen
    if d1 is not None and d1 != d2:
        return _passed("merging the sessions changes the state digest: boundaries reach the system")
    if _differs(a1, a2):
        return _passed("merging the sessions changes the answers: boundaries reach the system")
    return "info", ("merging the three sessions into one changes neither state nor answers (fine for a system "
                    "that does not model sessions)")


@check("ingest_order", "turns stored or presented out of order: unranked fragments (no score) not in ingest order")
def check_ingest_order(s: Subject) -> tuple[Status, str]:
    rep = s.replay("a")
    runs = 0
    for phase, q, result in rep.results():
        by_kind: dict[str, list[int]] = {}
        for f in result.fragments:
            if f.score is None and len(f.source_turn_ids) == 1 and f.source_turn_ids[0] in _BY_ID:
                by_kind.setdefault(f.kind, []).append(_BY_ID[f.source_turn_ids[0]].index)
        for kind, order in by_kind.items():
            runs += len(order) > 1
            for a, b in zip(order, order[1:], strict=False):
                if b < a:
                    return _failed(f"{phase} {q!r}: unranked {kind!r} fragments give {SCENARIO[b].turn_id} after "
                                   f"{SCENARIO[a].turn_id} (give unranked fragments in ingest order, or score them)")
    # Recall quality is for campaigns to measure; here the latest version only shows order was kept.
    result = rep.end[ASK_RECENT]
    said = _said(result)
    latest = any(_mentions(t, VERSIONS[-1]) for t in said)
    older = sorted({v for v in VERSIONS[:-1] for t in said if _mentions(t, v)})
    if runs:
        note = "; the latest version of a revised fact is returned" if latest else ""
        return _passed(f"{runs} unranked run(s) of fragments, all in ingest order{note}")
    if latest:
        return _passed("no unranked transcript to judge; the latest version of a revised fact is returned")
    if older:
        return _skipped(f"no unranked transcript, and only superseded value(s) ({', '.join(older)}) of the revised "
                        f"fact were returned: order cannot be told from recall quality here")
    return _skipped("no unranked transcript and no version of the revised fact was returned; nothing to judge")


@check("retry_no_duplicate", "a turn delivered again after a failed call stored twice "
       "(the contract: ingest is idempotent per turn id)")
def check_retry(s: Subject) -> tuple[Status, str]:
    a, b = s.replay("a"), s.replay("b")
    try:
        retried = replay_scenario(s.build(), redeliver=True)
    except ContractViolation as exc:
        return _failed(str(exc))
    def twice(r: QueryResult) -> Counter:
        return Counter((f.text, f.source_turn_ids) for f in r.fragments if f.source_turn_ids)

    for (phase, q, clean), (_, _, got) in zip(a.results(), retried.results(), strict=True):
        extra = twice(got) - twice(clean)
        repeated = [k for k, n in twice(got).items() if n > 1 and extra[k]]
        if repeated:
            return _failed(f"{phase} {q!r}: the fragment citing {', '.join(repeated[0][1])} appears twice")
    if a.mid == b.mid and a.end == b.end and (diff := _differs(a.end, retried.end) or _differs(a.mid, retried.mid)):
        return _failed(f"answers after redelivered turns differ from a clean replay's ({diff})")
    if a.digest_end is not None and a.digest_end == b.digest_end and retried.digest_end != a.digest_end:
        return _failed("the state digest after redelivered turns differs from a clean replay's")
    return _passed("every turn delivered twice: fragments, answers and digest match a clean replay")


def _no_snapshot(s: Subject) -> tuple[Status, str] | None:
    if s.cls.supports_snapshot:
        return None
    return _skipped("supports_snapshot is False (campaigns with access = 'isolated' refuse this adapter)")


@check("snapshot_roundtrip", "a snapshot that shares state with the live system or misses part of it: "
       "restore does not bring back the same state and answers")
def check_snapshot(s: Subject) -> tuple[Status, str]:
    if skip := _no_snapshot(s):
        return skip
    inst = s.build()
    inst.start(SCENARIO)
    inst.feed(SCENARIO[:MIDPOINT])
    mid_now = inst.last
    snap = inst.adapter.snapshot()
    first = inst.ask_all(mid_now)
    inst.adapter.restore(snap)
    d1 = inst.digest()
    if d1 is None:
        return _failed("supports_snapshot is True but state_digest() is unavailable")
    inst.feed(SCENARIO[MIDPOINT:])
    inst.adapter.restore(snap)
    if inst.digest() != d1:
        return _failed("restoring the snapshot after more ingests does not give back its state digest")
    again = inst.ask_all(mid_now)
    later = {t.turn_id for t in SCENARIO[MIDPOINT:]}
    for q, result in again.items():
        for f in result.fragments:
            if later & set(f.source_turn_ids):
                return _failed(f"after restore, {q!r} cites {sorted(later & set(f.source_turn_ids))[0]}, "
                               f"ingested after the snapshot")
    if s.cls.deterministic and (diff := _differs(first, again)):
        return _failed(f"after restore, {diff} gets a different answer than before")
    return _passed("restored twice (once after three more turns): same digest, same answers")


@check("isolated_probe", "a probe whose effects survive snapshot → query → restore (isolation broken)")
def check_isolated_probe(s: Subject) -> tuple[Status, str]:
    if skip := _no_snapshot(s):
        return skip
    inst = s.build()
    inst.start(SCENARIO)
    inst.feed(SCENARIO)
    before = inst.digest()
    snap = inst.adapter.snapshot()
    first = inst.ask_all()
    inst.adapter.restore(snap)
    if inst.digest() != before:
        return _failed("after snapshot → queries → restore the state digest differs: the snapshot does not "
                       "cover what a query changes")
    again = inst.ask_all()
    inst.adapter.restore(snap)
    if s.cls.deterministic and (diff := _differs(first, again)):
        return _failed(f"re-asking after restore gives a different answer to {diff}")
    return _passed("snapshot → queries → restore leaves the digest and later answers unchanged")


@check("query_side_effects", "(info only) whether queries change the state; persistent side effects are "
       "allowed and measured under the persistent access policy")
def check_query_side_effects(s: Subject) -> tuple[Status, str]:
    inst = s.build()
    inst.start(SCENARIO)
    inst.feed(SCENARIO)
    before = inst.digest()
    if before is None:
        return _skipped("no state digest to compare")
    inst.ask_all()
    if inst.digest() == before:
        return "info", "queries leave the state unchanged"
    return "info", "queries change the state (e.g. reinforcement, recall logs); the isolated policy undoes that"


@check("citations_ingested", "fragments citing turns that do not exist or were not ingested yet (proven leaks)")
def check_citations(s: Subject) -> tuple[Status, str]:
    rep = s.replay("a")
    ingested = {"midpoint": {t.turn_id for t in SCENARIO[:MIDPOINT]}, "end": set(_BY_ID)}
    n, unattributed = 0, 0
    for phase, q, result in rep.results():
        for f in result.fragments:
            n += 1
            unattributed += not f.source_turn_ids
            for tid in f.source_turn_ids:
                if tid not in _BY_ID:
                    return _failed(f"{phase} {q!r}: a fragment cites {tid!r}, which is no turn of the history")
                if tid not in ingested[phase]:
                    return _failed(f"{phase} {q!r}: a fragment cites {tid!r}, not ingested yet (a proven leak)")
    if not n:
        return _skipped("no fragment was returned")
    note = f"; {unattributed} unattributed (the leak audit cannot check those)" if unattributed else ""
    return _passed(f"{n} fragments cite only ingested turns{note}")


@check("mechanism_events", "events or fragment attributions naming undeclared mechanisms, invalid stages, "
       "malformed mechanism declarations")
def check_mechanism_events(s: Subject) -> tuple[Status, str]:
    specs = s.cls.mechanisms
    if not all(isinstance(m, MechanismSpec) for m in specs):
        return _failed("mechanisms must be MechanismSpec instances")
    names = [m.name for m in specs]
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        return _failed(f"mechanism declared twice: {dupes[0]}")
    rep = s.replay("a")
    declared = set(names)
    for ev in rep.events:
        if not isinstance(ev, FidelityEvent) or ev.stage not in STAGES:
            return _failed(f"malformed event {ev!r}")
        if ev.mechanism not in declared:
            return _failed(f"event for undeclared mechanism {ev.mechanism!r} (stage {ev.stage})")
    for _, q, result in rep.results():
        for f in result.fragments:
            if stray := sorted(set(f.mechanisms) - declared):
                return _failed(f"{q!r}: a fragment is attributed to undeclared mechanism {stray[0]!r}")
    used = {ev.mechanism for ev in rep.events}
    silent = [n for n in names if n not in used]
    note = f"; silent in this scenario: {', '.join(silent)}" if silent else ""
    return _passed(f"{len(rep.events)} events from {len(used)}/{len(names)} declared mechanisms{note}")


@check("disabled_mechanisms", "a mechanism switched off for an ablation that still runs or reaches a fragment")
def check_disabled(s: Subject) -> tuple[Status, str]:
    switchable = tuple(m.name for m in s.cls.mechanisms if m.can_disable)
    if not switchable:
        return _skipped("declares no mechanism that can be switched off")
    rep = replay_scenario(s.build(disable=switchable))
    ran = sorted({ev.mechanism for ev in rep.events
                  if ev.mechanism in switchable and ev.stage in ("executed", "output", "selected", "in_prompt")})
    if ran:
        return _failed(f"switched off but still reported running: {', '.join(ran)}")
    for _, q, result in rep.results():
        for f in result.fragments:
            if hit := sorted(set(f.mechanisms) & set(switchable)):
                return _failed(f"{q!r}: a fragment is attributed to switched-off {hit[0]!r}")
    return _passed(f"{len(switchable)} mechanism(s) switched off together: none ran or reached a fragment")


@check("determinism", "a system declared deterministic whose identical replays differ")
def check_determinism(s: Subject) -> tuple[Status, str]:
    if not s.cls.deterministic:
        return _skipped("declares deterministic = False")
    a, b = s.replay("a"), s.replay("b")
    if diff := _differs(a.mid, b.mid) or _differs(a.end, b.end):
        return _failed(f"two fresh instances fed the same turns answer {diff} differently")
    if (a.digest_mid, a.digest_end) != (b.digest_mid, b.digest_end):
        return _failed("two identical replays end in different state digests (wall clock or unseeded randomness?)")
    return _passed("two fresh instances: identical fragments, answers and digests")


def _limited(inst: Instance, limit: int, what: str) -> tuple[Status, str]:
    extra = pressure(limit)
    history = SCENARIO + extra
    inst.start(history)
    inst.feed(history)
    sizes = {q: _tokens(r) for q, r in inst.ask_all().items()}
    over = {q: n for q, n in sizes.items() if n > limit}
    if over:
        q, n = next(iter(over.items()))
        return _failed(f"{q!r} returns {n} tokens of fragments, over the {what} of {limit}")
    held = sum(estimate_tokens(t.content) for t in history)
    note = "" if held > limit else f" (not exercised: the history holds only ~{held} tokens)"
    return _passed(f"largest context {max(sizes.values())} ≤ {what} {limit}{note}")


@check("context_limit", "a declared context_limit that returned fragments exceed (harness token estimate)")
def check_context_limit(s: Subject) -> tuple[Status, str]:
    inst = s.build()
    limit = inst.adapter.context_limit
    if limit is None:
        return _skipped("declares no context_limit")
    return _limited(inst, limit, "context_limit")


@check("retrieval_budget", "an adapter claiming honours_budget whose context exceeds the campaign's budget")
def check_retrieval_budget(s: Subject) -> tuple[Status, str]:
    if not s.cls.honours_budget:
        return _skipped("does not declare honours_budget (the harness still flags budget_exceeded per observation)")
    return _limited(s.build(retrieval_budget=BUDGET), BUDGET, "retrieval budget")


# -- running ----------------------------------------------------------------------------------------
def run_checks(subject: Subject, names: Iterable[str] | None = None) -> tuple[CheckResult, ...]:
    """Run the named checks (default: all) in order; an exception fails its check."""
    out = []
    for c in select_checks(names):
        try:
            status, reason = c.run(subject)
        except Exception as exc:  # noqa: BLE001 - an adapter failure is a verdict, not a crash
            text = " ".join(str(exc).split())[:300] or type(exc).__name__
            status, reason = "failed", f"raised {type(exc).__name__}: {text}"
        out.append(CheckResult(name=c.name, status=status, reason=reason))
    return tuple(out)


def select_checks(names: Iterable[str] | None) -> list[Check]:
    if names is None:
        return list(CHECKS.values())
    picked = []
    for name in names:
        if name not in CHECKS:
            import difflib

            close = difflib.get_close_matches(name, list(CHECKS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown conformance check {name!r}{hint} (known: {', '.join(CHECKS)})")
        picked.append(CHECKS[name])
    return picked


def run_conformance(system: str, options: dict[str, Any] | None = None,
                    checks: Iterable[str] | None = None, adapter_host: str = "process") -> ConformanceReport:
    """Check one adapter (registered name or `module:Class`) with the given options.

    The adapter runs in an adapter host process, as in a campaign (`adapter_host="in-process"`
    builds it in this process instead, for debugging).
    """
    selected = [c.name for c in select_checks(checks)]
    subject = Subject(system, options, adapter_host)
    try:
        results = run_checks(subject, selected)
    finally:
        subject.close()
    cls = subject.cls
    return ConformanceReport(system=system, adapter=f"{cls.__module__}:{cls.__qualname__}",
                             options=subject.validated.model_dump(mode="json"), results=results)
