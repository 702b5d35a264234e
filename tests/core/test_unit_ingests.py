"""Ingest latency is stored once per unit (issue 18's store size), and old per-turn rows migrate."""

from __future__ import annotations

import json

import sqlite_utils

from lsrep.migrations import m014_unit_ingests, unit_ingest_row


def _rows(unit: str, n: int, failed: set[int] = frozenset()) -> list[dict]:
    return [{"run_id": "r1", "unit_id": unit, "condition": "c", "seq": i, "turn_id": f"{unit}-t{i}",
             "elapsed_ms": 0.5 + i, "status": "failed" if i in failed else "ok"} for i in range(n)]


def test_a_unit_row_keeps_every_turn_in_order_and_counts_failures():
    row = unit_ingest_row(_rows("u", 4, failed={2}))
    assert (row["turns"], row["failed"], row["total_ms"]) == (4, 1, 0.5 + 1.5 + 2.5 + 3.5)
    assert json.loads(row["turn_ids"]) == ["u-t0", "u-t1", "u-t2", "u-t3"]
    assert json.loads(row["elapsed_ms"]) == [0.5, 1.5, 2.5, 3.5]


def test_per_turn_rows_of_an_old_store_become_one_row_per_unit():
    db = sqlite_utils.Database(memory=True)
    db["ingests"].create({"run_id": str, "unit_id": str, "condition": str, "seq": int, "turn_id": str,
                          "elapsed_ms": float, "status": str}, pk=("run_id", "unit_id", "seq"))
    old = _rows("a", 3) + _rows("b", 2, failed={1})
    db["ingests"].insert_all(reversed(old))  # stored out of order: the migration orders by seq
    m014_unit_ingests(db)
    assert "ingests" not in db.table_names()
    got = {r["unit_id"]: r for r in db["unit_ingests"].rows}
    assert json.loads(got["a"]["turn_ids"]) == ["a-t0", "a-t1", "a-t2"]
    assert (got["b"]["turns"], got["b"]["failed"]) == (2, 1)
