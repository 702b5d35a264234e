"""`lsrep report --conditions/--trajectories` reads a subset copy of the store: every table keyed by
unit or observation must lose the rows of what is left out, including tables added by later
migrations (memory-model calls, ingest latency, adapter logs), or a partial report's cost and
latency would count units it does not show."""

from __future__ import annotations

import sqlite3

from lsrep.cli import main
from lsrep.subset import subset_store


def _two_trajectories(example):
    text = example.read_text()
    second = text.replace('id = "maya-journal"', 'id = "maya-again"')
    block = second[second.index("[[trajectories]]"):second.index("[[conditions]]")]
    example.write_text(text.replace("[[conditions]]", block + "[[conditions]]", 1))
    assert main(["run", str(example), "--quiet"]) == 0
    return example.parent.parent / "runs" / "lsrep.sqlite"


def _keyed(conn, column):
    tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
    return {t for t in tables if column in {r[1] for r in conn.execute(f"pragma table_info('{t}')")}}


def test_a_trajectory_subset_keeps_no_row_of_a_dropped_unit_or_observation(example, tmp_path):
    store = _two_trajectories(example)
    with sqlite3.connect(store) as conn:
        (run_id,) = conn.execute("select run_id from runs").fetchone()
        per_unit = {t: conn.execute(f"select count(distinct unit_id) from {t}").fetchone()[0]
                    for t in _keyed(conn, "unit_id")}
    # The tables this test is about exist and hold rows of both trajectories' units.
    assert {"unit_ingests", "memory_calls", "adapter_logs", "events", "checkpoints"} <= set(per_unit)
    assert per_unit["unit_ingests"] == per_unit["units"] == 6

    out = subset_store(store, run_id, tmp_path / "part.sqlite", trajectories=["maya-again"])
    with sqlite3.connect(out) as conn:
        units = {r[0] for r in conn.execute("select unit_id from units")}
        obs = {r[0] for r in conn.execute("select obs_id from observations")}
        assert len(units) == 3 and obs
        assert {r[0] for r in conn.execute("select distinct trajectory from observations")} == {"maya-again"}
        for table in _keyed(conn, "unit_id"):
            left = {r[0] for r in conn.execute(f"select distinct unit_id from {table} where unit_id is not null")}
            assert left <= units, f"{table} keeps rows of dropped units"
        assert conn.execute("select count(*) from unit_ingests").fetchone()[0] == 3
        for table in _keyed(conn, "obs_id"):
            left = {r[0] for r in conn.execute(f"select distinct obs_id from {table} where obs_id is not null")}
            assert left <= obs, f"{table} keeps rows of dropped observations"
    with sqlite3.connect(store) as conn:  # the source store is never changed
        assert conn.execute("select count(*) from unit_ingests").fetchone()[0] == 6


def test_a_partial_report_counts_the_ingest_latency_of_its_own_units_only(example, tmp_path):
    store = _two_trajectories(example)
    with sqlite3.connect(store) as conn:
        (run_id,) = conn.execute("select run_id from runs").fetchone()
        # Make the two trajectories' ingest figures differ, so a leak of the dropped one shows.
        conn.execute("update unit_ingests set turns = turns * 100 where unit_id in "
                     "(select unit_id from units where trajectory = 'maya-journal')")
        expected = dict(conn.execute(
            "select i.condition, sum(i.turns) from unit_ingests i join units u using (run_id, unit_id) "
            "where u.trajectory = 'maya-again' group by i.condition"))
    out = subset_store(store, run_id, tmp_path / "part.sqlite", trajectories=["maya-again"])
    with sqlite3.connect(out) as conn:
        got = dict(conn.execute("select condition, sum(turns) from unit_ingests group by condition"))
    assert got == expected and all(v < 100 for v in got.values())
