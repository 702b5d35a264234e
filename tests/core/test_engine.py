"""Replays of the bundled example and of misbehaving adapters, end to end through the store."""

from __future__ import annotations

import json
from pathlib import Path

from lsrep.exporting import export_rows
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def outcomes(store: RunStore, run_id: str, condition: str, probe_id: str) -> list[str]:
    rows = store.rows(
        "select j.outcome from observations o join judgements j on j.obs_id = o.obs_id and j.judge = 'deterministic' "
        "where o.run_id = ? and o.condition = ? and o.probe_id = ? order by o.checkpoint",
        [run_id, condition, probe_id],
    )
    return [r["outcome"] for r in rows]


def add_condition(campaign: Path, block: str) -> None:
    campaign.write_text(campaign.read_text().replace("[answerer]", block + "\n[answerer]"))


def test_example_shows_stale_abstention_and_no_leaks(example):
    out = run_campaign(example)
    store = RunStore(out.store_path)
    for cond in ("full-context", "vector-rag"):
        # Lisbon until the move in session 3, then the old city comes back: stale.
        assert outcomes(store, out.run_id, cond, "city-current")[:2] == ["correct", "correct"]
        assert "stale" in outcomes(store, out.run_id, cond, "city-current")[2:]
        # Before the manager is named, abstaining is correct; after, he is found.
        manager = outcomes(store, out.run_id, cond, "manager-current")
        assert manager[:3] == ["abstained"] * 3 and manager[3] == "correct"
        assert set(outcomes(store, out.run_id, cond, "dog-name")) == {"abstained"}
    assert set(outcomes(store, out.run_id, "null", "city-current")) == {"abstained"}
    leaks = store.rows("select sum(proven_leak) as n from observations where run_id = ?", [out.run_id])[0]["n"]
    assert leaks == 0
    # Checkpoints record that every system saw the same history.
    digests = store.rows(
        "select ordinal, count(distinct ingested_sha256) as d, count(distinct prefix_sha256) as p, "
        "sum(ingested_sha256 = prefix_sha256) as same from checkpoints where run_id = ? group by ordinal",
        [out.run_id],
    )
    assert all(r["d"] == 1 and r["p"] == 1 for r in digests)


def test_leaky_adapter_is_caught(example):
    traj = example.parent / "quickstart" / "trajectory.jsonl"
    add_condition(example, f'''[[conditions]]
name = "leaky"
system = "tests.core.adapters_for_tests:LeakyAdapter"
options = {{ trajectory_path = "{traj}" }}
''')
    # In-process: in its adapter host the trajectory file is covered (tests/host/test_host_view.py).
    out = run_campaign(example, adapter_host="in-process")
    store = RunStore(out.store_path)
    rows = store.rows("select condition, sum(proven_leak > 0) as n, count(*) as total from observations "
                      "where run_id = ? group by condition", [out.run_id])
    by = {r["condition"]: r for r in rows}
    last = store.rows("select count(*) as n from observations where run_id = ? and condition = 'leaky' "
                      "and checkpoint = 5", [out.run_id])[0]["n"]
    # Every observation before the final checkpoint holds a future turn; the final one cannot.
    assert by["leaky"]["n"] == by["leaky"]["total"] - last
    assert by["full-context"]["n"] == 0 and by["vector-rag"]["n"] == 0
    leaked = store.rows("select count(*) as n from fragments f join observations o using (obs_id) "
                        "where o.run_id = ? and o.condition = 'leaky' and f.leak = 1", [out.run_id])[0]["n"]
    assert leaked > 0


def _export(out) -> list[dict]:
    rows = export_rows(RunStore(out.store_path), out.run_id)
    for row in rows:
        row.pop("obs_id"), row.pop("run_id")
    return rows


def test_same_campaign_twice_gives_identical_observations(example):
    first = run_campaign(example, fresh=True)
    second = run_campaign(example, fresh=True)
    assert first.run_id != second.run_id
    assert json.dumps(_export(first), sort_keys=True) == json.dumps(_export(second), sort_keys=True)


def test_failures_become_rows_not_skips(example):
    add_condition(example, '''[[conditions]]
name = "flaky"
system = "tests.core.adapters_for_tests:FlakyAdapter"

[[conditions]]
name = "ingest-crash"
system = "tests.core.adapters_for_tests:IngestCrashAdapter"
''')
    text = example.read_text().replace('schedule = "../schedules/session-end.toml"', '''
[schedule]
name = "with-decay"
[schedule.checkpoints]
at = ["session_end"]
[[schedule.maintenance]]
operation = "decay"
at = "session_end"''')
    # Inline schedule tables must come before the array tables in TOML: move it to the top.
    head, _, rest = text.partition("\n[[trajectories]]")
    example.write_text(head + "\n[[trajectories]]" + rest)
    out = run_campaign(example)
    store = RunStore(out.store_path)
    planned = store.rows("select count(*) as n from observations where run_id = ? and condition = 'null'",
                         [out.run_id])[0]["n"]
    for cond in ("flaky", "ingest-crash"):
        n = store.rows("select count(*) as n from observations where run_id = ? and condition = ?",
                       [out.run_id, cond])[0]["n"]
        assert n == planned  # nothing skipped
    flaky_errors = store.rows("select probe_id, error from observations where run_id = ? and condition = 'flaky' "
                              "and status = 'error'", [out.run_id])
    assert {r["probe_id"] for r in flaky_errors} == {"wedding-date"}
    assert all("index corrupted" in r["error"] for r in flaky_errors)
    maint = store.rows("select m.status, count(*) as n from maintenance m join units u using (run_id, unit_id) "
                       "where m.run_id = ? and u.condition = 'flaky' group by m.status", [out.run_id])
    assert maint == [{"status": "failed", "n": 6}]
    unsupported = store.rows("select count(*) as n from maintenance m join units u using (run_id, unit_id) "
                             "where m.run_id = ? and u.condition = 'null' and m.status = 'unsupported'",
                             [out.run_id])[0]["n"]
    assert unsupported == 6
    crash = store.rows("select status, error from units where run_id = ? and condition = 'ingest-crash'",
                       [out.run_id])[0]
    assert crash["status"] == "failed" and "cannot parse turn" in crash["error"]
    # Observations before the crash are real; after it they are error rows, none imputed.
    statuses = store.rows("select checkpoint, status from observations where run_id = ? and "
                          "condition = 'ingest-crash' group by checkpoint", [out.run_id])
    assert statuses[0]["status"] == "ok" and statuses[-1]["status"] == "error"
    judged = store.rows("select j.outcome from judgements j join observations o using (obs_id) "
                        "where o.run_id = ? and o.condition = 'ingest-crash' and o.status = 'error'", [out.run_id])
    assert {r["outcome"] for r in judged} == {"error"}


def test_isolated_access_snapshots_and_refuses_unsnapshottable(example, tmp_path):
    text = example.read_text().replace("session-end.toml", "session-end-isolated.toml")
    example.write_text(text)
    out = run_campaign(example)
    store = RunStore(out.store_path)
    n = store.rows("select count(*) as n from observations where run_id = ? and status = 'ok'", [out.run_id])[0]["n"]
    assert n == 189
    add_condition(example, '''[[conditions]]
name = "leaky"
system = "tests.core.adapters_for_tests:LeakyAdapter"
options = { trajectory_path = "x" }
''')
    import pytest

    from lsrep.errors import ConfigError

    with pytest.raises(ConfigError, match="isolated"):
        run_campaign(example)


def test_isolated_probes_leave_every_system_state_unchanged(example):
    """Probes under isolation cannot reinforce or prime anything: digests before and after match."""
    text = example.read_text().replace("session-end.toml", "session-end-isolated.toml")
    example.write_text(text.replace("[answerer]", '''[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "exia-seed"
system = "exia-seed"

[[conditions]]
name = "thalia"
system = "thalia"
options = { probe_appends = true }

[answerer]'''))
    out = run_campaign(example)
    store = RunStore(out.store_path)
    rows = store.rows("select c.unit_id, c.state_digest, c.state_digest_after from checkpoints c "
                      "where c.run_id = ?", [out.run_id])
    assert len(rows) == 6 * 6
    assert all(r["state_digest"] and r["state_digest"] == r["state_digest_after"] for r in rows)
    assert store.rows("select count(*) n from failures where run_id = ? and phase = 'isolation'",
                      [out.run_id])[0]["n"] == 0


def test_a_query_that_mutates_state_is_caught_under_isolation(example):
    example.write_text(example.read_text().replace("session-end.toml", "session-end-isolated.toml").replace(
        "[answerer]", '''[[conditions]]
name = "sticky"
system = "tests.core.adapters_for_tests:StickyRestoreAdapter"

[answerer]'''))
    out = run_campaign(example)
    store = RunStore(out.store_path)
    failures = store.rows("select message from failures where run_id = ? and phase = 'isolation'", [out.run_id])
    assert len(failures) == 6 and "state differs" in failures[0]["message"]
