"""LongMemEval: the genuine fragment, gold kept apart, and streaming with bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from lsrep.probes.generator import generate_longmemeval_file
from lsrep.probes.longmemeval import iter_json_records, iter_longmemeval, parse_date
from lsrep.probes.native import dangling_turn_ids, probe_record, turn_record

from lsrep.errors import InputError

FRAGMENT = (
    Path(__file__).resolve().parents[3]
    / "shared" / "datasets" / "longmemeval_oracle_fragment" / "longmemeval_sample.json"
)
OFFICIAL_FIELDS = {
    "question_id", "question_type", "question", "answer", "question_date", "haystack_dates",
    "haystack_session_ids", "haystack_sessions", "answer_session_ids",
}


@pytest.fixture(scope="module")
def items():
    if not FRAGMENT.exists():
        pytest.skip(f"LongMemEval fragment not found at {FRAGMENT}")
    return {item.question_id: item for item in iter_longmemeval(FRAGMENT)}


def test_fragment_gives_two_items_with_their_types_and_probes(items):
    assert list(items) == ["6a1eabeb", "gpt4_70e84552_abs"]
    update, abstain = items["6a1eabeb"], items["gpt4_70e84552_abs"]
    assert (update.question_type, abstain.question_type) == ("knowledge-update", "temporal-reasoning")
    assert update.probe.kind == "current" and update.probe.category == "knowledge-update"
    (version,) = update.probe.references
    assert version.answer == "25 minutes and 50 seconds (or 25:50)"
    assert version.valid_from == update.trajectory[0].turn_id
    assert update.probe.ask_at == (update.trajectory[-1].turn_id,)
    assert abstain.probe.kind == "abstention" and not abstain.probe.references
    for item in items.values():
        assert len(item.trajectory) == 24 and item.probe.probe_id == item.question_id
        assert dangling_turn_ids([item.probe], item.trajectory) == {}
        item.as_trajectory()


def test_sessions_and_turns_are_dated_in_order(items):
    for item in items.values():
        times = [t.timestamp for t in item.trajectory]
        assert times == sorted(times)
        assert [t.session_id for t in item.trajectory][::12] == ["s001", "s002"]
        assert [t.role for t in item.trajectory[:2]] == ["user", "assistant"]
    update = items["6a1eabeb"]
    assert update.trajectory[0].timestamp == parse_date("2023/05/25 (Thu) 20:21")
    assert update.trajectory[12].timestamp == parse_date("2023/05/27 (Sat) 10:20")
    assert update.checkpoint_time == update.question_date == parse_date("2023/06/01 (Thu) 00:58")
    assert update.notes == ()


def test_question_dated_before_its_last_session_moves_the_checkpoint_and_says_so(items):
    item = items["gpt4_70e84552_abs"]
    assert item.question_date == parse_date("2023/05/30 (Tue) 08:08")
    assert item.checkpoint_time == item.trajectory[-1].timestamp > item.question_date
    assert len(item.notes) == 1 and "precedes the last turn" in item.notes[0]


def test_gold_is_kept_apart_from_everything_an_adapter_receives(items):
    update, abstain = items["6a1eabeb"], items["gpt4_70e84552_abs"]
    assert update.gold.answer_session_ids == ("answer_a25d4a91_1", "answer_a25d4a91_2")
    assert update.gold.answer_sessions == ("s001", "s002")
    assert update.gold.evidence_turn_ids == ("s001:t004", "s002:t000")  # README: s1 turn 4, s2 turn 0
    assert abstain.gold.evidence_turn_ids == ("s001:t000",)
    assert update.gold.session_id_map["s002"] == "answer_a25d4a91_2"
    for item in items.values():
        visible = json.dumps([turn_record(t) for t in item.trajectory]) + item.trajectory_id
        assert "has_answer" not in visible and "answer_" not in visible and "abs" not in item.trajectory_id
        assert all(set(t.model_dump()) == {"turn_id", "session_id", "timestamp", "role", "speaker",
                                           "content"} for t in item.trajectory)
        assert all(not v.evidence for v in item.probe.references)
        assert "answer_" not in json.dumps(probe_record(item.probe))


def test_unsorted_haystack_is_replayed_in_date_order(tmp_path, items):
    record = json.loads(FRAGMENT.read_text(encoding="utf-8"))[0]
    for key in ("haystack_sessions", "haystack_dates", "haystack_session_ids"):
        record[key] = record[key][::-1]
    path = tmp_path / "reversed.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    (item,) = iter_longmemeval(path)
    assert item.trajectory == items["6a1eabeb"].trajectory
    corpus = ("corpus_ids", "corpus_turns")
    assert item.gold.model_dump(exclude=set(corpus)) == items["6a1eabeb"].gold.model_dump(exclude=set(corpus))
    # The official corpus follows the file's session order; the same items, reversed by session.
    assert (set(zip(item.gold.corpus_ids, item.gold.corpus_turns, strict=True))
            == set(zip(items["6a1eabeb"].gold.corpus_ids, items["6a1eabeb"].gold.corpus_turns, strict=True)))
    assert item.gold.corpus_ids != items["6a1eabeb"].gold.corpus_ids


def test_stream_parser_matches_json_load_at_any_chunk_size(tmp_path):
    if not FRAGMENT.exists():
        pytest.skip(f"LongMemEval fragment not found at {FRAGMENT}")
    expected = json.loads(FRAGMENT.read_text(encoding="utf-8"))
    for chunk in (1, 7, 4096):
        assert [v for _, _, v in iter_json_records(FRAGMENT, chunk_size=chunk)] == expected
    odd = [{"é": "ünïcödé ✓ " * 50, "n": 1.5e3}, [1, 2, [3]], "text", 12345, None, {}]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(odd, ensure_ascii=False, indent=1), encoding="utf-8")
    assert [v for _, _, v in iter_json_records(path, chunk_size=3)] == odd
    lines = tmp_path / "odd.jsonl"
    lines.write_text("\n".join(json.dumps(v) for v in odd[:1] + [{"a": 1}]) + "\n", encoding="utf-8")
    assert [v for _, _, v in iter_json_records(lines, chunk_size=5)] == odd[:1] + [{"a": 1}]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[{"a": 1}, {"b": 2}', "missing ']'"),
        ('[{"a": 1} {"b": 2}]', "expected ',' or ']' after record 0"),
        ('[{"a": 1}, {"b": }]', "record 1: invalid JSON"),
        ('[{"a": 1}] x', "after the closing ']'"),
        ("", "empty"),
        ("42", "expected a JSON array"),
    ],
)
def test_malformed_files_are_input_errors_naming_the_record(tmp_path, text, reason):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=reason):
        list(iter_json_records(path, chunk_size=4))


def test_malformed_records_name_the_question(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"question_id": "q1", "question_type": "multi-session"}]))
    with pytest.raises(InputError, match=r"record 0 \(q1\): missing field 'haystack_sessions'"):
        list(iter_longmemeval(path))
    record = {"question_id": "q2", "question_type": "x", "question": "?", "answer": "a",
              "question_date": "yesterday", "haystack_dates": [], "haystack_session_ids": [],
              "haystack_sessions": [], "answer_session_ids": []}
    path.write_text(json.dumps([record]))
    with pytest.raises(InputError, match="unrecognised LongMemEval date"):
        list(iter_longmemeval(path))


def test_loader_streams_a_generated_file_with_bounded_memory(tmp_path):
    path = generate_longmemeval_file(tmp_path / "s.json", n_questions=40, sessions_per_question=50, seed=3)
    size = path.stat().st_size
    assert size > 15_000_000
    peaks = []
    tracemalloc.start()
    try:
        count = 0
        for item in iter_longmemeval(path):
            count += 1
            assert len({t.session_id for t in item.trajectory}) == 50
            assert set(item.gold.answer_sessions) <= set(item.gold.session_id_map)
            assert item.gold.evidence_turn_ids
            if count % 10 == 0:  # peak over each quarter of the file
                peaks.append(tracemalloc.get_traced_memory()[1])
                tracemalloc.reset_peak()
    finally:
        tracemalloc.stop()
    assert count == 40
    # Memory is one record's worth (~0.5 MB here) plus the read buffer, whatever the file size.
    assert max(peaks) < size / 2.5, f"peaks {peaks} for a {size}-byte file"
    assert max(peaks[1:]) < 1.5 * peaks[0], f"memory grows along the file: {peaks}"


def test_generated_file_has_the_official_schema(tmp_path):
    path = generate_longmemeval_file(tmp_path / "s.json", n_questions=60, sessions_per_question=3, seed=1)
    records = json.loads(path.read_text(encoding="utf-8"))
    assert len(records) == 60
    for record in records:
        assert set(record) == OFFICIAL_FIELDS
        assert len(record["haystack_sessions"]) == len(record["haystack_dates"]) >= 3
        assert set(record["answer_session_ids"]) <= set(record["haystack_session_ids"])
        dates = [parse_date(d) for d in record["haystack_dates"]]
        assert dates == sorted(dates) and parse_date(record["question_date"]) > dates[-1]
        for sid, session in zip(record["haystack_session_ids"], record["haystack_sessions"], strict=True):
            if sid in record["answer_session_ids"]:  # labelled throughout, as the official code asserts
                assert all(t["has_answer"] in (True, False) for t in session)
                assert any(t["has_answer"] for t in session)
            else:
                assert all("has_answer" not in t for t in session)
    assert any(r["question_id"].endswith("_abs") for r in records)
    assert generate_longmemeval_file(tmp_path / "again.json", n_questions=60, sessions_per_question=3,
                                     seed=1).read_bytes() == path.read_bytes()


def test_errors_name_the_line_and_non_utf8_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[\n{"a": 1},\n{"b": }\n]\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_json_records(path, chunk_size=2))
    assert caught.value.line == 3
    path.write_bytes(b'[{"a": "\xff\xfe"}]')
    with pytest.raises(InputError, match="not UTF-8"):
        list(iter_json_records(path))
    path.write_bytes('\ufeff[{"a": 1}]'.encode())
    assert [v for _, _, v in iter_json_records(path)] == [{"a": 1}]


def test_turns_built_without_revalidation_equal_validated_turns(tmp_path):
    """The loader builds each turn with `Turn.model_construct` after its own checks: the turns equal
    `Turn(...)`'s field for field (dump, set fields, equality), and an empty role is still refused
    as `Turn(...)` refuses it, naming the question."""
    from lsrep.protocol.models import Turn

    data = generate_longmemeval_file(tmp_path / "g.json", n_questions=6, sessions_per_question=4, seed=2,
                                     turns_per_session=3, turn_tokens=20)
    records = json.loads(data.read_text())
    records[0]["haystack_sessions"][0][0]["content"] = 7  # not a str in the file: str() of it, as before
    data.write_text(json.dumps(records))
    for item in iter_longmemeval(data):
        for turn in item.trajectory:
            validated = Turn(**turn.model_dump(exclude_unset=True))
            assert turn == validated and turn.model_fields_set == validated.model_fields_set
            assert turn.model_dump(mode="json") == validated.model_dump(mode="json")
            assert type(turn.content) is str and turn.timestamp.utcoffset() is not None
        item.as_trajectory()  # the trajectory model accepts them
    records[1]["haystack_sessions"][1][0]["role"] = ""
    data.write_text(json.dumps(records))
    with pytest.raises(InputError, match=rf"record 1 \({records[1]['question_id']}\): .*role"):
        list(iter_longmemeval(data))
