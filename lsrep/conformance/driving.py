"""Driving an adapter through the scenario, observing its results, and the check registry."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lsrep.conformance.scenario import (
    CONDITION,
    CONVERSATION,
    MIDPOINT,
    QUESTIONS,
    SCENARIO,
    SEED,
    Status,
)
from lsrep.contract import (
    FidelityEvent,
    MemoryAdapter,
    Participants,
    QueryResult,
    ReplayTurn,
    SnapshotNotSupported,
    accepts_participants,
    expects_determinism,
)
from lsrep.embed.hashing import HashingEmbedder
from lsrep.harness import build_adapter, validate_condition
from lsrep.host import check_mode
from lsrep.host.client import HostProcess
from lsrep.text import estimate_tokens


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
    adapter_host: str = "process"
    """Where the adapter ran: its own host process (the default) or `in-process`."""
    memory_calls: int = 0
    """Memory-side model calls the adapter made through its gateway during the suite."""
    simulated_clock: bool = True
    """Whether the host's wall clock read the simulated `now` (lsrep.host.clock)."""

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
        self.current: ReplayTurn | None = None
        """The turn being ingested (so a failure can name it)."""

    def start(self, history: Sequence[ReplayTurn]) -> None:
        cls = getattr(self.adapter, "cls", type(self.adapter))  # a hosted adapter names its class
        extra = {"participants": Participants.of_turns(history)} if accepts_participants(cls) else {}
        self.adapter.reset(conversation_id=CONVERSATION, now=history[0].timestamp, **extra)
        self.last = None

    def feed(self, turns: Sequence[ReplayTurn], *, redeliver: bool = False, maintenance: bool = True) -> None:
        """Ingest turns; end sessions; `consolidate` at session ends and `nightly` at day changes if offered."""
        ops = self.adapter.maintenance_operations if maintenance else frozenset()
        for i, turn in enumerate(turns):
            now = turn.timestamp
            if self.last is not None and self.last.date() != now.date() and "nightly" in ops:
                self.adapter.maintain("nightly", now=now)
            self.current = turn
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
    traffic: tuple[str, ...] = ()
    """What the system sent out of its host during the replay (model and embedding calls), as JSON."""

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

    def __init__(self, system: str, options: dict[str, Any] | None = None, adapter_host: str = "process",
                 memory: Any = None, simulated_clock: bool = True) -> None:
        self.system = system
        self.memory = memory
        """The memory-model relay (`lsrep.memory_model.checking.check_relay`), or None: no memory model."""
        self.simulated_clock = simulated_clock
        """Patch the host's wall clock to the simulated `now` (lsrep.host.clock), as a campaign does."""
        self.options = dict(options or {})
        self.cls, self.validated = validate_condition(system, self.options, (), CONDITION)
        self.adapter_host = check_mode(adapter_host)
        self._host: Any = None
        self._hosts: dict[bool, Any] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="lsrep-conformance-")
        self.workdir = self._tmp.name
        self._instances: list[Instance] = []
        self._replays: dict[str, Replay | BaseException] = {}

    @property
    def expects_determinism(self) -> bool:
        """Whether identical replays must agree. The suite gives the adapter no model or an offline one,
        so a system deterministic `WHEN_MODEL_IS` must be deterministic here."""
        return expects_determinism(self.cls.deterministic, models_deterministic=True)

    def build(self, *, retrieval_budget: int | None = None, disable: tuple[str, ...] = (),
              shifted: bool = False) -> Instance:
        cls, opts = validate_condition(self.system, self.options, disable, CONDITION)
        state_dir = Path(self._tmp.name) / f"instance-{len(self._instances)}"
        state_dir.mkdir()
        if self.adapter_host == "in-process":
            from functools import partial

            build = partial(build_adapter, cls, opts, disable=disable, state_dir=state_dir,
                            retrieval_budget=retrieval_budget, embedder=HashingEmbedder(), llm=None, seed=SEED)
            if self.memory is None:
                adapter = build()
            else:
                from lsrep.memory_model.inprocess import build_attributed

                adapter = build_attributed(build, self.memory)
        else:
            adapter = self._hosted(cls, disable, retrieval_budget, shifted)
        inst = Instance(adapter)
        self._instances.append(inst)
        return inst

    def _hosted(self, cls: type[MemoryAdapter], disable: tuple[str, ...], retrieval_budget: int | None,
                shifted: bool = False) -> Any:
        # One host process for the whole suite (and one whose machine clock is shifted, for
        # `no_wall_clock`); every instance is built fresh inside it.
        from lsrep.host.client import HostedAdapter, import_path
        from lsrep.host.clock import hooks

        if shifted not in self._hosts:
            host = self._hosts[shifted] = RecordingHost(embedder=HashingEmbedder(), preload=cls.__module__,
                                                          memory=self.memory)
            host.start_path(import_path(cls), hooks(self.simulated_clock, shifted=shifted))
            if not shifted:
                self._host = host
        return HostedAdapter(self._hosts[shifted], cls, options=self.options, disable=disable,
                             retrieval_budget=retrieval_budget, seed=SEED, owns_host=False)

    def replay(self, label: str) -> Replay:
        """A clean replay in its own instance; `a` and `b` are two identical ones."""
        if label not in self._replays:
            try:
                inst = self.build(shifted=label == "shifted")
                host = getattr(inst.adapter, "host", None)
                start = len(getattr(host, "traffic", ()))
                rep = replay_scenario(inst)
                self._replays[label] = replace(rep, traffic=tuple(getattr(host, "traffic", ())[start:]))
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
        for host in self._hosts.values():
            host.close()
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
    example: str = ""
    """A test adapter (in tests/conformance/broken_adapters.py) this check fails; empty for info-only checks."""


CHECKS: dict[str, Check] = {}


def check(name: str, catches: str, example: str = ""):
    def wrap(fn: Callable[[Subject], tuple[Status, str]]):
        CHECKS[name] = Check(name, catches, fn, example)
        return fn

    return wrap


class RecordingHost(HostProcess):
    """A host process that also keeps every request its adapter sent out (model, embedding calls)."""

    def __init__(self, **kwargs: Any) -> None:
        self.traffic: list[str] = []
        super().__init__(**kwargs)

    def _serve_callback(self, request: dict[str, Any]) -> dict[str, Any]:
        self.traffic.append(json.dumps(request, sort_keys=True, default=str))
        return super()._serve_callback(request)
