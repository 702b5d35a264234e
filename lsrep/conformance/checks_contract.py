"""Checks of the contract's calls: options, signatures, replay, reset, time, sessions, order, retries."""

from __future__ import annotations

import inspect
from collections import Counter
from typing import Any

from pydantic import ValidationError

from lsrep.conformance.driving import (
    ContractViolation,
    Subject,
    _differs,
    _failed,
    _mentions,
    _passed,
    _said,
    _skipped,
    carries_date,
    check,
    replay_scenario,
)
from lsrep.conformance.scenario import (
    _BY_ID,
    AFTER_RESET,
    ASK_DATE,
    ASK_GARDEN,
    ASK_RECENT,
    ASK_RESET,
    ASKED_DATE,
    BEFORE_RESET,
    CONVERSATION,
    QUESTIONS,
    RESET_TOKEN,
    SCENARIO,
    VERSIONS,
    Status,
)
from lsrep.contract import (
    MemoryAdapter,
    QueryResult,
)


@check("options_model", "an Options model that silently accepts misspelt keys, or options that do not "
       "survive the run record's JSON",
       example="LaxOptionsAdapter")
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


@check("call_signatures", "methods the harness cannot call as it does (e.g. `now` positional or renamed)",
       example="RenamedNowAdapter")
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
       "or a system that declares `answers` but returns none",
       example="SilentAnswererAdapter")
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


@check("reset_empties_state", "a reset that leaves anything of the previous history recallable — including a "
       "cache keyed on (question, store size): the same question is asked at the same size and time before and "
       "after the reset", example="NoResetAdapter")
def check_reset(s: Subject) -> tuple[Status, str]:
    inst = s.build()
    inst.start(BEFORE_RESET)
    inst.feed(BEFORE_RESET)
    before_ids = {t.turn_id for t in BEFORE_RESET}
    asked_at = BEFORE_RESET[-1].timestamp

    def traces(result: QueryResult) -> list[str]:
        found = [f"text {t[:60]!r}" for t in _said(result) if RESET_TOKEN in t.lower()]
        found += [f"a fragment citing {t}" for f in result.fragments for t in f.source_turn_ids if t in before_ids]
        return found

    if not traces(inst.ask(ASK_RESET, asked_at)):
        return _skipped("the pre-reset fact was not recalled even before reset, so reset cannot be judged")
    # Same number of turns, same times, other words: only remembered state can bring the fact back.
    inst.start(AFTER_RESET)
    inst.feed(AFTER_RESET)
    if found := traces(inst.ask(ASK_RESET, asked_at)):
        return _failed(f"after reset, the same question at the same store size and time still returns {found[0]}")
    inst.start(SCENARIO)
    inst.feed(SCENARIO)
    for q, result in inst.ask_all().items():
        found = traces(result)
        if found:
            return _failed(f"after reset, {q!r} still returns {found[0]}")
    return _passed("a fact recalled before reset is gone after it (same conversation id, and the same question "
                   "at the same store size and time)")


@check("timestamps_reach_system", "turn timestamps dropped (or replaced by the wall clock) on the way into "
       "the system: dated questions cannot be answered",
       example="DropsTimestampsAdapter")
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


def declares_sessions(cls: type) -> str | None:
    """What makes an adapter declare that it uses sessions: an `end_session` of its own, or a session mechanism."""
    if getattr(cls, "end_session", None) is not MemoryAdapter.end_session:
        return "it implements end_session"
    named = [m.name for m in cls.mechanisms if "session" in m.name.lower()]
    return f"it declares mechanism {named[0]!r}" if named else None


@check("session_boundaries", "a system that declares session use (its own end_session, or a mechanism named for "
       "sessions) whose state and answers are the same with the boundaries removed (each variant replayed twice "
       "first, so nondeterminism is not mistaken for an effect)", example="SessionFlatteningAdapter")
def check_sessions(s: Subject) -> tuple[Status, str]:
    flat = tuple(t.model_copy(update={"session_id": "s-all"}) for t in SCENARIO)
    seen: dict[str, list[tuple[str | None, dict[str, QueryResult]]]] = {"sessions": [], "flat": []}
    for label, history in (("sessions", SCENARIO), ("flat", flat)):
        for _ in range(2):
            inst = s.build()
            inst.start(history)
            inst.feed(history, maintenance=False)
            seen[label].append((inst.digest(), inst.ask_all()))
    for label, ((d1, a1), (d2, a2)) in seen.items():
        if d1 != d2 or _differs(a1, a2):
            return _skipped(f"two identical replays ({label}) already differ, so the effect of sessions cannot be "
                            f"told from nondeterminism (see the determinism check)")
    (d1, a1), (d2, a2) = seen["sessions"][0], seen["flat"][0]
    if d1 is not None and d1 != d2:
        return _passed("merging the sessions changes the state digest: boundaries reach the system")
    if diff := _differs(a1, a2):
        return _passed(f"merging the sessions changes the answer to {diff}: boundaries reach the system")
    if why := declares_sessions(s.cls):
        return _failed(f"declares session use ({why}), but merging the three sessions into one changes neither "
                       f"its state digest nor any answer")
    return "info", ("merging the three sessions into one changes neither state nor answers (fine for a system "
                    "that does not model sessions)")


@check("ingest_order", "turns stored or presented out of order: unranked fragments (no score) not in ingest order",
       example="ReversedOrderAdapter")
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
       "(the contract: ingest is idempotent per turn id)",
       example="DuplicatesOnRetryAdapter")
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
