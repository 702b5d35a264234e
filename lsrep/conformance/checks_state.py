"""Checks of state and attribution: snapshots, isolation, citations, mechanisms, determinism, limits."""

from __future__ import annotations

from lsrep.conformance.driving import (
    Instance,
    Subject,
    _differs,
    _failed,
    _passed,
    _skipped,
    _tokens,
    check,
    replay_scenario,
)
from lsrep.conformance.scenario import (
    _BY_ID,
    BUDGET,
    MIDPOINT,
    SCENARIO,
    Status,
    pressure,
)
from lsrep.contract import (
    STAGES,
    WHEN_MODEL_IS,
    FidelityEvent,
    MechanismSpec,
)
from lsrep.text import estimate_tokens


def _no_snapshot(s: Subject) -> tuple[Status, str] | None:
    if s.cls.supports_snapshot:
        return None
    return _skipped("supports_snapshot is False (campaigns with access = 'isolated' refuse this adapter)")


@check("snapshot_roundtrip", "a snapshot that shares state with the live system or misses part of it: "
       "restore does not bring back the same state and answers",
       example="SharedSnapshotAdapter")
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
    if s.expects_determinism and (diff := _differs(first, again)):
        return _failed(f"after restore, {diff} gets a different answer than before")
    return _passed("restored twice (once after three more turns): same digest, same answers")


@check("isolated_probe", "a probe whose effects survive snapshot → query → restore (isolation broken)",
       example="LeakyIsolationAdapter")
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
    if s.expects_determinism and (diff := _differs(first, again)):
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


@check("citations_ingested", "fragments citing turns that do not exist or were not ingested yet (proven leaks)",
       example="GhostCitationAdapter")
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
       "malformed mechanism declarations",
       example="UndeclaredEventsAdapter")
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


@check("disabled_mechanisms", "a mechanism switched off for an ablation that still runs or reaches a fragment",
       example="IgnoresDisableAdapter")
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


@check("determinism", "a system declared deterministic whose identical replays differ",
       example="NondeterministicAdapter")
def check_determinism(s: Subject) -> tuple[Status, str]:
    if not s.expects_determinism:
        return _skipped("declares deterministic = False")
    a, b = s.replay("a"), s.replay("b")
    if diff := _differs(a.mid, b.mid) or _differs(a.end, b.end):
        return _failed(f"two fresh instances fed the same turns answer {diff} differently")
    if (a.digest_mid, a.digest_end) != (b.digest_mid, b.digest_end):
        return _failed("two identical replays end in different state digests (wall clock or unseeded randomness?)")
    when = " (declared deterministic when its model is; the suite's models are offline)" \
        if s.cls.deterministic == WHEN_MODEL_IS else ""
    return _passed(f"two fresh instances: identical fragments, answers and digests{when}")


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


@check("context_limit", "a declared context_limit that returned fragments exceed (harness token estimate)",
       example="OverContextLimitAdapter")
def check_context_limit(s: Subject) -> tuple[Status, str]:
    inst = s.build()
    limit = inst.adapter.context_limit
    if limit is None:
        return _skipped("declares no context_limit")
    return _limited(inst, limit, "context_limit")


@check("retrieval_budget", "an adapter claiming honours_budget whose context exceeds the campaign's budget",
       example="IgnoresBudgetAdapter")
def check_retrieval_budget(s: Subject) -> tuple[Status, str]:
    if not s.cls.honours_budget:
        return _skipped("does not declare honours_budget (the harness still flags budget_exceeded per observation)")
    return _limited(s.build(retrieval_budget=BUDGET), BUDGET, "retrieval budget")
