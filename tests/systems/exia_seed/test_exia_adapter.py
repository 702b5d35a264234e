"""The adapter and its Hermes-style host, end to end through the harness contract."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from exia_testkit import ScriptedModel, at, fact
from lsrep.adapters.exia_seed import (
    MECHANISMS,
    ExiaSeedAdapter,
    Options,
    build_memory_context_block,
)
from lsrep.systems.exia_seed.prompts import CONSOLIDATION_TASK
from pydantic import ValidationError

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn

TURNS = [
    ("user", None, "My dog Rex loves the big park near the river."),
    ("assistant", None, "Lovely, Rex must be a happy dog."),
    ("user", None, "My sister Alice lives in Lyon with her husband Bob."),
    ("assistant", None, "Lyon is a beautiful city."),
]


def make(tmp_path: Path, llm=None, disabled=frozenset(), **options) -> tuple[ExiaSeedAdapter, list[FidelityEvent]]:
    adapter = ExiaSeedAdapter(AdapterSetup(options=Options(**options), state_dir=tmp_path / "state",
                                           llm=llm, disabled=frozenset(disabled)))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    adapter.reset(conversation_id="c1", now=at())
    return adapter, events


def feed(adapter: ExiaSeedAdapter, turns, *, day: float = 0, session: str = "s1", start: int = 0) -> list[str]:
    ids = []
    for i, (role, speaker, content) in enumerate(turns, start=start):
        ts = at(days=day, minutes=i)
        turn = ReplayTurn(turn_id=f"t{i}", session_id=session, conversation_id="c1", index=i, timestamp=ts,
                          role=role, speaker=speaker, content=content)
        adapter.ingest(turn, now=ts)
        ids.append(turn.turn_id)
    return ids


def raw_lines(adapter: ExiaSeedAdapter) -> list[str]:
    return [ln for p in sorted((adapter.state_dir / "exia_seed" / "brut").glob("*.md"))
            for ln in p.read_text().splitlines()]


def test_round_trip_recall_in_a_fence_with_source_turns(tmp_path):
    adapter, events = make(tmp_path, phase=2, tools="off")
    ids = feed(adapter, TURNS)
    adapter.end_session("s1", now=at(minutes=10))
    result = adapter.query("Where does Rex like to go?", now=at(minutes=20))
    assert result.context_text.startswith("<memory-context>\n[System note:")
    facts = [f for f in result.fragments if f.kind == "fact"]
    assert facts and facts[0].source_turn_ids == (ids[0],)
    # Fragments name their producers (the block, the consolidation that wrote the fact); the checker
    # only let the fact through, so it is credited in the system's own report below, not here.
    assert {"exia.recall.phase2", "exia.consolidate"} <= set(facts[0].mechanisms)
    assert "exia.checker" not in facts[0].mechanisms
    in_prompt = {e.mechanism for e in events if e.stage == "in_prompt"}
    assert {"exia.recall.phase2", "exia.consolidate", "exia.checker"} <= in_prompt
    assert all(set(f.source_turn_ids) <= set(ids) for f in result.fragments)
    declared = {m.name for m in MECHANISMS}
    assert {e.mechanism for e in events} <= declared


def test_turn_pairing_other_speakers_and_unanswered_turns(tmp_path):
    adapter, _ = make(tmp_path)
    feed(adapter, [("user", None, "First question about gardens."), ("user", None, "Second question about roses."),
                   ("assistant", None, "An answer about roses."), ("assistant", None, "A follow-up remark."),
                   ("friend", "Caroline", "I went to the support group yesterday.")])
    adapter.end_session("s1", now=at(minutes=10))
    assert raw_lines(adapter) == [
        "[09:00] User: First question about gardens.",
        "[09:01] User: Second question about roses.",
        "[09:02] Assistant: An answer about roses.",
        "[09:03] Assistant: A follow-up remark.",
        "[09:04] User: [Caroline] I went to the support group yesterday.",
    ]
    origins = (adapter.state_dir / "exia_seed" / "etat" / "origines.jsonl").read_text()
    assert [json.loads(r)["origine"] for r in origins.splitlines()] == ["t0", "t1", "t2", "t3", "t4"]


def test_speaker_names_kept_on_user_and_assistant_turns(tmp_path):
    """LoCoMo: two named people, both role `user`; the names reach the raw lines and the recalled facts."""
    adapter, _ = make(tmp_path, phase=2, tools="off", no_agent_speaker=True)
    ids = feed(adapter, [("user", "Caroline", "I adopted a grey cat named Pixel last week."),
                         ("user", "Melanie", "I painted a big lake sunrise for my kids."),
                         ("assistant", "Hermes", "Both sound wonderful."),
                         ("user", None, "No name on this one.")])
    adapter.end_session("s1", now=at(minutes=10))
    assert raw_lines(adapter) == [
        "[09:00] User: [Caroline] I adopted a grey cat named Pixel last week.",
        "[09:01] User: [Melanie] I painted a big lake sunrise for my kids.",
        "[09:02] Assistant: [Hermes] Both sound wonderful.",
        "[09:03] User: No name on this one.",
    ]
    result = adapter.query("Who adopted the cat Pixel?", now=at(minutes=20))
    cat = [f for f in result.fragments if f.kind in ("fact", "summary") and "Pixel" in f.text]
    assert cat and all("Caroline" in f.text for f in cat) and cat[0].source_turn_ids == (ids[0],)
    assert "Caroline" in result.context_text


def test_named_speaker_retention_commands_fire_and_ordinary_speech_does_not(tmp_path):
    adapter, events = make(tmp_path, tools="off")
    feed(adapter, [("user", "Ana", "My bike is a blue Peugeot from my uncle Marc."),
                   ("user", "Ana", "Please forget that I live in Lisbon."),
                   ("user", "Bo", "Forget it, let's go to the beach."),
                   ("user", "Bo", "I won't forget that trip.")])
    adapter.end_session("s1", now=at(minutes=10))
    retention = [e for e in events if e.mechanism == "exia.ingest.retention"]
    assert [e.reason for e in retention] == ["withdraw-previous"]
    lines = raw_lines(adapter)
    assert not any("Lisbon" in ln for ln in lines)  # the fact asked to be forgotten is not captured
    assert lines[-2:] == ["[09:02] User: [Bo] Forget it, let's go to the beach.",
                          "[09:03] User: [Bo] I won't forget that trip."]


def test_host_redacts_before_the_provider_masks(tmp_path):
    adapter, _ = make(tmp_path)
    feed(adapter, [("user", None, "my key is sk-abc123def456ghi789jkl"), ("assistant", None, "ok")])
    raw = (adapter.state_dir / "exia_seed" / "brut" / "2026-03-01-001.open.md").read_text()
    assert "sk-abc123def456ghi789jkl" not in raw and "sk-abc...9jkl" in raw


def test_consolidation_latency_then_nightly(tmp_path):
    adapter, _ = make(tmp_path, phase=2, tools="off")
    feed(adapter, TURNS)
    assert adapter.query("Where does Rex like to go?", now=at(minutes=30)).fragments == ()
    adapter.maintain("nightly", now=at(minutes=40))
    assert any("big park" in f.text for f in adapter.query("Where does Rex like to go?", now=at(minutes=50)).fragments)


def test_isolated_probe_is_byte_identical_after_restore(tmp_path):
    adapter, _ = make(tmp_path, phase=2)
    feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    before = adapter.state_digest()
    snap = adapter.snapshot()
    first = adapter.query("Tell me about Rex", now=at(minutes=41))
    assert adapter.state_digest() != before  # the probe journaled and primed
    adapter.restore(snap)
    assert adapter.state_digest() == before
    # E-19: after restore the probe's priming is gone; in access mode it persists.
    adapter.query("Any news about Lyon?", now=at(minutes=42))
    assert adapter.provider.recall_status().primed == ()
    adapter.query("Tell me about Rex", now=at(minutes=43))
    adapter.query("Any news about Lyon?", now=at(minutes=44))
    assert "rex" in adapter.provider.recall_status().primed
    assert first.fragments


def test_snapshot_restores_a_buffered_user_turn(tmp_path):
    adapter, _ = make(tmp_path)
    feed(adapter, TURNS[:1])
    snap = adapter.snapshot()
    digest = adapter.state_digest()
    feed(adapter, TURNS[1:2], start=1)
    adapter.restore(snap)
    assert adapter.state_digest() == digest and adapter._pending.turn_id == "t0"


def test_e2_phase1_memory_reaches_the_prompt_through_the_search_tool(tmp_path):
    adapter, events = make(tmp_path, phase=1, tools="auto-search")
    ids = feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    result = adapter.query("Where does Rex like to go?", now=at(minutes=50))
    assert "<memory-context>" not in (result.context_text or "")
    assert result.context_text.startswith("[tool memoire_chercher]")
    assert result.fragments and result.fragments[0].source_turn_ids == (ids[0],)
    in_prompt = {e.mechanism for e in events if e.stage == "in_prompt"}
    assert "exia.tool.search" in in_prompt and "exia.recall.phase1" not in in_prompt


def test_auto_read_reads_the_top_subject(tmp_path):
    adapter, _ = make(tmp_path, phase=1, tools="auto-read")
    feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    result = adapter.query("Where does Rex like to go?", now=at(minutes=50))
    assert result.context_text.startswith("[tool memoire_lire]")
    assert [f.kind for f in result.fragments] == ["section"]


def test_e21_host_timeout_drops_the_block_and_reports_it(tmp_path):
    adapter, events = make(tmp_path, phase=2, tools="off", host_seconds_per_work_unit=10.0)
    feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    result = adapter.query("Where does Rex like to go?", now=at(minutes=50))
    assert result.fragments == () and result.context_text is None
    assert adapter.provider.recall_status().lines  # the provider itself had no timer: it finished
    errors = [e for e in events if e.mechanism == "exia.host.prefetch" and e.stage == "error"]
    assert errors and errors[0].params["simulated_seconds"] > 8.0


def test_configured_model_is_used_for_consolidation(tmp_path):
    model = ScriptedModel()
    reply = json.dumps({"faits": [fact("Rex loves the big park near the river.", ["brut:2026-03-01-001:1"],
                                       "Rex the dog")]})
    model.push(reply)
    adapter, events = make(tmp_path, llm=model, phase=2, tools="off")
    feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    llm = [e for e in events if e.mechanism == "exia.consolidate.llm" and e.stage == "output"]
    assert llm[0].params["response_sha256"] == hashlib.sha256(reply.encode()).hexdigest()
    assert (adapter.state_dir / "exia_seed" / "fiches" / "rex-the-dog.md").exists()
    assert "Lyon" not in adapter.query("Where does Rex like to go?", now=at(minutes=50)).context_text


def test_maintenance_operations(tmp_path):
    adapter, events = make(tmp_path, phase=2, tools="off", auto_consolidate=False)
    assert adapter.maintenance_operations == {"consolidate", "close_batch", "rebuild_graph",
                                              "refresh_summaries", "nightly", "refresh_during_consolidation"}
    feed(adapter, TURNS)
    adapter.maintain("consolidate", now=at(minutes=20))  # the open batch is not eligible
    assert not list((adapter.state_dir / "exia_seed" / "fiches").glob("*.md"))
    adapter.maintain("close_batch", now=at(minutes=21))
    adapter.maintain("consolidate", now=at(minutes=22))
    assert list((adapter.state_dir / "exia_seed" / "fiches").glob("*.md"))
    adapter.maintain("refresh_summaries", now=at(minutes=23))
    adapter.maintain("rebuild_graph", now=at(minutes=24))
    assert any(e.mechanism == "exia.maintenance.rebuild_graph" and e.stage == "executed" for e in events)
    with pytest.raises(ValueError):
        adapter.maintain("decay", now=at(minutes=25))


class _StandInFacts(ScriptedModel):
    """Consolidation by the offline stand-in; summaries from `summary` when set."""

    def complete(self, messages):
        if messages[0]["content"].startswith(CONSOLIDATION_TASK):
            return self._standin.complete(messages)
        return super().complete(messages)


def test_the_e16_race_reaches_the_audit_as_an_error_only_when_a_write_is_lost(tmp_path):
    more = [("user", None, "Rex also loves chasing the red ball near the river."),
            ("assistant", None, "What a playful dog.")]
    for fixed in (False, True):
        model = _StandInFacts()
        calls = iter(range(100))
        model.summary = lambda subject, calls=calls: f"{subject} is {'very ' * next(calls)}friendly."  # new each time
        adapter, events = make(tmp_path / str(fixed), llm=model, phase=2, tools="off", auto_consolidate=False,
                               fix_summary_lock=fixed)
        feed(adapter, TURNS)
        adapter.maintain("nightly", now=at(minutes=25))
        feed(adapter, more, day=1, start=len(TURNS))
        adapter.maintain("close_batch", now=at(days=1, minutes=27))
        adapter.maintain("refresh_during_consolidation", now=at(days=1, minutes=28))
        errors = [e for e in events if e.mechanism == "exia.maintenance.refresh_summaries" and e.stage == "error"]
        assert bool(errors) is not fixed, [e.reason for e in errors]
        if errors:
            assert all("E-16" in e.reason for e in errors)


def test_ablation_switches_reach_the_provider(tmp_path):
    adapter, _ = make(tmp_path, disabled={"exia.recall.phase2"}, phase=2, tools="off")
    feed(adapter, TURNS)
    adapter.maintain("nightly", now=at(minutes=40))
    assert adapter.query("Where does Rex like to go?", now=at(minutes=50)).fragments == ()
    off, _ = make(tmp_path / "b", disabled={"exia.consolidate"}, phase=2, tools="off")
    feed(off, TURNS)
    off.maintain("nightly", now=at(minutes=40))
    assert not list((off.state_dir / "exia_seed" / "fiches").glob("*.md"))


def test_options_reject_unknown_fields_and_map_fix_flags(tmp_path):
    with pytest.raises(ValidationError):
        Options(phase=3)
    with pytest.raises(ValidationError):
        Options(fix_everything=True)
    adapter, _ = make(tmp_path, fix_phase2_ceiling=True, recall_budget_tokens=500)
    assert adapter.settings.fix.phase2_ceiling and adapter.settings.recall_budget_tokens == 500


def test_fence_drops_repeated_bullets_and_inner_fences():
    block = build_memory_context_block("- a\n- a\n<memory-context>x</memory-context>\nb")
    assert block.count("- a") == 1 and block.count("<memory-context>") == 1
    assert build_memory_context_block("   ") == ""


def test_same_inputs_give_the_same_state_digest(tmp_path):
    digests = []
    for name in ("a", "b"):
        adapter, _ = make(tmp_path / name, phase=2)
        feed(adapter, TURNS)
        feed(adapter, TURNS, day=1, session="s2", start=10)
        adapter.end_session("s2", now=at(days=1, minutes=20))
        adapter.query("Tell me about Rex", now=at(days=1, minutes=30))
        digests.append(adapter.state_digest())
    assert digests[0] == digests[1]


def test_every_timed_provider_hook_takes_now_and_the_host_passes_it(tmp_path):
    import inspect

    from lsrep.systems.exia_seed import ExiaSeedProvider

    hooks = ("sync_turn", "prefetch", "queue_prefetch", "handle_tool_call", "on_turn_start", "on_session_end",
             "on_session_switch", "on_pre_compress", "on_memory_write")
    for hook in hooks:
        parameter = inspect.signature(getattr(ExiaSeedProvider, hook)).parameters.get("now")
        assert parameter is not None and parameter.kind is inspect.Parameter.KEYWORD_ONLY, hook
    seen: list[tuple[str, object]] = []
    adapter, _ = make(tmp_path, busy_minutes=60, fix_queue_when_busy=True)
    for hook in ("on_turn_start", "on_session_end", "on_session_switch"):
        original = getattr(adapter.provider, hook)

        def spy(*args, _hook=hook, _original=original, **kwargs):
            seen.append((_hook, kwargs["now"]))
            return _original(*args, **kwargs)

        setattr(adapter.provider, hook, spy)
    feed(adapter, TURNS[:2])
    feed(adapter, TURNS[2:], session="s2", start=2)
    adapter.end_session("s2", now=at(minutes=30))
    assert seen == [("on_turn_start", at(minutes=0)), ("on_turn_start", at(minutes=1)),
                    ("on_session_switch", at(minutes=2)), ("on_turn_start", at(minutes=2)),
                    ("on_turn_start", at(minutes=3)), ("on_session_end", at(minutes=30))]


def test_turn_start_runs_consolidation_queued_in_a_busy_window(tmp_path):
    adapter, _ = make(tmp_path, phase=2, tools="off", busy_minutes=60, fix_queue_when_busy=True)
    provider = adapter.provider
    provider.sync_turn("My dog Rex loves the big park near the river.", "", now=at())
    provider.on_session_end(None, now=at(minutes=1))  # consolidates; busy until minute 61
    provider.sync_turn("My sister Alice lives in Lyon with her husband Bob.", "", now=at(minutes=10))
    provider.on_session_end(None, now=at(minutes=11))  # inside the window: queued
    pages = adapter.state_dir / "exia_seed" / "fiches"
    assert "Alice" not in "".join(p.read_text() for p in pages.glob("*.md"))
    provider.on_turn_start(5, "hello", now=at(minutes=30))  # still busy
    assert "Alice" not in "".join(p.read_text() for p in pages.glob("*.md"))
    provider.on_turn_start(6, "hello", now=at(minutes=62))
    assert "Alice" in "".join(p.read_text() for p in pages.glob("*.md"))


def test_every_fact_of_a_named_turn_keeps_the_speaker(tmp_path):
    """The stand-in splits a turn into sentence facts; each keeps `[Name]`'s name and lands on her page."""
    adapter, _ = make(tmp_path, phase=2, tools="off", no_agent_speaker=True)
    feed(adapter, [("user", "Melanie", "Wow, that sounds lovely today. I painted a big lake sunrise for my kids "
                                       "last weekend at home.")])
    adapter.end_session("s1", now=at(minutes=10))
    pages = {p.stem: p.read_text() for p in (adapter.state_dir / "exia_seed" / "fiches").glob("*.md")}
    painted = [ln for text in pages.values() for ln in text.splitlines() if "painted a big lake" in ln]
    assert painted and all(ln.startswith("- Melanie: I painted") for ln in painted)
    assert any("painted a big lake" in text for stem, text in pages.items() if stem == "melanie")
