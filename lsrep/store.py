"""The run store: one SQLite file, migrated on open through named, ordered migrations.

A unit (condition x trajectory x repetition) is written in one transaction
when it finishes, so an interrupted run never leaves half a unit behind and a
re-run resumes by skipping the finished units. `docs/store-schema.md` is
generated from the live database (`lsrep store schema`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
def m006_longmemeval(db: sqlite_utils.Database) -> None:
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


class RunStore:
    """A run store file; opening it applies any migration it lacks."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite_utils.Database(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def _migrate(self) -> None:
        table = self.db["_migrations"]
        if not table.exists():
            table.create({"name": str, "applied_at": str}, pk="name")
        done = {row["name"] for row in table.rows}
        for name, fn in MIGRATIONS:
            if name not in done:
                with self.db.conn:
                    fn(self.db)
                    table.insert({"name": name, "applied_at": _utcnow()})

    # -- runs ----------------------------------------------------------------------------------
    def create_run(self, run_id: str, campaign: str, campaign_path: str, campaign_sha256: str,
                   plan_digest: str, manifest: dict[str, Any]) -> None:
        with self.db.conn:
            self.db["runs"].insert({
                "run_id": run_id, "campaign": campaign, "campaign_path": campaign_path,
                "campaign_sha256": campaign_sha256, "plan_digest": plan_digest,
                "manifest": json.dumps(manifest, sort_keys=True), "status": "running",
                "created_at": _utcnow(), "finished_at": None,
            })

    def find_resumable(self, campaign_sha256: str, plan_digest: str) -> str | None:
        """The newest unfinished run of the same campaign and plan, if any."""
        rows = list(self.db.query(
            "select run_id from runs where campaign_sha256 = ? and plan_digest = ? and status != 'finished' "
            "order by created_at desc limit 1",
            [campaign_sha256, plan_digest],
        ))
        return rows[0]["run_id"] if rows else None

    def finish_run(self, run_id: str, status: str = "finished") -> None:
        with self.db.conn:
            self.db["runs"].update(run_id, {"status": status, "finished_at": _utcnow()})

    def run(self, run_id: str) -> dict[str, Any]:
        from lsrep.errors import LsrepError

        matches = list(self.db.query(
            "select * from runs where run_id = ? or run_id like ? order by created_at", [run_id, f"{run_id}%"]
        ))
        if not matches:
            raise LsrepError(f"no run {run_id!r} in {self.path}")
        if len(matches) > 1 and matches[0]["run_id"] != run_id:
            raise LsrepError(f"run id prefix {run_id!r} is ambiguous in {self.path}")
        row = dict(matches[0])
        row["manifest"] = json.loads(row["manifest"])
        return row

    def latest_run(self) -> str:
        from lsrep.errors import LsrepError

        rows = list(self.db.query("select run_id from runs order by created_at desc limit 1"))
        if not rows:
            raise LsrepError(f"no runs in {self.path}")
        return rows[0]["run_id"]

    def runs(self) -> list[dict[str, Any]]:
        return list(self.db.query(
            "select r.run_id, r.campaign, r.status, r.created_at, r.finished_at, "
            "(select count(*) from observations o where o.run_id = r.run_id) as observations, "
            "(select count(*) from units u where u.run_id = r.run_id and u.status = 'finished') as units "
            "from runs r order by r.created_at"
        ))

    # -- units ---------------------------------------------------------------------------------
    def finished_units(self, run_id: str) -> set[str]:
        return {r["unit_id"] for r in self.db.query(
            "select unit_id from units where run_id = ? and status in ('finished', 'failed')", [run_id]
        )}

    def write_turns(self, run_id: str, trajectory: str, rows: list[dict[str, Any]]) -> None:
        exists = list(self.db.query(
            "select 1 from turns where run_id = ? and trajectory = ? limit 1", [run_id, trajectory]
        ))
        if exists:
            return
        with self.db.conn:
            self.db["turns"].insert_all(rows, batch_size=1000)

    def write_unit(self, unit: dict[str, Any], tables: dict[str, Iterable[dict[str, Any]]]) -> None:
        """Write a finished unit and all its rows in one transaction (replacing a partial one)."""
        run_id, unit_id = unit["run_id"], unit["unit_id"]
        with self.db.conn:
            for table in ("checkpoints", "events", "maintenance", "failures"):
                self.db.execute(f"delete from {table} where run_id = ? and unit_id = ?", [run_id, unit_id])
            obs_ids = [r["obs_id"] for r in self.db.query(
                "select obs_id from observations where run_id = ? and unit_id = ?", [run_id, unit_id]
            )]
            for oid in obs_ids:
                for table in ("fragments", "judgements", "llm_calls", "retrieval_gold", "lme_questions"):
                    self.db.execute(f"delete from {table} where obs_id = ?", [oid])
            self.db.execute("delete from observations where run_id = ? and unit_id = ?", [run_id, unit_id])
            for table, rows in tables.items():
                self._insert_rows(table, rows)
            self.db["units"].upsert(unit, pk=("run_id", "unit_id"))

    def _insert_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        # Plain executemany: rows are already flat (JSON fields pre-encoded), and a unit can
        # hold hundreds of thousands of fragment rows.
        rows = list(rows)
        if not rows:
            return
        columns = {c.name for c in self.db[table].columns}
        names = [c for c in rows[0] if c in columns]
        unknown = set(rows[0]) - columns
        if unknown:
            raise ValueError(f"table {table!r} has no column(s) {sorted(unknown)}")
        sql = f"insert into [{table}] ({', '.join(f'[{n}]' for n in names)}) values ({', '.join('?' * len(names))})"
        self.db.conn.executemany(sql, [tuple(row.get(n) for n in names) for row in rows])

    # -- reads ---------------------------------------------------------------------------------
    def observations(self, run_id: str) -> list[dict[str, Any]]:
        return list(self.db.query(
            "select * from observations where run_id = ? order by condition, trajectory, repetition, "
            "checkpoint, probe_id",
            [run_id],
        ))

    def rows(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        return list(self.db.query(sql, params or []))

    def write_judgements(self, rows: list[dict[str, Any]]) -> None:
        with self.db.conn:
            self.db["judgements"].upsert_all(rows, pk=("obs_id", "judge"))

    def schema_markdown(self) -> str:
        """The live schema as Markdown (the source of docs/store-schema.md)."""
        lines = ["# Run store schema", "", "Generated from a live store by `lsrep store schema`.", ""]
        lines.append("Migrations: " + ", ".join(name for name, _ in MIGRATIONS) + ".")
        for name in sorted(self.db.table_names()):
            if name.startswith("_"):
                continue
            table = self.db[name]
            pks = table.pks
            lines += ["", f"## `{name}`", "", "| column | type | key |", "| --- | --- | --- |"]
            for col in table.columns:
                lines.append(f"| `{col.name}` | {col.type} | {'pk' if col.name in pks else ''} |")
        return "\n".join(lines) + "\n"


def _utcnow() -> str:
    # Wall-clock time for run bookkeeping only; systems never see it.
    return datetime.now(UTC).isoformat(timespec="seconds")
