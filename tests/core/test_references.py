"""The worked example of protocol section 7, and the other resolution rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lsrep.judge.campaign import case_from_row
from lsrep.judge.deterministic import judge_deterministic
from lsrep.protocol.models import Probe, ReferenceVersion, Trajectory, Turn
from lsrep.references import resolve_expected


def _trajectory(n: int = 60) -> Trajectory:
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    turns = tuple(
        Turn(turn_id=f"t{i}", session_id=f"s{i // 10}", timestamp=t0 + timedelta(hours=i), role="user", content=f"turn {i}")
        for i in range(1, n + 1)
    )
    return Trajectory(trajectory_id="db", turns=turns)


SQLITE = ReferenceVersion(answer="SQLite", valid_from="t3", valid_until="t42", evidence=("t3",))
POSTGRES = ReferenceVersion(answer="PostgreSQL", aliases=("Postgres",), valid_from="t42", evidence=("t42",))
CURRENT = Probe(probe_id="db", question="Which database does the project use?", kind="current",
                before_first="abstain", references=(SQLITE, POSTGRES))
HISTORICAL = Probe(probe_id="db-first", question="Which database did the project start with?", kind="historical",
                   references=(ReferenceVersion(answer="SQLite", valid_from="t3", evidence=("t3",)),))
EVOLUTION = Probe(probe_id="db-evo", question="Which databases has the project used?", kind="evolution",
                  references=(SQLITE, POSTGRES))


def label(probe: Probe, prefix_len: int, answer: str) -> str:
    index = _trajectory().index_of()
    exp = resolve_expected(probe, index, prefix_len)
    row = {"question": probe.question, "answer": answer, "kind": probe.kind, "category": probe.category,
           "expected": exp.model_dump_json(), "sim_time": None}
    return judge_deterministic(case_from_row(row)).outcome


def test_between_t3_and_t42_sqlite_is_correct_and_postgres_is_future():
    assert label(CURRENT, 10, "SQLite") == "correct"
    assert label(CURRENT, 10, "We use PostgreSQL") == "future"


def test_after_t42_postgres_is_correct_and_sqlite_is_stale():
    assert label(CURRENT, 50, "Postgres") == "correct"
    assert label(CURRENT, 50, "SQLite") == "stale"


def test_historical_stays_fixed_after_revision():
    assert label(HISTORICAL, 10, "SQLite") == "correct"
    assert label(HISTORICAL, 50, "SQLite") == "correct"


def test_evolution_expects_versions_in_order():
    assert label(EVOLUTION, 50, "SQLite, then PostgreSQL") == "correct"
    assert label(EVOLUTION, 50, "PostgreSQL, then SQLite") != "correct"
    assert label(EVOLUTION, 10, "SQLite") == "correct"


def test_before_first_abstain_and_skip():
    index = _trajectory().index_of()
    exp = resolve_expected(CURRENT, index, 2)
    assert exp.ask and exp.expect_abstain
    assert label(CURRENT, 2, "I don't know.") == "abstained"
    skip = CURRENT.model_copy(update={"before_first": "skip"})
    assert not resolve_expected(skip, index, 2).ask


def test_a_turn_arrives_when_its_prefix_includes_it():
    index = _trajectory().index_of()
    # t3 is the third turn: a prefix of 3 turns includes it, 2 does not.
    assert resolve_expected(CURRENT, index, 3).in_force == (SQLITE,)
    assert resolve_expected(CURRENT, index, 42).in_force == (POSTGRES,)
    assert resolve_expected(CURRENT, index, 41).in_force == (SQLITE,)


def test_abstention_probe_expects_abstention_everywhere():
    probe = Probe(probe_id="pet", question="What is the dog's name?", kind="abstention")
    index = _trajectory().index_of()
    for prefix in (0, 10, 60):
        exp = resolve_expected(probe, index, prefix)
        assert exp.ask and exp.expect_abstain
    assert label(probe, 10, "I don't know") == "abstained"
    assert label(probe, 10, "Rex") == "wrong"


def test_withdrawn_fact_expects_abstention():
    probe = Probe(probe_id="w", question="q?", kind="current",
                  references=(ReferenceVersion(answer="X", valid_from="t3", valid_until="t5"),))
    exp = resolve_expected(probe, _trajectory().index_of(), 10)
    assert exp.expect_abstain and exp.superseded


def test_ask_at_limits_checkpoints():
    probe = CURRENT.model_copy(update={"ask_at": ("t20",)})
    index = _trajectory().index_of()
    assert not resolve_expected(probe, index, 10).ask
    assert resolve_expected(probe, index, 20).ask
