"""The replay engine: one unit (condition x trajectory x repetition), run from its plan.

Every turn is ingested exactly once; maintenance runs where the plan says;
probes are asked at checkpoints. The unit returns plain rows for the store, so
any executor (in-process, process pool, Ray) can run it and the driver alone
writes. A failure inside the unit becomes failure rows; if the replay cannot go
on, every probe it could not ask is still an observation row, with status
`error` — nothing is skipped silently, nothing imputed.
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsrep.answer import Answerer, make_answerer
from lsrep.answer.prompt import build_messages, prompt_tokens
from lsrep.answering import AnswerPool, Asked, Deferred, answer_concurrency, captured
from lsrep.collector import replaying
from lsrep.context_audit import ContextAudit, audit_context, enforce_budget, same_items
from lsrep.contract import (
    FidelityEvent,
    Fragment,
    Participants,
    QueryResult,
    ReplayTurn,
    accepts_participants,
)
from lsrep.embed import make_embedder
from lsrep.fragment_rows import ContextRows, FragmentRows, FragmentTable
from lsrep.harness import CallLog, Guarded, validate_condition
from lsrep.host import open_adapter
from lsrep.host.wire import HostError
from lsrep.judge.campaign import call_row
from lsrep.memory_model.accounting import ingest_row
from lsrep.plan import (
    CheckpointStep,
    IngestStep,
    MaintenanceStep,
    ProbeAsk,
    SessionEndStep,
)
from lsrep.prefix_hash import prefix_hashes, turn_digest
from lsrep.protocol.models import Probe
from lsrep.provenance import TurnIndex
from lsrep.shared_index import SharedIndexes, index_key
from lsrep.text import estimate_tokens
from lsrep.unit import UnitResult, UnitTask, unit_seed  # noqa: F401  (re-exported: executors import them from here)
from lsrep.verdicts import deterministic_judgement  # noqa: F401  (re-exported)

SHARED_INDEXES = SharedIndexes(TurnIndex.in_background)
"""This process's turn indexes, one per trajectory its units replay (`lsrep.shared_index`)."""


class _Replay:
    """Mutable state of one unit's replay."""

    def __init__(self, task: UnitTask, state_dir: Path | None, provenance: Future[TurnIndex],
                 hashes: Sequence[str]) -> None:
        self.task = task
        self.log = CallLog(task.run_id, task.unit_id)
        self.index = task.trajectory.index_of()
        self.turns = task.trajectory.turns
        self.probes: dict[str, Probe] = {p.probe_id: p for p in task.probes.probes}
        self.answerer: Answerer = make_answerer(task.answerer, task.store_path, task.refresh_cache_before)
        self.answers = AnswerPool(answer_concurrency(self.answerer))
        self.deferred = Deferred(self.log, self._conclude)
        cls, opts = validate_condition(task.system, task.options, task.disable, task.condition)
        self.adapter_cls = cls
        # Indexed in a thread while the adapter host (another process) ingests: the second core;
        # shared with the other units of this trajectory in this process (`lsrep.shared_index`).
        self._provenance = provenance
        self.turn_ids = [t.turn_id for t in self.turns]
        from lsrep.memory_model.unit import unit_embedder, unit_relay

        self.memory = unit_relay(task, lambda: self.log.where)
        self.ingests: list[dict[str, Any]] = []
        adapter = open_adapter(
            task.adapter_host, cls, opts, task.options, disable=task.disable, state_dir=state_dir,
            retrieval_budget=task.retrieval_budget, embedder=unit_embedder(task, self.memory, make_embedder),
            llm=self.answerer.system_llm(), seed=task.seed, embedding_text=task.embedder.text,
            memory=self.memory,
            simulated_clock=task.simulated_clock,
        )
        self.guard = Guarded(adapter, self.log)
        self.ingested_hash = ""
        self._prefetched: dict[int, ReplayTurn] = {}
        """ReplayTurns sent in the current prefetch batch, by step index, until replayed."""
        self.prefix_hashes = [""] + list(hashes)
        self.checkpoints: list[dict[str, Any]] = []
        self.observations: list[dict[str, Any]] = []
        self.fragments = FragmentTable()
        self.fragment_rows = FragmentRows(self.index, self.turn_ids)
        self._last_context: ContextRows | None = None
        self._last_returned: tuple[tuple[Fragment, ...], int] | None = None
        self.judgements: list[dict[str, Any]] = []
        self.verdicts: dict[tuple, dict[str, Any]] = {}
        """The deterministic judge's verdicts of this unit (`lsrep.verdicts`)."""
        self.maintenance: list[dict[str, Any]] = []
        self.llm_calls: list[dict[str, Any]] = []
        self.aborted: str | None = None

    @property
    def provenance(self) -> TurnIndex:
        return self._provenance.result()

    # -- steps ---------------------------------------------------------------------------------
    def run(self) -> None:
        task = self.task
        first_now = task.plan.sim_times[0] if task.plan.sim_times else None
        extra = {"participants": Participants.of_turns(self.turns)} if accepts_participants(self.adapter_cls) else {}
        _, _, exc = self.guard.call("reset", self.guard.adapter.reset,
                                    conversation_id=task.trajectory.trajectory_id, now=first_now, **extra)
        if exc is not None:
            self.aborted = self.log.record_failure("reset", exc)
        steps = task.plan.steps
        if task.progress:
            # Imported only for a bar: a spawned worker would import it for nothing (6–15 ms here).
            from tqdm import tqdm

            steps_seen = tqdm(steps, desc=task.unit_id, unit="step", leave=False)
        else:
            steps_seen = steps
        for i, step in enumerate(steps_seen):
            if self.aborted is None and not isinstance(step, CheckpointStep) and (
                    i == 0 or isinstance(steps[i - 1], CheckpointStep)):
                self._prefetch(steps[i:])
            if self.aborted is not None:
                if isinstance(step, CheckpointStep):
                    self._error_rows(step, f"unit aborted: {self.aborted}")
                continue
            match step:
                case IngestStep():
                    self._ingest(step)
                case SessionEndStep():
                    _, _, exc = self.guard.call(f"session_end:{step.session_id}", self.guard.adapter.end_session,
                                                step.session_id, now=step.now)
                    if exc is not None:
                        self.aborted = self.log.record_failure("session_end", exc)
                case MaintenanceStep():
                    self._maintain(step)
                case CheckpointStep():
                    self._checkpoint(step)
        self.deferred.flush()
        self.guard.call("close", self.guard.adapter.close)
        self._drain_system_calls(None)
        self.answers.close()
        self.memory.close()

    def _prefetch(self, steps) -> None:
        """A hosted adapter gets the calls up to the next checkpoint in one message (same order)."""
        adapter = self.guard.adapter
        if not hasattr(adapter, "prefetch"):
            return
        calls = []
        self._prefetched.clear()
        for step in steps:
            match step:
                case CheckpointStep():
                    break
                case IngestStep():
                    turn = self._prefetched[step.index] = self._replay_turn(step)
                    calls.append(("ingest", (turn,), {"now": step.now}))
                case SessionEndStep():
                    calls.append(("end_session", (step.session_id,), {"now": step.now}))
                case MaintenanceStep() if step.operation in adapter.maintenance_operations:
                    calls.append(("maintain", (step.operation,), {"now": step.now}))
                case MaintenanceStep() if step.required:
                    break
        adapter.prefetch(calls)

    def _replay_turn(self, step: IngestStep) -> ReplayTurn:
        turn = self.turns[step.index]
        return ReplayTurn(
            turn_id=turn.turn_id, session_id=turn.session_id, conversation_id=self.task.trajectory.trajectory_id,
            index=step.index, timestamp=step.now, role=turn.role, speaker=turn.speaker, content=turn.content,
        )

    def _ingest(self, step: IngestStep) -> None:
        turn = self.turns[step.index]
        # The object prefetched for this step (the hosted adapter then recognises the call as the
        # prefetched one without encoding it again), else a new one; equal either way.
        replay_turn = self._prefetched.pop(step.index, None) or self._replay_turn(step)
        _, ms, exc = self.guard.call(f"ingest:{turn.turn_id}", self.guard.adapter.ingest, replay_turn, now=step.now)
        self.ingests.append(ingest_row(self.task.run_id, self.task.unit_id, self.task.condition, len(self.ingests),
                                       turn.turn_id, ms, exc is None))
        if exc is not None:
            # A turn the system did not take means every later observation sees another history.
            self.aborted = self.log.record_failure(f"ingest:{turn.turn_id}", exc)
            return
        self.ingested_hash = turn_digest(self.ingested_hash, replay_turn.model_dump(mode="json"))

    def _maintain(self, step: MaintenanceStep) -> None:
        adapter = self.guard.adapter
        row = {
            "run_id": self.task.run_id, "unit_id": self.task.unit_id, "seq": len(self.maintenance),
            "operation": step.operation, "trigger": step.trigger, "sim_time": step.now.isoformat(),
            "status": "ok", "error": None, "elapsed_ms": 0.0,
        }
        if step.operation not in adapter.maintenance_operations:
            row["status"] = "unsupported"
            if step.required:
                self.aborted = self.log.record_failure(
                    f"maintenance:{step.operation}",
                    f"required maintenance {step.operation!r} is not supported by {self.task.system!r}",
                )
        else:
            _, ms, exc = self.guard.call(f"maintenance:{step.operation}", adapter.maintain, step.operation,
                                         now=step.now)
            row["elapsed_ms"] = ms
            if exc is not None:
                row["status"], row["error"] = "failed", self.log.record_failure(f"maintenance:{step.operation}", exc)
        self.maintenance.append(row)

    def _checkpoint(self, step: CheckpointStep) -> None:
        task, adapter = self.task, self.guard.adapter
        snapshot, digest = None, None
        isolated = task.access == "isolated"
        if isolated:
            snapshot, _, exc = self.guard.call("snapshot", adapter.snapshot, checkpoint=step.ordinal)
            if exc is not None:
                self.aborted = self.log.record_failure("snapshot", exc, checkpoint=step.ordinal)
                self._error_rows(step, f"unit aborted: {self.aborted}")
                return
        if adapter.supports_snapshot and (isolated or task.state_digests):
            digest, _, _ = self.guard.call("state_digest", adapter.state_digest, checkpoint=step.ordinal)
        row = {
            "run_id": task.run_id, "unit_id": task.unit_id, "ordinal": step.ordinal,
            "prefix_len": step.prefix_len, "last_turn_id": step.last_turn_id, "sim_time": step.now.isoformat(),
            "triggers": ",".join(step.triggers), "prefix_sha256": self.prefix_hashes[step.prefix_len],
            "ingested_sha256": self.ingested_hash, "state_digest": digest, "state_digest_after": None,
        }
        self.checkpoints.append(row)
        # Answers run concurrently; probes conclude in plan order, later (lsrep.answering.Deferred).
        pending = []
        for ask in step.probes:
            with captured(self.log) as asked:
                probe = self._ask(step, ask)
            with captured(self.log) as restored:
                if isolated:
                    _, _, exc = self.guard.call("restore", adapter.restore, snapshot, checkpoint=step.ordinal)
                    if exc is not None:
                        self.aborted = self.log.record_failure("restore", exc, checkpoint=step.ordinal)
            pending.append((probe, asked, restored))
            if self.aborted is not None:
                break
        self.deferred.hold(step, pending)
        if self.aborted is not None:
            return
        if isolated and digest is not None:
            after, _, _ = self.guard.call("state_digest", adapter.state_digest, checkpoint=step.ordinal)
            row["state_digest_after"] = after
            if after != digest:
                self.log.record_failure("isolation", "state differs after the isolated probes were rolled back "
                                        f"(digest {digest[:12]} before, {str(after)[:12]} after)",
                                        checkpoint=step.ordinal)

    def _ask(self, step: CheckpointStep, ask: ProbeAsk) -> Asked:
        """Query the adapter and start the answer; `_conclude` records the rest in plan order."""
        task, adapter = self.task, self.guard.adapter
        probe = self.probes[ask.probe_id]
        row = self._observation_row(step, probe, ask)
        result, query_ms, exc = self.guard.call(
            "query", adapter.query, probe.question, now=step.now, checkpoint=step.ordinal, probe_id=probe.probe_id
        )
        row["query_ms"] = query_ms
        if exc is not None:
            row["error"] = self.log.record_failure("query", exc, checkpoint=step.ordinal, probe_id=probe.probe_id)
            return Asked(row, probe)
        if not isinstance(result, QueryResult):
            row["error"] = self.log.record_failure(
                "query", f"adapter returned {type(result).__name__}, not QueryResult",
                checkpoint=step.ordinal, probe_id=probe.probe_id,
            )
            return Asked(row, probe)
        fragments = list(result.fragments)
        audit = audit_context(fragments, step.prefix_len, ask.expected, self.provenance, self.index)
        row.update(audit.row)
        row["system_answer"] = result.answer
        row["truncated_tokens"] = result.truncated_tokens
        budget = task.retrieval_budget
        last = self._last_returned
        if last is not None and same_items(last[0], result.fragments):
            returned_tokens = last[1]
        else:
            returned_tokens = sum(estimate_tokens(f.text) for f in fragments)
            self._last_returned = (result.fragments, returned_tokens)
        row["budget_exceeded"] = int(budget is not None and returned_tokens > budget)
        row["budget_violation"] = int(bool(row["budget_exceeded"]) and self.adapter_cls.honours_budget)
        if task.enforce_budget and budget is not None:
            fragments, cut = enforce_budget(fragments, budget)
            row["budget_truncated_tokens"] = cut
            row["truncated_tokens"] += cut
        returned = (result.fragments, audit)
        row["system_context_tokens"] = estimate_tokens(result.context_text) if result.context_text else None
        block = result.context_text if task.context_format == "system" and result.context_text else None
        answer = None if task.answer_mode == "system" else self.answers.submit(
            functools.partial(self.answerer.answer, block=block), probe.question, step.now, fragments,
            self.index)
        return Asked(row, probe, result, fragments, returned, answer, self.answerer.drain_system_calls())

    def _conclude(self, step: CheckpointStep, asked: Asked) -> None:
        task, row, probe, result, fragments = self.task, asked.row, asked.probe, asked.result, asked.fragments
        if result is None:
            self._finish(row)
            return
        block = result.context_text if task.context_format == "system" and result.context_text else None
        if task.answer_mode == "system":
            if result.answer is None:
                row["error"] = self.log.record_failure(
                    "answer", "system mode, but the system returned no answer",
                    checkpoint=step.ordinal, probe_id=probe.probe_id,
                )
            else:
                row["answer"] = result.answer
            row["prompt_tokens"] = prompt_tokens(build_messages(probe.question, step.now, fragments, block))
            row["context_source"] = "system" if block else "harness"
            row["within_limit"] = 1
        else:
            outcome = asked.answer.result()
            row.update(
                answer=outcome.text, answer_ms=outcome.elapsed_ms, prompt_tokens=outcome.prompt_tokens,
                context_source=outcome.context_source,
                usage_prompt_tokens=outcome.usage_prompt_tokens,
                usage_completion_tokens=outcome.usage_completion_tokens,
                within_limit=int(outcome.within_limit),
            )
            row["truncated_tokens"] += outcome.dropped_tokens
            fragments = list(outcome.fragments_used)
            for record in outcome.calls:
                self.llm_calls.append(call_row(record, task.run_id, row["obs_id"]))
            if outcome.error is not None:
                row["error"] = self.log.record_failure(
                    "answer", outcome.error, checkpoint=step.ordinal, probe_id=probe.probe_id
                )
        self._record_fragments(row, fragments, step, asked.returned)
        self._finish(row)
        self._drain_system_calls(row["obs_id"], asked.system_calls)

    def _drain_system_calls(self, obs_id: str | None, records: list[dict[str, Any]] | None = None) -> None:
        # Systems' own model calls (extraction, consolidation, system-mode answers).
        for record in self.answerer.drain_system_calls() if records is None else records:
            self.llm_calls.append(call_row(record, self.task.run_id, obs_id))

    # -- rows ----------------------------------------------------------------------------------
    def _observation_row(self, step: CheckpointStep, probe: Probe, ask: ProbeAsk) -> dict[str, Any]:
        task = self.task
        exp = ask.expected
        evidence = sorted({e for v in exp.in_force for e in v.evidence})
        return {
            "obs_id": f"{task.run_id}:{task.unit_id}:{step.ordinal}:{probe.probe_id}",
            "run_id": task.run_id, "unit_id": task.unit_id, "condition": task.condition,
            "trajectory": task.trajectory.trajectory_id, "repetition": task.repetition,
            "checkpoint": step.ordinal, "prefix_len": step.prefix_len, "sim_time": step.now.isoformat(),
            "probe_id": probe.probe_id, "kind": probe.kind, "category": probe.category,
            "question": probe.question, "expected": exp.model_dump_json(), "answer_mode": task.answer_mode,
            "answer": None, "system_answer": None, "status": "ok", "error": None,
            "n_fragments": 0, "context_tokens": 0, "prompt_tokens": None, "usage_prompt_tokens": None,
            "usage_completion_tokens": None, "within_limit": None, "truncated_tokens": 0,
            "budget_exceeded": 0, "evidence_ids": json.dumps(evidence), "evidence_recall": None,
            "proven_leak": 0, "unattributed": 0, "query_ms": None, "answer_ms": None,
            "budget_violation": 0, "budget_truncated_tokens": 0, "content_leaks": 0, "unsourced": 0,
            "misattributed": 0, "duplicate_citations": 0, "context_sha256": None, "content_recall": None,
            "answer_in_context": None, "stale_in_context": None, "future_in_context": None,
            "system_context_tokens": None, "context_source": None,
            "citation_precision": None,
        }

    def _record_fragments(self, row: dict[str, Any], fragments: list[Fragment], step: CheckpointStep,
                          returned: tuple[tuple[Fragment, ...], ContextAudit]) -> None:
        obs_id = row["obs_id"]
        # Leaks are counted over everything the system returned, recorded or cut.
        all_frags, audit = returned
        last = self._last_context
        if last is not None and last.repeats(all_frags, audit, fragments):
            # The previous observation's context, audit and answerer's cut again (every probe of a
            # checkpoint, for many systems): its rows under this observation's id, its totals.
            self.fragments.add_copy(obs_id, last.rows)
        else:
            last = self._last_context = ContextRows.build(
                obs_id, fragments, all_frags, audit, self.fragment_rows, self._in_prompt_events(fragments))
            self.fragments.add_rows(last.rows)
        row["proven_leak"] = last.proven_leak
        row["unattributed"] += last.unattributed
        row["n_fragments"], row["context_tokens"] = len(fragments), last.tokens
        evidence = json.loads(row["evidence_ids"])
        if evidence:
            row["evidence_recall"] = len(last.sources & set(evidence)) / len(evidence)
        self.log.where = {"step": "assemble", "checkpoint": step.ordinal, "probe_id": row["probe_id"]}
        for event in last.in_prompt:
            self.log.record_event(event)
        self.log.where = {}

    def _in_prompt_events(self, fragments: list[Fragment]) -> tuple[FidelityEvent, ...]:
        # The harness, not the adapter, knows what reached the answer prompt. Credit goes to the
        # fragment's producers: a mechanism whose declared stages exclude `in_prompt` (a pass-through
        # such as fusion or a cap) is not credited for what others produced (docs/fidelity.md).
        passes = self._passes
        by_mechanism: dict[str, list[str]] = {}
        for frag in fragments:
            for mech in frag.mechanisms:
                if mech not in passes:
                    by_mechanism.setdefault(mech, []).extend(frag.source_turn_ids)
        # Built by the harness from validated fragments: no second validation per probe. `params` is
        # given (its default, a new dict): a default factory costs pydantic a signature inspection per event.
        return tuple(FidelityEvent.model_construct(mechanism=mech, stage="in_prompt", count=len(ids),
                                                   source_turn_ids=tuple(dict.fromkeys(ids)), params={})
                     for mech, ids in sorted(by_mechanism.items()))

    @functools.cached_property
    def _passes(self) -> frozenset[str]:
        return frozenset(m.name for m in self.adapter_cls.mechanisms if m.stages and "in_prompt" not in m.stages)

    def _finish(self, row: dict[str, Any]) -> None:
        if row["error"] is not None:
            row["status"] = "error"
        self.observations.append(row)
        self.judgements.append(deterministic_judgement(row, self.verdicts))

    def _error_rows(self, step: CheckpointStep, reason: str) -> None:
        self.deferred.flush()
        for ask in step.probes:
            probe = self.probes[ask.probe_id]
            row = self._observation_row(step, probe, ask)
            row["error"] = reason
            self._finish(row)

    def result(self, elapsed: float) -> UnitResult:
        task = self.task
        unit = {
            "run_id": task.run_id, "unit_id": task.unit_id, "condition": task.condition,
            "trajectory": task.trajectory.trajectory_id, "repetition": task.repetition, "seed": task.seed,
            "plan_digest": task.plan_digest, "status": "failed" if self.aborted else "finished",
            "error": self.aborted, "elapsed_s": elapsed,
        }
        return UnitResult(unit=unit, tables={
            "checkpoints": self.checkpoints, "observations": self.observations, "fragments": self.fragments,
            "events": self.log.events, "maintenance": self.maintenance, "failures": self.log.failures,
            "judgements": self.judgements, "llm_calls": self.llm_calls,
            "memory_calls": self.memory.book.rows, "ingests": self.ingests,
            "adapter_logs": [{"run_id": task.run_id, "unit_id": task.unit_id, "condition": task.condition, **r}
                             for r in getattr(self.guard.adapter, "host_diagnostics", ())],
        })


def run_unit(task: UnitTask) -> UnitResult:
    """Replay one unit in a private state directory and return its rows."""
    start = time.perf_counter()
    # Only an adapter built in this process uses it; a hosted one gets its own folder in its host.
    state_dir = Path(tempfile.mkdtemp(prefix="lsrep-state-")) if task.adapter_host == "in-process" else None
    replay = None
    turns = task.trajectory.turns
    given = task.prefix_sha256
    hashes = given if len(given) == len(turns) else prefix_hashes(turns)
    key = index_key(task.trajectory.trajectory_id, hashes)
    provenance = None
    try:
        with replaying():  # the replay's set-up too: the turn index is built there
            provenance = SHARED_INDEXES.acquire(key, turns)
            try:
                replay = _Replay(task, state_dir, provenance, hashes)
            except HostError as exc:
                # The host could not start or build the adapter: a failed unit, as for a dead worker.
                from lsrep.executors.local import crashed_unit

                return crashed_unit(task, exc)
            replay.run()
            return replay.result(time.perf_counter() - start)
    finally:
        if replay is not None:
            if hasattr(replay.guard.adapter, "terminate"):
                replay.guard.adapter.terminate()
            # The replay refers to itself (the deferred conclusions, the memory relay's `where`): its
            # state goes now, not at the next full collection (fewer of them while units replay:
            # `lsrep.collector.replaying`). The turn index goes when no unit holds it (`lsrep.shared_index`).
            vars(replay).clear()
        if provenance is not None:
            SHARED_INDEXES.release(key, task.trajectory_follows)
        if state_dir is not None:
            shutil.rmtree(state_dir, ignore_errors=True)
