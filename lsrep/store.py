"""The run store: one SQLite file, migrated on open through named, ordered migrations.

A unit (condition x trajectory x repetition) is written in one transaction
when it finishes, so an interrupted run never leaves half a unit behind and a
re-run resumes by skipping the finished units. `docs/store-schema.md` is
generated from the live database (`lsrep store schema`).
"""

from __future__ import annotations

import hashlib
import json
import operator
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from lsrep.migrations import MIGRATIONS, unit_ingest_row
from lsrep.store_lock import BUSY_TIMEOUT_S, file_lock, open_error

REDACTED_COLUMNS = frozenset({"error", "message", "rationale", "reason"})
"""Free-text error columns, passed through `lsrep.redact` before any row is stored."""


class _Connection(sqlite3.Connection):
    """A connection in driver autocommit whose `with conn:` block is one `BEGIN IMMEDIATE` transaction.

    Python's sqlite3 runs DDL outside any transaction in its legacy mode, so a migration's
    `CREATE`/`ALTER` and its bookkeeping row could land apart; here every block is explicit,
    takes the write lock up front (no deadlocking read-to-write upgrade between processes)
    and nests (an inner block joins the outer transaction).
    """

    def __enter__(self) -> _Connection:
        owned = self.__dict__.setdefault("_owned", [])
        if self.in_transaction and not owned:
            # Open with no block inside it: a Ctrl-C landed between `BEGIN` and the block's
            # start, or between its end and `COMMIT`. Joining it would leave this block's
            # writes uncommitted (lost at exit), so the stale transaction is undone first.
            self.execute("ROLLBACK")
        owns = not self.in_transaction
        if owns:
            self.execute("BEGIN IMMEDIATE")
        owned.append(owns)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.__dict__["_owned"].pop() and self.in_transaction:
            self.execute("ROLLBACK" if exc_type is not None else "COMMIT")
        return False


class RunStore:
    """A run store file; opening it applies any migration it lacks.

    First open and migration run under an inter-process lock and each migration is one
    transaction with its bookkeeping row, so a crash at any moment leaves the store either
    before or after a whole migration, never between.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._known_columns: dict[str, frozenset[str]] = {}
        problem = open_error(self.path)
        if problem:
            from lsrep.errors import InputError

            raise InputError(self.path, problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(self.lock_path("open")):
            conn = sqlite3.connect(str(self.path), factory=_Connection, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                self.db = sqlite_utils.Database(conn)
                self._migrate()
            except sqlite3.DatabaseError as exc:
                conn.close()
                from lsrep.errors import InputError

                raise InputError(self.path, f"not a usable run store ({exc}); see `lsrep store check`") from None

    def lock_path(self, purpose: str) -> Path:
        return self.path.with_name(f"{self.path.name}.{purpose}.lock")

    def _migrate(self) -> None:
        conn = self.db.conn
        with conn:
            conn.execute("create table if not exists _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
        for name, fn in MIGRATIONS:
            with conn:
                # Checked inside the write transaction: another process may have just applied it.
                if conn.execute("select 1 from _migrations where name = ?", [name]).fetchone():
                    continue
                fn(self.db)
                conn.execute("insert into _migrations (name, applied_at) values (?, ?)", [name, _utcnow()])

    # -- runs ----------------------------------------------------------------------------------
    def create_run(self, run_id: str, campaign: str, campaign_path: str, campaign_sha256: str,
                   plan_digest: str, manifest: dict[str, Any]) -> None:
        with self.db.conn:
            self.db.conn.execute(
                "insert into runs (run_id, campaign, campaign_path, campaign_sha256, plan_digest, manifest, "
                "status, created_at, finished_at) values (?, ?, ?, ?, ?, ?, 'running', ?, NULL) "
                "on conflict (run_id) do nothing",
                [run_id, campaign, campaign_path, campaign_sha256, plan_digest,
                 json.dumps(manifest, sort_keys=True), _utcnow()],
            )

    def mark_running(self, run_id: str) -> None:
        with self.db.conn:
            self.db.conn.execute("update runs set status = 'running', finished_at = NULL where run_id = ?", [run_id])

    def latest_of(self, campaign_sha256: str, plan_digest: str) -> dict[str, Any] | None:
        """The newest run of this campaign and plan, finished or not."""
        rows = list(self.db.query(
            "select run_id, status, created_at from runs where campaign_sha256 = ? and plan_digest = ? "
            "order by created_at desc limit 1", [campaign_sha256, plan_digest]))
        return rows[0] if rows else None

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
        # Idempotent: a resumed or concurrent writer inserts nothing twice.
        if not rows:
            return
        with self.db.conn:
            if self.db.conn.execute("select 1 from turns where run_id = ? and trajectory = ? limit 1",
                                    [run_id, trajectory]).fetchone():
                return
            self._insert_rows("turns", rows, conflict="or ignore")

    def write_unit(self, unit: dict[str, Any], tables: dict[str, Iterable[dict[str, Any]]]) -> None:
        """Write a finished unit and all its rows in one transaction (replacing a partial one)."""
        from lsrep.fragment_rows import FragmentTable  # not at import: the store alone loads fast

        run_id, unit_id = unit["run_id"], unit["unit_id"]
        with self.db.conn:
            for table in ("checkpoints", "events", "maintenance", "failures", "memory_calls", "unit_ingests",
                          "adapter_logs"):
                self.db.execute(f"delete from {table} where run_id = ? and unit_id = ?", [run_id, unit_id])
            obs_ids = [r["obs_id"] for r in self.db.query(
                "select obs_id from observations where run_id = ? and unit_id = ?", [run_id, unit_id]
            )]
            for oid in obs_ids:
                for table in ("fragments", "judgements", "llm_calls", "retrieval_gold", "lme_questions"):
                    self.db.execute(f"delete from {table} where obs_id = ?", [oid])
            self.db.execute("delete from observations where run_id = ? and unit_id = ?", [run_id, unit_id])
            for table, rows in tables.items():
                if table == "fragments":
                    if isinstance(rows, FragmentTable):
                        self._insert_fragment_table(rows)
                    else:
                        self._insert_fragments(list(rows))
                    continue
                if table == "ingests":  # per-turn rows in memory, one row per unit in the store
                    rows = list(rows)
                    table, rows = "unit_ingests", [unit_ingest_row(rows)] if rows else []
                self._insert_rows(table, rows)
            self.db["units"].upsert(unit, pk=("run_id", "unit_id"))

    def _share_texts(self, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        # Each distinct fragment text once (content-addressed); the fragment row keeps its hash.
        digests: dict[str, str] = {}
        out = []
        for row in rows:
            text = row.get("text")
            if text is not None:
                digest = digests.get(text)
                if digest is None:
                    digest = digests[text] = hashlib.sha256(text.encode("utf-8")).hexdigest()
                row = {**row, "text": None, "text_sha256": digest}
            else:
                row = {**row, "text_sha256": None}
            out.append(row)
        self.db.conn.executemany("insert or ignore into fragment_texts (sha256, text) values (?, ?)",
                                 [(d, t) for t, d in digests.items()])
        return out

    def _insert_fragments(self, rows: list[dict[str, Any]], stored: dict[str, str] | None = None) -> None:
        # Rows shaped like the first (the engine's), no free-text column: texts shared and values
        # taken in one pass, without a copy of each row. Anything else goes the general way.
        # `stored`: texts (with their digest) this transaction has already put in `fragment_texts`,
        # neither hashed nor offered again (an ignored insert changes nothing); extended here.
        names = [n for n in rows[0] if n != "text"] if rows else []
        if len(names) < 2 or "text" not in rows[0] or "text_sha256" in rows[0] or REDACTED_COLUMNS.intersection(names):
            self._insert_rows("fragments", self._share_texts(rows))
            return
        digests: dict[str, str] = {} if stored is None else stored
        new: list[tuple[str, str]] = []
        get = operator.itemgetter(*names)
        try:
            values = []
            for row in rows:
                text = row["text"]
                if text is None:
                    values.append((*get(row), None, None))
                    continue
                digest = digests.get(text)
                if digest is None:
                    digest = digests[text] = hashlib.sha256(text.encode("utf-8")).hexdigest()
                    new.append((digest, text))
                values.append((*get(row), None, digest))
        except KeyError:  # the general way stores every text of the batch (those in `stored` too)
            self._insert_rows("fragments", self._share_texts(rows))
            return
        self._columns("fragments", [*names, "text", "text_sha256"])
        self.db.conn.executemany("insert or ignore into fragment_texts (sha256, text) values (?, ?)", new)
        columns = ", ".join(f"[{n}]" for n in [*names, "text", "text_sha256"])
        self.db.conn.executemany(f"insert into [fragments] ({columns}) values ({', '.join('?' * (len(names) + 2))})",
                                 values)

    def _insert_fragment_table(self, table) -> None:
        # Rows of their own are written in one pass per run of them; a copy part as one SQL copy
        # of its source observation's rows, every column as just stored, `obs_id` replaced: the
        # values `{**row, "obs_id": ...}` gives, stored, without a row built or bound in Python.
        # Only when the store holds exactly the part's rows under the source id (this very list
        # written as an own part, and no other row under that id), else the rows are written plainly.
        batch: list[dict[str, Any]] = []
        written: dict[str, int] = {}
        own: dict[int, str] = {}
        stored: dict[str, str] = {}
        copy_sql = None
        for obs_id, rows in table.parts:
            if not rows:
                continue
            source = rows[0]["obs_id"]
            if obs_id is None or own.get(id(rows)) != source or written[source] != len(rows):
                if obs_id is None:
                    target = source
                    if any(r["obs_id"] != source for r in rows):
                        # Rows of several observations: counted one by one, never copied in SQL.
                        batch.extend(rows)
                        for r in rows:
                            written[r["obs_id"]] = written.get(r["obs_id"], 0) + 1
                        continue
                    own[id(rows)] = source
                else:
                    rows, target = [{**r, "obs_id": obs_id} for r in rows], obs_id
                batch.extend(rows)
                written[target] = written.get(target, 0) + len(rows)
                continue
            if batch:
                self._insert_fragments(batch, stored)
                batch = []
            if copy_sql is None:
                columns = [c.name for c in self.db["fragments"].columns if c.name != "obs_id"]
                names = ", ".join(f"[{n}]" for n in columns)
                copy_sql = (f"insert into [fragments] ([obs_id], {names}) select ?, {names} from [fragments] "
                            "where [obs_id] = ? order by [rank]")
            self.db.conn.execute(copy_sql, [obs_id, source])
            written[obs_id] = written.get(obs_id, 0) + len(rows)
        if batch:
            self._insert_fragments(batch, stored)

    def fragment_rows(self, obs_id: str) -> list[dict[str, Any]]:
        """An observation's fragments in rank order, with their text."""
        rows = list(self.db.query(
            "select f.*, coalesce(t.text, f.text) as full_text from fragments f "
            "left join fragment_texts t on t.sha256 = f.text_sha256 where f.obs_id = ? order by f.rank", [obs_id]))
        for row in rows:
            row["text"] = row.pop("full_text")
        return rows

    def _insert_rows(self, table: str, rows: Iterable[dict[str, Any]], conflict: str = "") -> None:
        # Plain executemany: rows are already flat (JSON fields pre-encoded), and a unit can
        # hold hundreds of thousands of fragment rows.
        rows = list(rows)
        if not rows:
            return
        names = self._columns(table, list(rows[0]))
        # Error texts may quote what an endpoint echoed (headers, keys): masked before storing.
        masked = [i for i, n in enumerate(names) if n in REDACTED_COLUMNS]
        values = _values(rows, names)
        if masked:
            values = _masked(values, masked)
        sql = f"insert {conflict} into [{table}] ({', '.join(f'[{n}]' for n in names)}) values ({', '.join('?' * len(names))})"
        self.db.conn.executemany(sql, values)

    def _columns(self, table: str, names: list[str]) -> list[str]:
        # A table's columns as last read (a unit's write checks a dozen tables); read again before
        # any name is judged unknown, so a column added since is found.
        known = self._known_columns.get(table)
        if known is not None and known.issuperset(names):
            return names
        columns = self._known_columns[table] = frozenset(c.name for c in self.db[table].columns)
        unknown = set(names) - columns
        if unknown:
            raise ValueError(f"table {table!r} has no column(s) {sorted(unknown)}")
        return names

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
        from lsrep.redact import redact

        rows = [{**r, **{c: redact(r[c]) for c in REDACTED_COLUMNS if isinstance(r.get(c), str)}} for r in rows]
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
        return "\n".join(lines + ["", REPAIR_GUIDE]) + "\n"


REPAIR_GUIDE = """## Integrity and repair

Fragment text is content-addressed: `fragments.text_sha256` names a row of `fragment_texts`
(each distinct text stored once); `fragments.text` is NULL in rows written since
`m006_fragment_texts` and holds the text in older rows (`RunStore.fragment_rows` reads both).

Creation and every migration run under an inter-process lock (`<store>.open.lock`) as one
`BEGIN IMMEDIATE` transaction with their `_migrations` row, and a unit's rows land in one
transaction, so a crash leaves the store before or after each step. One process at a time
runs a campaign and plan on a store (`<store>.run-<digest>.lock`); a second waits, then
resumes or reports the finished run. The lock files hold no data and may be deleted when no
lsrep process runs.

`lsrep store check --store PATH` reports, read-only, and exits 1 when repair is needed:

- **integrity** (`PRAGMA integrity_check`). Repair: restore a copy, or salvage with
  `sqlite3 PATH .recover > dump.sql` and load the dump into a new file.
- **schema**: the applied migrations against the known ones. Pending ones are applied on the
  next open. Tables without any recorded migration mean an older lsrep was killed while
  creating the store: it holds no finished run; delete the file with its `-wal`/`-shm` and run
  again. Migrations newer than this lsrep: upgrade lsrep.
- **unfinished runs** (`running` after a crash, `interrupted` after Ctrl-C): the same
  `lsrep run` resumes them, replaying only the units not yet stored; `--fresh` starts over.
"""


def _values(rows: list[dict[str, Any]], names: list[str]) -> list[tuple[Any, ...]]:
    # One C-level lookup per row when every row has every column (the engine's rows do); a row
    # lacking one falls back to NULL for it, as `row.get` gives.
    get = operator.itemgetter(*names)
    try:
        values = [get(row) for row in rows]
    except KeyError:
        return [tuple(row.get(n) for n in names) for row in rows]
    return values if len(names) > 1 else [(v,) for v in values]


def _masked(values: list[tuple[Any, ...]], masked: list[int]) -> list[tuple[Any, ...]]:
    # `redact` on every masked column; a text repeated across rows (an event's reason) is
    # redacted once per insert (the registered secrets do not change during one).
    from lsrep.redact import redact

    seen: dict[str, str | None] = {}

    def mask(value: Any) -> Any:
        if not value or not isinstance(value, str):
            return redact(value)
        hit = seen.get(value)
        if hit is None:
            hit = seen[value] = redact(value)
        return hit

    out = []
    for row in values:
        row = list(row)
        for i in masked:
            row[i] = mask(row[i])
        out.append(tuple(row))
    return out


def _utcnow() -> str:
    # Wall-clock time for run bookkeeping only; systems never see it.
    return datetime.now(UTC).isoformat(timespec="seconds")
