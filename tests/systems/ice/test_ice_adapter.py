"""The ICE adapter against the harness contract: identity, events, ablation, snapshots."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from ice_testkit import FILLER, T0, day
from lsrep.adapters.ice import MAINTENANCE, IceAdapter, Options
from pydantic import ValidationError

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn
from lsrep.embed.hashing import HashingEmbedder

HIKES = [
    "We went hiking near the lake and saw herons on the trail.",
    "The hiking trail up the ridge was muddy after the rain.",
    "I bought new hiking boots for the mountain trail.",
    "Our hiking group met at the trailhead at dawn.",
]


def make(tmp_path: Path, name: str = "a", *, disabled=frozenset(), budget=None, embedder=None,
         llm=None, **options) -> tuple[IceAdapter, list[FidelityEvent]]:
    setup = AdapterSetup(options=Options(**options), disabled=frozenset(disabled),
                         state_dir=tmp_path / name, retrieval_budget=budget, embedder=embedder,
                         llm=llm)
    adapter = IceAdapter(setup)
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    return adapter, events


def replay(adapter: IceAdapter, sessions: list[list[str]], conversation: str = "traj") -> list[str]:
    adapter.reset(conversation_id=conversation, now=T0)
    ids, n = [], 0
    for s, texts in enumerate(sessions):
        for text in texts:
            turn = ReplayTurn(turn_id=f"x{n:04d}", session_id=f"sess{s}", conversation_id=conversation,
                              index=n, timestamp=T0 + timedelta(days=s, minutes=n), role="user",
                              content=text)
            adapter.ingest(turn, now=turn.timestamp)
            ids.append(turn.turn_id)
            n += 1
        adapter.end_session(f"sess{s}", now=T0 + timedelta(days=s, hours=23))
    return ids


def stages(events: list[FidelityEvent], mechanism: str) -> list[str]:
    return [e.stage for e in events if e.mechanism == mechanism]


def test_round_trip_with_attribution_events_and_maintenance(tmp_path):
    adapter, events = make(tmp_path, report_in_prompt=True)
    ids = replay(adapter, [["I live in Lisbon.", "Always answer in bullet points."] + FILLER,
                           ["I moved to Porto."] + HIKES])
    result = adapter.query("Where do I live?", now=day(5))
    declared = set(adapter.mechanism_names())
    assert result.fragments and result.context_text and result.answer is None
    for frag in result.fragments:
        assert frag.mechanisms and set(frag.mechanisms) <= declared
        assert set(frag.source_turn_ids) <= set(ids)
        assert frag.tokens == (len(frag.text) + 3) // 4
    assert {e.mechanism for e in events} <= declared
    five = ["eligible", "executed", "output", "selected", "in_prompt"]
    assert any(stages(events, f"ice.leg.{leg}") == five
               for leg in ("episodic_vector", "episodic_lexical", "graph"))
    assert "in_prompt" in stages(events, "ice.assemble")
    assert adapter.maintenance_operations == frozenset(MAINTENANCE)
    for op in sorted(adapter.maintenance_operations):
        adapter.maintain(op, now=day(30))
    with pytest.raises(ValueError, match="supported"):
        adapter.maintain("defragment", now=day(30))
    adapter.close()


def test_isolated_probe_is_undone_by_snapshot_restore_i10(tmp_path):
    adapter, events = make(tmp_path)
    replay(adapter, [["I baked sourdough bread with rye flour."] + FILLER + FILLER])
    before = adapter.state_digest()
    snap = adapter.snapshot()
    assert adapter.state_digest() == before
    result = adapter.query("What bread did I bake with rye?", now=day(3))
    assert any(f.kind == "memory" and "rye" in f.text for f in result.fragments)
    assert "output" in stages(events, "ice.reinforce")
    assert adapter.state_digest() != before  # access reinforcement persisted
    adapter.restore(snap)
    assert adapter.state_digest() == before
    assert adapter.query("What bread did I bake with rye?", now=day(3)).fragments == \
        result.fragments


def test_probe_is_not_stored_unless_asked(tmp_path):
    plain, _ = make(tmp_path, "plain", disabled={"ice.reinforce"})
    replay(plain, [FILLER])
    before = plain.state_digest()
    plain.query("What did I bake?", now=day(2))
    assert plain.state_digest() == before  # no turn stored, no reinforcement: read-only

    storing, events = make(tmp_path, "storing", store_probe_turns=True)
    replay(storing, [FILLER])
    storing.query("What did I bake?", now=day(2))
    assert storing.system.db.episodic.get("probe-00001").content == "What did I bake?"
    assert "output" in stages(events, "ice.postflight.store")


def test_session_identity_and_flattened_collapse_i4_i5(tmp_path):
    haystack = [HIKES + FILLER[:2] for _ in range(10)]  # ten sessions, one trajectory

    def cap_counts(name: str, **options) -> tuple[list[str], int, int]:
        adapter, events = make(tmp_path, name, **options)
        replay(adapter, haystack)
        result = adapter.query("What did I tell you about hiking trails?", now=day(11))
        cap = stages(events, "ice.diversify.cross_conv_cap")
        packed = sum(1 for f in result.fragments if f.kind == "memory")
        executed = [e for e in events if e.mechanism == "ice.diversify.cross_conv_cap"
                    and e.stage == "executed"]
        before = executed[0].params["before"] if executed else packed
        return cap, before, packed

    cap, _before, _packed = cap_counts("within")
    assert cap == ["ineligible"]  # within-conversation replay never exercises the cap
    cap, before, flat = cap_counts("flat", probe_conversation="fresh")
    assert cap[:2] == ["eligible", "executed"]
    assert flat <= 3 and before > 10 * flat / 1.5  # the collapse a detector flags
    cap, _before, per_session = cap_counts("sessions", conversation_unit="session",
                                           probe_conversation="fresh")
    assert cap[:2] == ["eligible", "executed"] and per_session > flat


def test_ablation_switches_and_defect_option(tmp_path):
    adapter, events = make(tmp_path, "nograph", disabled={"ice.leg.graph", "thalia.other"})
    replay(adapter, [["I live in Lisbon."] + FILLER])
    result = adapter.query("Where do I live?", now=day(2))
    assert stages(events, "ice.leg.graph") == ["skipped"]
    assert all("ice.leg.graph" not in f.mechanisms for f in result.fragments)
    with pytest.raises(ValueError, match="cannot switch off"):
        make(tmp_path, "bad", disabled={"ice.assemble"})

    broken, events = make(tmp_path, "defect", seed_defects={"procedural_leg": True})
    replay(broken, [["Always answer in bullet points."] + FILLER])
    broken.query("How should you format answers?", now=day(2))
    assert stages(events, "ice.leg.procedural") == ["eligible", "executed"]


def test_options_are_strict():
    with pytest.raises(ValidationError):
        Options(no_such_option=True)
    with pytest.raises(ValidationError):
        Options(seed_defects={"graph_leg": True})
    with pytest.raises(ValidationError):
        IceAdapter(AdapterSetup(options=Options(config={"rrf_kk": 60})))
    assert Options(fusion="concat").fusion == "concat"


def test_retrieval_budget_is_respected(tmp_path):
    adapter, _ = make(tmp_path, budget=600)
    replay(adapter, [HIKES * 6, FILLER * 3])
    result = adapter.query("What did I tell you about hiking boots?", now=day(3))
    assert 0 < sum(f.tokens for f in result.fragments) <= 600
    assert adapter.config.context_budget == 600


class CountingEmbedder:
    """The harness embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(256)
        self.name = self.inner.name
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


class EchoModel:
    """A scripted model that extracts nothing and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages) -> str:
        self.calls += 1
        return '{"triples": [], "entities": [], "procedures": []}'


def test_setup_embedder_and_model_are_used(tmp_path):
    embedder, model = CountingEmbedder(), EchoModel()
    adapter, _ = make(tmp_path, embedder=embedder, llm=model)
    replay(adapter, [["I live in Lisbon.", "I moved to Porto."]])
    adapter.query("Where do I live?", now=day(2))
    assert embedder.texts >= 3 and model.calls == 2
    assert adapter.system.db.codex.edge_count() == 0  # the model, not the rules, extracted


def test_identical_replays_give_identical_state_and_context(tmp_path):
    outputs = []
    for name in ("one", "two"):
        adapter, _ = make(tmp_path, name)
        replay(adapter, [["I live in Lisbon."] + HIKES, ["I moved to Porto."] + FILLER])
        adapter.maintain("nightly", now=day(20))
        result = adapter.query("Where did I live before?", now=day(21))
        outputs.append((adapter.state_digest(), result))
    assert outputs[0] == outputs[1]


def test_slots_documents_and_in_prompt_option(tmp_path):
    doc = tmp_path / "garden.txt"
    doc.write_text("Tomatoes need six hours of sun. Water them at dawn.", encoding="utf-8")
    adapter, events = make(tmp_path, "docs", slots={"tone": "friendly"}, documents=(str(doc),),
                           report_in_prompt=False)
    adapter.reset(conversation_id="traj", now=None)  # no simulated time yet: epoch, not wall clock
    turn = ReplayTurn(turn_id="x0", session_id="s0", conversation_id="traj", index=0,
                      timestamp=T0, role="user", content="I planted tomatoes.")
    adapter.ingest(turn, now=T0)
    result = adapter.query("When should I water the tomatoes?", now=day(1))
    kinds = {(f.kind, f.mechanisms) for f in result.fragments}
    assert ("slot", ("ice.slots",)) in kinds
    assert ("memory", ("ice.leg.document",)) in kinds
    assert "in_prompt" not in {e.stage for e in events}
    assert stages(events, "ice.leg.document")[:4] == ["eligible", "executed", "output", "selected"]


def test_live_preflight_and_deferred_extraction_options(tmp_path):
    live, events = make(tmp_path, "live", preflight_on_ingest=True)
    replay(live, [["I baked rye bread."] + FILLER + ["What rye bread did I bake?"]])
    assert "output" in stages(events, "ice.reinforce")  # live turns reinforce, as in real use

    deferred, events = make(tmp_path, "deferred", extraction_mode="maintenance")
    replay(deferred, [["I live in Lisbon."]])
    assert deferred.system.db.codex.edge_count() == 0
    deferred.maintain("extract", now=day(1))
    assert deferred.system.db.codex.edge_count() == 1
    assert stages(events, "ice.worker.extract")[-2:] == ["executed", "output"]


def test_summary_fragment_cites_only_the_turns_its_text_carries(tmp_path):
    """The offline summary keeps each user turn's first sentence (capped): a turn whose words it
    does not hold is no evidence behind the summary, whatever ICE's batch list says."""
    from lsrep.adapters.ice.evidence import carried_turns

    texts = ["I adopted a grey cat named Pixel from the shelter on Tuesday. She sleeps all day.",
             "The weather was grim and the bus was late again this morning.",
             "My sister Alice moved to Lyon last spring with her husband."]
    cited = {}
    for policy in ("content", "batch"):
        adapter, _ = make(tmp_path, policy, summary_citations=policy,
                          config={"summary_batch_turns": 3, "summary_max_chars": 150})
        ids = replay(adapter, [texts])
        adapter.maintain("summarize", now=T0 + timedelta(days=2))
        result = adapter.query("Which cat named Pixel did I adopt from the shelter?", now=T0 + timedelta(days=3))
        summary = [f for f in result.fragments if f.text.startswith("Summary (")]
        assert len(summary) == 1, [f.text for f in result.fragments]
        cited[policy] = summary[0].source_turn_ids
    assert cited["batch"] == tuple(ids)
    # 150 characters hold the first two first-sentences; the third turn is cut off entirely.
    assert "Lyon" not in summary[0].text
    assert cited["content"] == (ids[0], ids[1])
    assert carried_turns("Pixel the grey cat", ["a", "b"], {"a": "grey cat Pixel", "b": "Alice in Lyon"}) == ("a",)
    # a turn whose one long sentence is only partly in the summary is not carried
    assert carried_turns("Alice moved", ["a"], {"a": "My sister Alice moved to Lyon last spring."}) == ()
