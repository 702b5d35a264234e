"""The native writers produce exactly the spec's lines, and refuse what the loaders would."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from lsrep.probes.native import (
    dangling_turn_ids,
    probe_record,
    session_turn_times,
    write_probes,
    write_trajectory,
)

from lsrep.protocol.loading import load_probes, load_trajectory
from lsrep.protocol.models import Probe, Turn

# The examples of protocol section 8, verbatim.
SPEC_TURN = (
    '{"turn_id": "t0003", "session_id": "s01", "timestamp": "2026-03-02T09:15:00+00:00", '
    '"role": "user", "speaker": "Ana", "content": "We\'ll store everything in SQLite for now."}'
)
SPEC_PROBE = (
    '{"probe_id": "db-current", "question": "Which database does the project use?", '
    '"kind": "current", "category": "knowledge-update", "before_first": "abstain", '
    '"references": [{"answer": "SQLite", "valid_from": "t0003", "valid_until": "t0042", '
    '"evidence": ["t0003"]}, {"answer": "PostgreSQL", "aliases": ["Postgres"], '
    '"valid_from": "t0042", "evidence": ["t0042"]}]}'
)


def test_spec_examples_round_trip_to_identical_bytes(tmp_path):
    turn = Turn.model_validate_json(SPEC_TURN)
    probe = Probe.model_validate_json(SPEC_PROBE)
    write_trajectory(tmp_path / "t.jsonl", [turn])
    write_probes(tmp_path / "p.jsonl", [probe])
    assert (tmp_path / "t.jsonl").read_bytes() == (SPEC_TURN + "\n").encode()
    assert (tmp_path / "p.jsonl").read_bytes() == (SPEC_PROBE + "\n").encode()


def test_optional_fields_are_omitted_and_text_is_not_escaped(tmp_path):
    when = datetime(2024, 1, 1, tzinfo=UTC)
    turn = Turn(turn_id="a", session_id="s", timestamp=when, role="assistant", content="Olá — ça va?")
    probe = Probe(probe_id="p", question="Où?", kind="abstention", ask_at=("a",))
    write_trajectory(tmp_path / "t.jsonl", [turn])
    assert "speaker" not in json.loads((tmp_path / "t.jsonl").read_text(encoding="utf-8"))
    assert "Olá — ça va?" in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert list(probe_record(probe)) == ["probe_id", "question", "kind", "before_first", "ask_at"]


def test_writer_refuses_duplicates_and_time_going_backwards(tmp_path):
    when = datetime(2024, 1, 1, tzinfo=UTC)
    first = Turn(turn_id="a", session_id="s", timestamp=when, role="user", content="x")
    earlier = Turn(turn_id="b", session_id="s", timestamp=when - timedelta(seconds=1), role="user", content="y")
    with pytest.raises(ValueError, match="duplicate turn_id"):
        write_trajectory(tmp_path / "t.jsonl", [first, first])
    with pytest.raises(ValueError, match="earlier than"):
        write_trajectory(tmp_path / "t.jsonl", [first, earlier])
    probe = Probe(probe_id="p", question="q?", kind="abstention")
    with pytest.raises(ValueError, match="duplicate probe_id"):
        write_probes(tmp_path / "p.jsonl", [probe, probe])
    assert not (tmp_path / "t.jsonl").exists()


def test_written_files_load_with_the_harness_loaders(tmp_path):
    start = datetime(2024, 1, 1, 9, tzinfo=UTC)
    turns = [
        Turn(turn_id=f"t{i}", session_id="s1", timestamp=ts, role="user", content=f"turn {i}")
        for i, ts in enumerate(session_turn_times(start, 3))
    ]
    probe = Probe.model_validate(
        {"probe_id": "p", "question": "q?", "kind": "current",
         "references": [{"answer": "x", "valid_from": "t1", "evidence": ["t1"]}]}
    )
    write_trajectory(tmp_path / "x.trajectory.jsonl", turns)
    write_probes(tmp_path / "x.probes.jsonl", [probe])
    trajectory = load_trajectory(tmp_path / "x.trajectory.jsonl")
    assert trajectory.turns == tuple(turns)
    assert load_probes(tmp_path / "x.probes.jsonl", trajectory).probes == (probe,)
    assert dangling_turn_ids([probe], turns) == {}
    assert dangling_turn_ids([probe], turns[:1]) == {"p": ["t1", "t1"]}


def test_session_turn_times_compress_to_stay_before_the_next_session():
    start = datetime(2024, 1, 1, 9, tzinfo=UTC)
    assert session_turn_times(start, 3) == [start + timedelta(minutes=i) for i in range(3)]
    squeezed = session_turn_times(start, 10, next_start=start + timedelta(minutes=2))
    assert squeezed == sorted(squeezed) and len(set(squeezed)) == 10
    assert squeezed[-1] < start + timedelta(minutes=2)
    assert session_turn_times(start, 4, next_start=start) == [start] * 4
    assert session_turn_times(start, 0) == []
