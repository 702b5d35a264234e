"""The provider's turn gate and consolidation trigger, exactly: which turns are written, the
events of each step, and when a consolidation runs, is queued or is dropped.

Killing tests for scripts/mutation/exia-rules.toml (provider.py: `active`, `sync_turn`,
`on_session_switch`'s reset, `_close_and_trigger`, `_trigger`, `_run_queued`, `_consolidate`).
"""

from __future__ import annotations

from pathlib import Path

from exia_testkit import at
from lsrep.systems.exia_seed import ExiaSeedProvider

GATE = ("ingest.gate", "ingest.retention", "ingest.mask", "batch.close", "consolidate.trigger", "consolidate")
COUNTERS = {"tours_ignores": 0, "tours_omis": 0, "secrets_masques": 0, "retraits": 0, "consolidations": 0,
            "consolidations_sautees": 0, "prefetch_queue": 0}


def trace(r, mechanisms=GATE) -> list[tuple]:
    """(mechanism, stage, reason, count) of the turn gate and trigger events, in order."""
    return [(e.mechanism, e.stage, e.reason, e.count) for e in r.events if e.mechanism in mechanisms]


def counters(**changed: int) -> dict[str, int]:
    return {**COUNTERS, **changed}


def raw_lines(r) -> list[str]:
    return [line for p in sorted((r.root / "brut").glob("*.md")) for line in p.read_text().splitlines()]


def consolidations(r) -> list[str]:
    """The trigger reason of each consolidation that ran."""
    return [e.reason for e in r.events if e.mechanism == "consolidate" and e.stage == "eligible"]


# -- the turn gate -------------------------------------------------------------------------------

def test_primary_contexts_write_the_turn_and_others_are_skipped(rig):
    for context in (None, "", "primary"):
        r = rig(context=context, auto_consolidate=False)
        assert r.provider.active is True
        r.provider.sync_turn("My dog Rex loves the big park.", "Nice!", now=at())
        assert raw_lines(r) == ["[09:00] User: My dog Rex loves the big park.", "[09:00] Assistant: Nice!"]
    sub = rig(context="subagent")
    assert sub.provider.active is False
    sub.provider.sync_turn("My dog Rex loves the big park.", "Nice!", now=at())
    assert trace(sub) == [("ingest.gate", "eligible", None, None),
                          ("ingest.gate", "skipped", "contexte non primaire", None)]
    assert sub.provider.runtime.counters == counters(tours_ignores=1)
    assert not (sub.root / "brut").exists() or raw_lines(sub) == []


def test_a_primary_provider_whose_context_changed_is_inactive(rig):
    r = rig()
    r.provider.agent_context = "cron"  # the writer exists, the context is not primary
    assert r.provider.active is False
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    assert trace(r) == [("ingest.gate", "eligible", None, None), ("ingest.gate", "skipped", "inactif", None)]
    assert raw_lines(r) == [] and r.provider.runtime.counters == counters(tours_ignores=1)


def test_an_uninitialised_provider_writes_nothing(tmp_path):
    events = []
    provider = ExiaSeedProvider(on_event=events.append)  # primary context (None), no writer
    assert provider.active is False
    provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    assert [(e.stage, e.reason) for e in events] == [("eligible", None), ("skipped", "contexte non primaire")]
    provider.on_session_end([], now=at(minutes=1))  # nothing to close, no event
    provider.on_session_switch("s2", reset=True, now=at(minutes=2))
    assert len(events) == 2 and provider.session_id == "s2"


def test_an_omitted_turn_is_not_written_and_withdraws_nothing(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("My bike is a blue Peugeot.", "", now=at())
    r.events.clear()
    r.provider.sync_turn("Forget that. Don't save this: my PIN is 1234.", "Understood.", now=at(minutes=1))
    assert trace(r) == [("ingest.gate", "eligible", None, None), ("ingest.retention", "output", "omit-current", 1),
                        ("ingest.gate", "skipped", "tour omis", None)]
    assert r.provider.runtime.counters == counters(tours_omis=1)
    assert raw_lines(r) == ["[09:00] User: My bike is a blue Peugeot."]
    assert not (r.root / "etat" / "retraits.jsonl").exists()


def test_a_withdrawal_records_the_previous_turn_and_writes_the_rest(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("My bike is a blue Peugeot.", "Nice bike!", now=at())
    r.events.clear()
    r.provider.sync_turn("Forget that. My bike is red.", "Noted.", now=at(minutes=1))
    assert trace(r) == [("ingest.gate", "eligible", None, None),
                        ("ingest.retention", "output", "withdraw-previous", 2),
                        ("ingest.mask", "executed", None, 0), ("ingest.gate", "executed", None, 2)]
    assert r.stages("ingest.retention")[0].refs == ("brut:2026-03-01-001:1", "brut:2026-03-01-001:2")
    assert r.stages("ingest.gate")[-1].refs == ("brut:2026-03-01-001:3", "brut:2026-03-01-001:4")
    assert raw_lines(r)[2:] == ["[09:01] User: My bike is red.", "[09:01] Assistant: Noted."]
    assert r.provider.runtime.counters == counters(retraits=1)
    # A withdrawal alone writes the assistant's line only.
    r.provider.sync_turn("Forget that.", "Done.", now=at(minutes=2))
    assert raw_lines(r)[4:] == ["[09:02] Assistant: Done."]
    assert r.provider.runtime.counters == counters(retraits=2)


def test_secrets_are_masked_and_counted_per_side(rig):
    r = rig(auto_consolidate=False)
    masked = []
    for minute, (user, agent) in enumerate([
            ("My password: hunter22 and token=abc123", "Your key sk-abcdefghijkl is set."),
            ("My password: hunter22", "Saved."),                     # user side only
            ("What was it?", "It is sk-abcdefghijkl."),              # assistant side only
            ("Set token=abc123 too.", "And password: hunter22."),    # one each
            ("No secret here at all.", "Fine.")]):
        r.provider.sync_turn(user, agent, now=at(minutes=minute))
        masked.append(r.provider.runtime.counters["secrets_masques"])
    assert masked == [3, 4, 5, 7, 7]
    assert [(e.stage, e.count, dict(e.params)) for e in r.stages("ingest.mask")] == [
        ("output", 3, {"user": 2, "agent": 1}), ("output", 1, {"user": 1, "agent": 0}),
        ("output", 1, {"user": 0, "agent": 1}), ("output", 2, {"user": 1, "agent": 1}),
        ("executed", 0, {"user": 0, "agent": 0})]
    assert r.provider.runtime.counters == counters(secrets_masques=7)
    raw = "\n".join(raw_lines(r))
    assert "hunter22" not in raw and "sk-abcdefghijkl" not in raw and "abc123" not in raw


def test_voice_turns_take_the_transcript(rig):
    r = rig(auto_consolidate=False)
    r.provider.sync_turn("[voice]", "", now=at(), transcript="I adopted a cat named Luna.")
    r.provider.sync_turn("[voice] again", "", now=at(minutes=1))  # no transcript: kept as said
    r.provider.sync_turn("Plain text.", "", now=at(minutes=2), transcript="Ignored transcript.")
    assert raw_lines(r) == ["[09:00] User: I adopted a cat named Luna.", "[09:01] User: [voice] again",
                            "[09:02] User: Plain text."]


def test_line_times_empty_sides_and_origins(rig):
    r = rig(auto_consolidate=False)
    # The user spoke before the turn completed: their line keeps its own time, the reply the turn's.
    r.provider.sync_turn("We hiked Mount Tam.", "Lovely.", now=at(minutes=5), user_time=at(minutes=2),
                         origins=("u1", "a1"))
    # A user time after `now` (clock skew): the reply is never written before the user's line.
    r.provider.sync_turn("Then we ate tacos.", "Yum.", now=at(minutes=6), user_time=at(minutes=9))
    r.provider.sync_turn("   ", "Anything else?", now=at(minutes=10), origins=("u3", "a3"))
    r.provider.sync_turn("Bye for now.", "  ", now=at(minutes=11))
    assert raw_lines(r) == ["[09:02] User: We hiked Mount Tam.", "[09:05] Assistant: Lovely.",
                            "[09:09] User: Then we ate tacos.", "[09:09] Assistant: Yum.",
                            "[09:10] Assistant: Anything else?", "[09:11] User: Bye for now."]
    assert [(e.count, e.refs) for e in r.stages("ingest.gate") if e.stage == "executed"] == [
        (2, ("brut:2026-03-01-001:1", "brut:2026-03-01-001:2")),
        (2, ("brut:2026-03-01-001:3", "brut:2026-03-01-001:4")),
        (1, ("brut:2026-03-01-001:5",)), (1, ("brut:2026-03-01-001:6",))]
    assert r.provider.origins(["brut:2026-03-01-001:1", "brut:2026-03-01-001:2", "brut:2026-03-01-001:5"]) == (
        "u1", "a1", "a3")


# -- the consolidation trigger -------------------------------------------------------------------

def test_each_closure_of_a_turn_triggers_one_consolidation(rig):
    r = rig(batch_max_lines=1)  # both lines of the turn close a batch
    r.provider.sync_turn("My dog Rex loves the big park.", "Rex sounds lovely.", now=at())
    assert trace(r, ("batch.close", "consolidate.trigger")) == [
        ("batch.close", "eligible", "volume", None), ("batch.close", "executed", "volume", 1),
        ("batch.close", "eligible", "volume", None), ("batch.close", "executed", "volume", 1),
        ("consolidate.trigger", "eligible", "volume", None), ("consolidate.trigger", "executed", "volume", None),
        ("consolidate.trigger", "eligible", "volume", None), ("consolidate.trigger", "executed", "volume", None)]
    assert consolidations(r) == ["volume", "volume"]
    assert r.provider.runtime.counters == counters(consolidations=2)
    assert r.provider.runtime.busy_until is None  # busy_minutes 0: never busy


def test_a_new_day_closes_and_triggers_with_its_reason(rig):
    r = rig()
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    assert consolidations(r) == []
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(days=1))
    assert consolidations(r) == ["jour"] and "Rex" in r.page_text() and "Alice" not in r.page_text()


def test_no_automatic_consolidation_when_it_is_off(rig):
    r = rig(auto_consolidate=False, batch_max_lines=1)
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    assert trace(r, ("consolidate.trigger", "consolidate")) == []
    assert r.provider.runtime.counters == counters()


def test_session_end_and_reset_close_and_trigger_and_a_plain_switch_does_not(rig):
    r = rig()
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_switch("s2", now=at(minutes=1))  # no reset: the batch stays open
    assert consolidations(r) == [] and r.provider.session_id == "s2"
    r.provider.on_session_switch("s3", reset=True, now=at(minutes=2))
    assert consolidations(r) == ["reset"] and r.provider.session_id == "s3"
    r.provider.on_session_end([], now=at(minutes=3))  # nothing open: no closure, no trigger
    assert consolidations(r) == ["reset"]
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=4))
    r.provider.on_session_end([], now=at(minutes=5))
    assert consolidations(r) == ["reset", "session"]
    assert [e.reason for e in r.stages("batch.close") if e.stage == "executed"] == ["reset", "session"]


def test_a_trigger_inside_the_busy_window_is_dropped_and_at_its_end_runs(rig):
    r = rig(busy_minutes=30)
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))  # runs; busy until 09:31
    assert r.provider.runtime.busy_until == at(minutes=31).isoformat()
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=2))
    r.provider.on_session_end([], now=at(minutes=3))  # inside the window: dropped (E-13)
    r.provider.sync_turn("My cat Luna sleeps all day.", "", now=at(minutes=30))
    r.provider.on_session_end([], now=at(minutes=30.99))  # still inside
    r.provider.sync_turn("My brother Tom plays chess.", "", now=at(minutes=31))
    r.provider.on_session_end([], now=at(minutes=31))  # at the window's end: not busy
    trig = [(e.stage, e.reason) for e in r.stages("consolidate.trigger")]
    assert trig == [("eligible", "session"), ("executed", "session"),
                    ("eligible", "session"), ("skipped", "skipped_busy"),
                    ("eligible", "session"), ("skipped", "skipped_busy"),
                    ("eligible", "session"), ("executed", "session")]
    assert consolidations(r) == ["session", "session"]
    assert r.provider.runtime.queued is False
    assert r.provider.runtime.counters == counters(consolidations=2, consolidations_sautees=2)
    assert r.provider.runtime.busy_until == at(minutes=61).isoformat()
    assert all(name in r.page_text() for name in ("Rex", "Alice", "Luna", "Tom"))  # the second run took all


def test_a_queued_trigger_runs_once_at_the_first_call_after_the_window(rig):
    r = rig(busy_minutes=30, fix={"queue_when_busy": True})
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))  # busy until 09:31
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=2))
    r.provider.on_session_end([], now=at(minutes=3))   # queued
    r.provider.sync_turn("My cat Luna sleeps all day.", "", now=at(minutes=4))
    r.provider.on_session_end([], now=at(minutes=5))   # queued again: still one run
    assert r.provider.runtime.queued is True
    assert [(e.stage, e.reason) for e in r.stages("consolidate.trigger")][2:] == [
        ("eligible", "session"), ("skipped", "queued_busy"), ("eligible", "session"), ("skipped", "queued_busy")]
    r.provider.on_turn_start(1, "hi", now=at(minutes=30))   # still inside: nothing
    r.provider.on_pre_compress([], now=at(minutes=30))
    r.provider.prefetch("hello", now=at(minutes=30))
    assert consolidations(r) == ["session"] and r.provider.runtime.queued is True
    r.provider.on_turn_start(2, "hi", now=at(minutes=31))   # the window's end: the queued run
    assert consolidations(r) == ["session", "queued"] and r.provider.runtime.queued is False
    assert r.stages("consolidate.trigger")[-1].stage == "executed"
    assert r.stages("consolidate.trigger")[-1].reason == "queued"
    assert "Alice" in r.page_text() and "Luna" in r.page_text()
    r.provider.on_turn_start(3, "hi", now=at(minutes=200))  # nothing queued any more
    assert consolidations(r) == ["session", "queued"]
    assert r.provider.runtime.counters == counters(consolidations=2, consolidations_sautees=2)
    assert r.provider.runtime.busy_until == at(minutes=61).isoformat()


def test_the_queue_runs_before_the_turn_that_ends_the_window_is_written(rig):
    r = rig(busy_minutes=30, fix={"queue_when_busy": True})
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=2))
    r.provider.on_session_end([], now=at(minutes=3))  # queued
    r.events.clear()
    r.provider.sync_turn("My cat Luna sleeps all day.", "", now=at(minutes=40))
    assert trace(r, ("consolidate.trigger", "consolidate", "ingest.gate"))[:4] == [
        ("consolidate.trigger", "executed", "queued", None), ("consolidate", "eligible", "queued", None),
        ("consolidate", "output", None, 1), ("ingest.gate", "eligible", None, None)]
    assert "Alice" in r.page_text() and "Luna" not in r.page_text()


def test_a_prefetch_and_a_tool_call_do_not_run_a_queue_inside_the_window(rig):
    r = rig(busy_minutes=30, fix={"queue_when_busy": True})
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=2))
    r.provider.on_session_end([], now=at(minutes=3))
    r.provider.sync_turn("My cat Luna sleeps all day.", "", now=at(minutes=10))  # inside: still queued
    assert consolidations(r) == ["session"]
    r.provider.prefetch("Where does Alice live?", now=at(minutes=32))
    assert consolidations(r) == ["session", "queued"]


def test_a_disabled_consolidation_is_skipped_and_sets_no_window(rig):
    r = rig(busy_minutes=30, disabled=frozenset({"consolidate"}))
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    assert trace(r, ("consolidate.trigger", "consolidate")) == [
        ("consolidate.trigger", "eligible", "session", None), ("consolidate.trigger", "executed", "session", None),
        ("consolidate", "skipped", "disabled", None)]
    assert r.provider.runtime.busy_until is None and r.provider.runtime.counters == counters()
    assert r.provider.consolidate(at(minutes=2)) == {"statut": "désactivé"}


def test_a_failed_consolidation_is_reported_counted_and_still_busy(rig):
    def fail(point: str) -> None:
        raise RuntimeError(f"crash after {point}")

    r = rig(busy_minutes=30, fault_hook=fail)
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    assert trace(r, ("consolidate",)) == [("consolidate", "eligible", "session", None),
                                          ("consolidate", "error", "crash after pages_written", None)]
    assert r.provider.runtime.counters == counters(consolidations=1)
    assert r.provider.runtime.busy_until == at(minutes=31).isoformat()
    report = r.provider.consolidate(at(minutes=40))
    assert report == {"statut": "erreur", "erreur": "crash after pages_written"}
    assert r.provider.runtime.counters == counters(consolidations=2)


def test_an_error_reason_is_cut_at_200_characters(rig):
    def fail(point: str) -> None:
        raise RuntimeError("x" * 150 + "y" * 150)

    r = rig(fault_hook=fail)
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    report = r.provider.consolidate(at(minutes=1), force=True)
    assert report == {"statut": "erreur", "erreur": "x" * 150 + "y" * 50}
    assert [e.reason for e in r.stages("consolidate") if e.stage == "error"] == ["x" * 150 + "y" * 50]


def test_a_window_shorter_than_a_minute_still_counts_and_none_is_recorded_without_one(rig):
    for minutes in (0.5, 1):
        r = rig(busy_minutes=minutes)
        r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
        r.provider.on_session_end([], now=at(minutes=1))
        assert r.provider.runtime.busy_until == at(minutes=1 + minutes).isoformat()
    for minutes in (0, -5):  # no window: nothing recorded in the runtime a host snapshots
        r = rig(busy_minutes=minutes)
        r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
        r.provider.on_session_end([], now=at(minutes=1))
        assert consolidations(r) == ["session"]
        assert r.provider.capture_runtime()[0]["busy_until"] is None


def test_a_manual_consolidation_sets_the_window_and_reports(rig):
    r = rig(busy_minutes=15)
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    report = r.provider.consolidate(at(minutes=1), force=True)
    assert report["statut"] == "ok" and report["admis"] == 1
    assert consolidations(r) == ["forcer"]
    assert r.provider.runtime.busy_until == at(minutes=16).isoformat()
    assert r.provider.runtime.counters == counters(consolidations=1)
    assert r.provider.consolidate(at(minutes=2)) == {"statut": "rien à consolider"}
    assert consolidations(r) == ["forcer", "manuel"]
    assert r.provider.runtime.busy_until == at(minutes=17).isoformat()


def test_counters_survive_a_runtime_snapshot(rig, tmp_path: Path):
    r = rig(busy_minutes=30, fix={"queue_when_busy": True})
    r.provider.sync_turn("My dog Rex loves the big park.", "", now=at())
    r.provider.on_session_end([], now=at(minutes=1))
    r.provider.sync_turn("My sister Alice lives in Lyon.", "", now=at(minutes=2))
    r.provider.on_session_end([], now=at(minutes=3))
    state, handle = r.provider.capture_runtime()
    assert state["queued"] is True and state["busy_until"] == at(minutes=31).isoformat()
    assert state["counters"] == counters(consolidations=1, consolidations_sautees=1)
