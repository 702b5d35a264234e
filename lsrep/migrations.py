"""The run store's schema: named, ordered migrations, applied on open by `lsrep.store.RunStore`.

Each is applied once, in one transaction with its bookkeeping row; a new one is appended here
with the next number (`docs/store-schema.md` is generated from the result).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    db["runs"].create(
        {
            "run_id": str, "campaign": str, "campaign_path": str, "campaign_sha256": str,
            "plan_digest": str, "manifest": str, "status": str, "created_at": str, "finished_at": str,
        },
        pk="run_id",
    )
    db["units"].create(
        {
            "run_id": str, "unit_id": str, "condition": str, "trajectory": str, "repetition": int,
            "seed": int, "plan_digest": str, "status": str, "error": str, "elapsed_s": float,
        },
        pk=("run_id", "unit_id"),
        foreign_keys=[("run_id", "runs")],
    )
    db["turns"].create(
        {
            "run_id": str, "trajectory": str, "idx": int, "turn_id": str, "session_id": str,
            "timestamp": str, "sim_time": str, "role": str, "speaker": str, "content": str,
            "prefix_sha256": str,
        },
        pk=("run_id", "trajectory", "idx"),
    )
    db["checkpoints"].create(
        {
            "run_id": str, "unit_id": str, "ordinal": int, "prefix_len": int, "last_turn_id": str,
            "sim_time": str, "triggers": str, "prefix_sha256": str, "ingested_sha256": str,
            "state_digest": str,
        },
        pk=("run_id", "unit_id", "ordinal"),
    )
    db["observations"].create(
        {
            "obs_id": str, "run_id": str, "unit_id": str, "condition": str, "trajectory": str,
            "repetition": int, "checkpoint": int, "prefix_len": int, "sim_time": str,
            "probe_id": str, "kind": str, "category": str, "question": str, "expected": str,
            "answer_mode": str, "answer": str, "system_answer": str, "status": str, "error": str,
            "n_fragments": int, "context_tokens": int, "prompt_tokens": int,
            "usage_prompt_tokens": int, "usage_completion_tokens": int, "within_limit": int,
            "truncated_tokens": int, "budget_exceeded": int, "evidence_ids": str,
            "evidence_recall": float, "proven_leak": int, "unattributed": int,
            "query_ms": float, "answer_ms": float,
        },
        pk="obs_id",
    )
    db["observations"].create_index(["run_id", "condition"])
    db["fragments"].create(
        {
            "obs_id": str, "rank": int, "text": str, "source_turn_ids": str, "tokens": int,
            "mechanisms": str, "kind": str, "score": float, "leak": int, "unknown_source": int,
        },
        pk=("obs_id", "rank"),
    )
    db["events"].create(
        {
            "run_id": str, "unit_id": str, "seq": int, "step": str, "checkpoint": int,
            "probe_id": str, "mechanism": str, "stage": str, "reason": str, "count": int,
            "ids": str, "source_turn_ids": str, "params": str,
        },
        pk=("run_id", "unit_id", "seq"),
    )
    db["events"].create_index(["run_id", "mechanism"])
    db["maintenance"].create(
        {
            "run_id": str, "unit_id": str, "seq": int, "operation": str, "trigger": str,
            "sim_time": str, "status": str, "error": str, "elapsed_ms": float,
        },
        pk=("run_id", "unit_id", "seq"),
    )
    db["failures"].create(
        {
            "run_id": str, "unit_id": str, "seq": int, "phase": str, "checkpoint": int,
            "probe_id": str, "error_type": str, "message": str,
        },
        pk=("run_id", "unit_id", "seq"),
    )
    db["judgements"].create(
        {
            "obs_id": str, "judge": str, "run_id": str, "judge_version": str, "prompt_digest": str,
            "outcome": str, "correct": int, "rubric": int, "exact": int, "f1": float,
            "passes": str, "agreement": float, "status": str, "error": str, "rationale": str,
        },
        pk=("obs_id", "judge"),
    )
    db["judgements"].create_index(["run_id", "judge"])


@migration
def m002_llm_calls(db: sqlite_utils.Database) -> None:
    db["llm_calls"].create(
        {
            "call_id": str, "run_id": str, "obs_id": str, "purpose": str, "endpoint": str,
            "model": str, "request_sha256": str, "attempts": int, "faults": str, "status": str,
            "cached": int, "prompt_tokens": int, "completion_tokens": int, "cost": float,
            "latency_ms": float, "error": str,
        },
        pk="call_id",
    )
    db["llm_calls"].create_index(["run_id", "purpose"])


@migration
def m003_retrieval_gold(db: sqlite_utils.Database) -> None:
    db["retrieval_gold"].create(
        {
            "obs_id": str, "run_id": str, "question_id": str, "question_type": str, "turn_recall": float,
            "session_recall": float, "n_evidence_turns": int, "n_answer_sessions": int,
        },
        pk="obs_id",
    )


@migration
def m004_human_ratings(db: sqlite_utils.Database) -> None:
    db["rating_packets"].create(
        {
            "packet_id": str, "run_id": str, "kind": str, "created_at": str, "seed": int, "sample_size": int,
            "items": int, "key": str,
        },
        pk="packet_id",
    )
    db["ratings"].create(
        {
            "packet_id": str, "item_id": str, "rater": str, "run_id": str, "obs_id": str, "label": str,
            "rubric": int, "note": str, "imported_at": str,
        },
        pk=("packet_id", "item_id", "rater"),
    )
    db["adjudications"].create(
        {
            "obs_id": str, "run_id": str, "packet_id": str, "item_id": str, "label": str, "rubric": int,
            "source": str, "adjudicator": str, "imported_at": str,
        },
        pk="obs_id",
    )


@migration
def m005_isolation_digest(db: sqlite_utils.Database) -> None:
    # The state digest after the isolated probes were rolled back: equal to the one before
    # proves the probes changed nothing later checkpoints could see.
    db["checkpoints"].add_column("state_digest_after", str)


@migration
def m006_failure_traceback(db: sqlite_utils.Database) -> None:
    # The formatted traceback of the exception behind a failure row (None for harness findings).
    db["failures"].add_column("traceback", str)


@migration
def m007_provenance(db: sqlite_utils.Database) -> None:
    # Content provenance and reader-free memory metrics per observation and fragment
    # (lsrep.context_audit); see docs/integrity.md.
    obs = db["observations"]
    for name, kind in (
        ("content_leaks", int), ("unsourced", int), ("misattributed", int), ("duplicate_citations", int),
        ("budget_violation", int), ("budget_truncated_tokens", int), ("context_sha256", str),
        ("content_recall", float), ("answer_in_context", int), ("stale_in_context", int),
        ("future_in_context", int),
    ):
        obs.add_column(name, kind)
    frags = db["fragments"]
    for name, kind in (
        ("content_leak", int), ("leak_turn_id", str), ("unsourced", int), ("misattributed", int),
        ("sourced_share", float), ("match_turn_id", str),
    ):
        frags.add_column(name, kind)


@migration
def m008_fragment_texts(db: sqlite_utils.Database) -> None:
    # Fragment text stored once per distinct content: a fragment row references its text by
    # SHA-256 (`text` stays NULL in new rows; rows written before this migration keep theirs).
    db["fragment_texts"].create({"sha256": str, "text": str}, pk="sha256")
    db["fragments"].add_column("text_sha256", str)


@migration
def m009_longmemeval(db: sqlite_utils.Database) -> None:
    # LongMemEval diagnostics: per observation, the question's place in the file, its official
    # answer text, the system's ranking as official corpus ids, and the official retrieval metrics.
    db["lme_questions"].create(
        {
            "obs_id": str, "run_id": str, "condition": str, "position": int, "question_id": str,
            "question_type": str, "answer": str, "n_corpus": int, "user_target": int, "ranked": str,
            "metrics": str,
        },
        pk="obs_id",
    )
    db["lme_questions"].create_index(["run_id", "condition", "position"])


@migration
def m010_system_context(db: sqlite_utils.Database) -> None:
    # The size of the block a system itself would inject (its `context_text`), and which context
    # the answer prompt held (`harness` fragments or the `system` block).
    obs = db["observations"]
    obs.add_column("system_context_tokens", int)
    obs.add_column("context_source", str)


@migration
def m011_memory_calls(db: sqlite_utils.Database) -> None:
    # Every memory-side model call (the system's own chat and embedding calls through the gateway,
    # and the campaign endpoint embedder's), attributed to condition, unit, phase and turn or probe;
    # and how long each ingested turn took (lsrep.memory_model; docs/memory-model.md).
    db["memory_calls"].create(
        {
            "call_id": str, "run_id": str, "unit_id": str, "condition": str, "seq": int, "role": str,
            "kind": str, "source": str, "endpoint": str, "model": str, "phase": str, "method": str,
            "turn_id": str, "probe_id": str, "checkpoint": int, "detail": str, "inputs": int,
            "prompt_tokens": int, "completion_tokens": int, "cost": float, "latency_ms": float, "cached": int,
            "attempts": int, "faults": str, "status": str, "error": str, "request_sha256": str, "profile": str,
        },
        pk="call_id",
    )
    db["memory_calls"].create_index(["run_id", "condition", "phase"])
    db["ingests"].create(
        {"run_id": str, "unit_id": str, "condition": str, "seq": int, "turn_id": str, "elapsed_ms": float,
         "status": str},
        pk=("run_id", "unit_id", "seq"),
    )
    db["ingests"].create_index(["run_id", "condition"])


@migration
def m012_citation_precision(db: sqlite_utils.Database) -> None:
    # Provenance of derived memories: per fragment, whether it declares derived text and which cited
    # turns its text carries; per observation, the share of citations whose turn the text carries.
    db["observations"].add_column("citation_precision", float)
    db["fragments"].add_column("derived", int)
    db["fragments"].add_column("carried_turn_ids", str)


@migration
def m013_adapter_logs(db: sqlite_utils.Database) -> None:
    # Warnings and log records (WARNING+) an adapter emitted in its host, per unit (lsrep.host.capture).
    db["adapter_logs"].create(
        {"run_id": str, "unit_id": str, "condition": str, "kind": str, "source": str, "level": str,
         "message": str, "count": int, "method": str},
    )
    db["adapter_logs"].create_index(["run_id", "condition"])


@migration
def m014_unit_ingests(db: sqlite_utils.Database) -> None:
    # Ingest latency once per unit, not once per turn: a per-turn row repeated the run, unit and
    # condition (three times with its indexes) and was a third of a LongMemEval store. The turn ids
    # and their milliseconds are JSON arrays in ingest order.
    db["unit_ingests"].create(
        {"run_id": str, "unit_id": str, "condition": str, "turns": int, "failed": int, "total_ms": float,
         "turn_ids": str, "elapsed_ms": str},
        pk=("run_id", "unit_id"),
    )
    units: dict[tuple[str, str], list[dict]] = {}
    for row in db.query("select * from ingests order by run_id, unit_id, seq"):
        units.setdefault((row["run_id"], row["unit_id"]), []).append(row)
    if units:
        db["unit_ingests"].insert_all(unit_ingest_row(rows) for rows in units.values())
    db["ingests"].drop()


def unit_ingest_row(rows: list[dict]) -> dict:
    """One `unit_ingests` row from a unit's per-turn ingest rows (in ingest order)."""
    first = rows[0]
    return {"run_id": first["run_id"], "unit_id": first["unit_id"], "condition": first["condition"],
            "turns": len(rows), "failed": sum(1 for r in rows if r["status"] != "ok"),
            "total_ms": sum(r["elapsed_ms"] for r in rows),
            "turn_ids": json.dumps([r["turn_id"] for r in rows], separators=(",", ":")),
            "elapsed_ms": json.dumps([r["elapsed_ms"] for r in rows], separators=(",", ":"))}
