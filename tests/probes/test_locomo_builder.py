"""LoCoMo conversion over the seven shared conversations: counts, time, quirks, probes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from lsrep.probes.locomo import build_locomo, convert_locomo, parse_session_date
from lsrep.probes.native import dangling_turn_ids

from lsrep.errors import InputError
from lsrep.protocol.loading import load_probes, load_trajectory

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "locomo" / "locomo-dev7.json"

# The per-sample table of shared/datasets/locomo/README.md:
# sessions, turns, QA, then QA per category 1..5.
README_COUNTS = {
    "conv-26": (19, 419, 199, 32, 37, 13, 70, 47),
    "conv-30": (19, 369, 105, 11, 26, 0, 44, 24),
    "conv-41": (32, 663, 193, 31, 27, 8, 86, 41),
    "conv-42": (29, 629, 260, 37, 40, 11, 111, 61),
    "conv-43": (29, 680, 242, 31, 26, 14, 107, 64),
    "conv-44": (28, 675, 158, 30, 24, 7, 62, 35),
    "conv-49": (25, 509, 196, 37, 33, 13, 73, 40),
}
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")


@pytest.fixture(scope="module")
def converted():
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    return {c.sample_id: c for c in build_locomo(LOCOMO)}


def probe(converted, probe_id):
    sample = probe_id.split(":")[0]
    return next(p for p in converted[sample].probes if p.probe_id == probe_id)


def test_counts_reconcile_with_the_readme(converted):
    assert list(converted) == list(README_COUNTS)
    for sample_id, (sessions, turns, qa, *per_category) in README_COUNTS.items():
        report = converted[sample_id].report
        assert (report.sessions, report.turns, report.qa_total) == (sessions, turns, qa)
        expected = {name: n for name, n in zip(CATEGORIES, per_category, strict=True) if n}
        assert report.source_by_category == expected
        dropped = {}
        for note in report.dropped:
            dropped[note.category] = dropped.get(note.category, 0) + 1
        for name, n in expected.items():
            assert report.written_by_category.get(name, 0) + dropped.get(name, 0) == n
        assert report.probes_written == len(converted[sample_id].probes) == qa - len(report.dropped)
    total = sum(c.report.probes_written for c in converted.values())
    assert total == 1353 - 2  # the two QA items whose evidence names no turn (conv-42)


def test_the_two_unresolvable_qa_items_are_reported_not_silently_lost(converted):
    dropped = {n.probe_id: n.reason for c in converted.values() for n in c.report.dropped}
    assert set(dropped) == {"conv-42:q0058", "conv-42:q0088"}
    assert "'D10:19' is not a turn" in dropped["conv-42:q0058"]
    assert "'D' names no turn" in dropped["conv-42:q0088"]
    kept = build_locomo(LOCOMO, ["conv-42"], on_bad_evidence="discard")[0]
    lenient = next(p for p in kept.probes if p.probe_id == "conv-42:q0088")
    assert lenient.references[0].evidence == ("D1:18", "D1:20")
    assert len(kept.probes) == 260


def test_turns_keep_speakers_captions_and_dated_non_decreasing_times(converted):
    for conversation in converted.values():
        turns = conversation.turns
        assert all(t.role == "user" and t.speaker for t in turns)
        assert len({t.speaker for t in turns}) == 2
        assert all(a.timestamp <= b.timestamp for a, b in zip(turns, turns[1:], strict=False))
        conversation.trajectory()  # validates as a whole
    first = converted["conv-26"].turns[0]
    assert (first.turn_id, first.session_id) == ("D1:1", "session_1")
    assert first.timestamp == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    session_two = [t for t in converted["conv-26"].turns if t.session_id == "session_2"]
    assert session_two[0].timestamp == parse_session_date("1:14 pm on 25 May, 2023")
    assert session_two[5].timestamp == datetime(2023, 5, 25, 13, 19, tzinfo=UTC)
    shared = next(t for t in converted["conv-30"].turns if t.turn_id == "D2:1")
    assert shared.content.endswith(
        "[shares an image: a photo of a clothing store with a variety of clothes on display]"
    )
    assert sum(c.report.captioned_turns for c in converted.values()) > 0


def test_session_dates_parse_in_every_form_used(converted):
    assert parse_session_date("12:48 am on 1 February, 2023") == datetime(2023, 2, 1, 0, 48, tzinfo=UTC)
    assert parse_session_date("12:05 pm on 3 Sept, 2022") == datetime(2022, 9, 3, 12, 5, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_session_date("sometime in May")


def test_conv26_declares_sessions_it_does_not_have(converted):
    remarks = converted["conv-26"].report.remarks
    assert any("[20, 21" in r and "35]" in r for r in remarks)


def test_every_probe_names_existing_turns_and_is_asked_after_its_evidence(converted):
    for conversation in converted.values():
        index = {t.turn_id: i for i, t in enumerate(conversation.turns)}
        assert dangling_turn_ids(conversation.probes, conversation.turns) == {}
        for p in conversation.probes:
            if p.kind == "abstention":
                continue
            (version,) = p.references
            assert p.kind == "current" and p.before_first == "skip"
            if version.evidence:
                assert version.valid_from == max(version.evidence, key=index.__getitem__)
            else:
                assert version.valid_from == conversation.turns[-1].turn_id


def test_adversarial_questions_become_abstention_probes(converted):
    adversarial = [p for c in converted.values() for p in c.probes if p.category == "adversarial"]
    assert len(adversarial) == 312
    assert all(p.kind == "abstention" and not p.references and len(p.ask_at) == 1 for p in adversarial)
    assert all(p.kind != "abstention" for c in converted.values() for p in c.probes if p.category != "adversarial")
    notes = [n for n in converted["conv-26"].report.notes if "also has answer" in n.reason]
    assert [n.probe_id for n in notes] == ["conv-26:q0167", "conv-26:q0178"]


def test_evidence_and_answer_quirks_are_repaired(converted):
    split = probe(converted, "conv-26:q0037").references[0]
    assert split.evidence == ("D8:6", "D9:17") and split.valid_from == "D9:17"
    assert "D11:26" in probe(converted, "conv-43:q0018").references[0].evidence
    spaced = probe(converted, "conv-49:q0046").references[0]
    assert spaced.evidence == ("D21:18", "D21:22", "D11:15", "D11:19") and spaced.valid_from == "D21:22"
    repaired = [n for c in converted.values() for n in c.report.notes if n.action == "repaired"]
    assert len(repaired) == 5
    int_answer = probe(converted, "conv-26:q0001").references[0]
    assert int_answer.answer == "2022"
    cut = next(p for c in converted.values() for p in c.probes
               if p.references and p.references[0].aliases == ("National park; she likes the outdoors",))
    assert cut.references[0].answer == "National park" and cut.category == "open-domain"
    no_evidence = probe(converted, "conv-26:q0030")
    assert no_evidence.references[0].valid_from == converted["conv-26"].turns[-1].turn_id


def test_convert_writes_loadable_deterministic_files(tmp_path):
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    report = convert_locomo(LOCOMO, tmp_path / "a", ["conv-30", "conv-42"])
    convert_locomo(LOCOMO, tmp_path / "b", ["conv-30", "conv-42"])
    assert report.qa_total == 365 and report.probes_written == 363
    assert [n.probe_id for n in report.dropped] == ["conv-42:q0058", "conv-42:q0088"]
    for name in ("conv-30", "conv-42"):
        for kind in ("trajectory", "probes"):
            a = (tmp_path / "a" / f"{name}.{kind}.jsonl").read_bytes()
            assert a == (tmp_path / "b" / f"{name}.{kind}.jsonl").read_bytes()
        trajectory = load_trajectory(tmp_path / "a" / f"{name}.trajectory.jsonl")
        assert trajectory.trajectory_id == name
        load_probes(tmp_path / "a" / f"{name}.probes.jsonl", trajectory)
    assert (tmp_path / "a" / "locomo-conversion.json").exists()


def test_unknown_sample_is_an_input_error(tmp_path):
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    with pytest.raises(InputError, match="conv-99"):
        build_locomo(LOCOMO, ["conv-99"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(InputError, match="list of samples"):
        build_locomo(bad)
