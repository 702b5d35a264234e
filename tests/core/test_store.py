"""The store migrates on open, and its documented schema is the live one."""

from __future__ import annotations

from pathlib import Path

from lsrep.store import MIGRATIONS, RunStore

REPO = Path(__file__).resolve().parents[2]


def test_schema_document_is_current(tmp_path):
    live = RunStore(tmp_path / "s.sqlite").schema_markdown()
    assert (REPO / "docs" / "store-schema.md").read_text() == live, "run `lsrep store schema -o docs/store-schema.md`"


def test_reopening_applies_each_migration_once(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path)
    store = RunStore(path)
    names = [r["name"] for r in store.rows("select name from _migrations order by name")]
    assert names == [name for name, _ in MIGRATIONS]


def test_old_store_gets_new_migrations(tmp_path):
    import sqlite_utils

    path = tmp_path / "old.sqlite"
    db = sqlite_utils.Database(path)
    db["_migrations"].create({"name": str, "applied_at": str}, pk="name")
    name, first = MIGRATIONS[0]
    first(db)
    db["_migrations"].insert({"name": name, "applied_at": "then"})
    db.conn.close()
    store = RunStore(path)
    assert "llm_calls" in store.db.table_names()
