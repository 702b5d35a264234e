"""The Memory Gate's events and decisions, exactly (mutation-guided), and the MMR/recency corners."""

from __future__ import annotations

from datetime import timedelta

from lsrep.systems.thalia.fusion import Scored, apply_recency, mmr_order
from thalia_testkit import T0


def test_a_non_consolidating_turn_reports_the_gate_ineligible_with_its_reason(make, recorder):
    t = make()
    out = t.append_turn("the weather is mild today", role="user", session_id="s1", timestamp=T0, source_id="a")
    assert out.action == "none" and not out.requires_consolidation
    consolidate = recorder.of("gate.consolidate")
    assert [(e.stage, e.reason) for e in consolidate] == [("ineligible", "requires_consolidation is false")]
    appended = recorder.of("gate.append")
    assert [(e.stage, e.count) for e in appended] == [("eligible", None), ("executed", 1), ("output", 1)]


def test_a_consolidating_turn_reports_eligible_executed_and_output_once(make, recorder):
    t = make()
    out = t.append_turn("I now live in Lisbon", role="user", session_id="s1", timestamp=T0, source_id="a")
    assert out.action == "append_memory"
    stages = [(e.stage, e.count) for e in recorder.of("gate.consolidate")]
    assert stages == [("eligible", None), ("executed", 1), ("output", 1)]
    assert recorder.of("gate.consolidate", "eligible")[0].params["criteria"] == ["novel_class"]


def test_only_a_users_words_can_ask_for_memory(make):
    t = make()
    out = t.append_turn("Remember that my code is 4411", role="assistant", session_id="s1", timestamp=T0,
                        source_id="a")
    assert out.criteria["explicit"] is False and out.requires_consolidation is False and out.action == "none"


def test_a_role_read_from_a_file_is_still_the_user(make):
    t = make()
    role = "".join(["us", "er"])  # not an interned literal, as when parsed from JSON
    out = t.append_turn("I now live in Lisbon", role=role, session_id="s1", timestamp=T0, source_id="a")
    assert out.criteria["novel_class"] and out.action == "append_memory"


def test_a_probe_previews_without_session_end_and_needs_both_keys(make, recorder):
    t = make()
    t.answer("what is the weather like", timestamp=T0)  # no r_N; a novel class holds
    preview = recorder.of("gate.append", "skipped")[-1].params
    assert preview["session_end"] is False and preview["novel_class"] is True
    assert preview["would_consolidate"] is False and preview["r_N"] is False
    recorder.clear()
    t.answer("remember that my locker code is 4411", timestamp=T0 + timedelta(minutes=1))
    preview = recorder.of("gate.append", "skipped")[-1].params
    assert preview["would_consolidate"] is True and preview["explicit"] is True


def test_recency_rounds_the_first_transcript_position_too():
    out = apply_recency([Scored(0, 0.123456789123, 0), Scored(1, 0.1, 4)], 0.1)
    assert {it.doc: it.score for it in out}[0] == 0.12345679


def test_mmr_counts_negative_similarity_as_no_redundancy():
    # rel = [1, 0, .2]; a negative similarity must not make item 1 look novel-er than "no overlap".
    sims = {(1, 0): -0.9}
    assert mmr_order([1.0, 0.5, 0.6], lambda i, j: sims.get((i, j), 0.0), 0.5) == [0, 2, 1]


def test_mmr_ties_on_value_go_to_the_more_relevant_item():
    # rel = [1, .3, .5, 0]; after 0: MMR(1) = .15, MMR(2) = .25 - .1 = .15 -> the more relevant (2) first.
    sims = {(2, 0): 0.2}
    assert mmr_order([1.0, 0.3, 0.5, 0.0], lambda i, j: sims.get((i, j), 0.0), 0.5)[:2] == [0, 2]
