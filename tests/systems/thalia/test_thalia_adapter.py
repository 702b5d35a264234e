"""The adapter: contract round trip, events, ablations, options and byte-stable state."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from lsrep.adapters.thalia import MECHANISMS, Options, ThaliaAdapter, build_config
from pydantic import ValidationError
from thalia_testkit import BOTTLENECK_QUERY, bottleneck_haystack

from lsrep.contract import STAGES, AdapterSetup, FidelityEvent, ReplayTurn

START = datetime(2024, 3, 1, 10)
BRIEF_MECHANISMS = (
    "thalia.retriever.lexical", "thalia.retriever.semantic", "thalia.retriever.fusion",
    "thalia.inspector.partition", "thalia.inspector.adaptive_windows", "thalia.retriever.prf",
    "thalia.retriever.recency", "thalia.retriever.mmr", "thalia.recall.fts",
    "thalia.gate.consolidate",
)
FIVE = {"eligible", "executed", "output", "selected", "in_prompt"}


def make_turns(texts: list[str], *, per_session: int = 4, start: int = 0) -> list[ReplayTurn]:
    return [ReplayTurn(turn_id=f"t{start + i}", session_id=f"s{(start + i) // per_session}",
                       conversation_id="c1", index=start + i,
                       timestamp=START + timedelta(minutes=5 * (start + i)),
                       role="user" if (start + i) % 2 == 0 else "assistant", content=text)
            for i, text in enumerate(texts)]


def build(tmp: Path, name: str = "state", disabled: frozenset[str] = frozenset(), **options):
    adapter = ThaliaAdapter(AdapterSetup(options=Options(**options), disabled=disabled,
                                         state_dir=tmp / name))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    adapter.reset(conversation_id="c1", now=START)
    return adapter, events


def replay(adapter: ThaliaAdapter, turns: list[ReplayTurn]) -> None:
    for turn in turns:
        adapter.ingest(turn, now=turn.timestamp)
        if turn.index % 4 == 3:
            adapter.end_session(turn.session_id, now=turn.timestamp)


CONVERSATION = [
    "Hi! My wifi password is bluefish42.", "Noted, bluefish42 it is.",
    "Please remember that my sister Ana lives in Porto.", "I will remember that.",
    "I now work at the city museum.", "Congratulations on the museum job!",
    "Let's plan the garden this weekend.", "Sounds good, tomatoes first.",
]


def test_round_trip(tmp_path):
    adapter, events = build(tmp_path)
    turns = make_turns(CONVERSATION)
    replay(adapter, turns)
    result = adapter.query("What is my wifi password?", now=START + timedelta(days=1))
    ingested = {t.turn_id for t in turns}
    assert result.fragments
    for frag in result.fragments:
        assert frag.source_turn_ids and set(frag.source_turn_ids) <= ingested
        assert set(frag.mechanisms) <= set(adapter.mechanism_names())
    assert "bluefish42" in (result.answer or "")
    assert any(f.kind == "memory" and "Porto" in f.text for f in result.fragments)
    assert result.context_text and "Evidence:" in result.context_text
    assert ThaliaAdapter.answers and ThaliaAdapter.supports_snapshot
    declared = set(adapter.mechanism_names())
    assert {e.mechanism for e in events} <= declared
    assert {e.stage for e in events} <= set(STAGES)
    adapter.reset(conversation_id="c2", now=START)
    assert adapter.query("What is my wifi password?", now=START).fragments == ()
    adapter.close()


def test_isolated_probe_leaves_state_byte_identical(tmp_path):
    adapter, _ = build(tmp_path, recall=True, prf=True, mmr=True, recency_weight=0.3)
    replay(adapter, make_turns(CONVERSATION))
    before = adapter.state_digest()
    snap = adapter.snapshot()
    adapter.query("Where does Ana live?", now=START + timedelta(days=2))
    assert adapter.state_digest() == before  # read-only even before the restore
    adapter.restore(snap)
    assert adapter.state_digest() == before
    # The full restore path: a later turn changes the state; restore undoes it exactly.
    extra = make_turns(["remember that the cabin code is 4411"], start=8)
    adapter.ingest(extra[0], now=extra[0].timestamp)
    assert adapter.state_digest() != before
    adapter.restore(snap)
    assert adapter.state_digest() == before
    assert "4411" not in str(adapter.query("cabin code", now=START).fragments)
    adapter.close()


def test_state_digest_is_byte_stable_across_fresh_runs(tmp_path):
    digests = []
    for name in ("one", "two"):
        adapter, _ = build(tmp_path, name)
        replay(adapter, make_turns(CONVERSATION))
        adapter.query("Where does Ana live?", now=START)
        digests.append(adapter.state_digest())
        adapter.close()
    assert digests[0] == digests[1]


def test_probe_appends_is_a_visible_side_effect(tmp_path):  # T-15
    adapter, events = build(tmp_path, probe_appends=True)
    replay(adapter, make_turns(CONVERSATION))
    before = adapter.state_digest()
    adapter.query("What is my wifi password?", now=START + timedelta(days=1))
    assert adapter.state_digest() != before
    assert any(e.mechanism == "thalia.gate.append" and e.stage == "executed" for e in events[-20:])
    adapter.close()


def test_end_session_reaches_the_gate(tmp_path):
    adapter, events = build(tmp_path)
    turns = make_turns(["I now live in Lisbon", "ok", "my bike is currently red", "nice"])
    for turn in turns:
        adapter.ingest(turn, now=turn.timestamp)
    assert "bike" not in (adapter.state_dir / "MEMORY.md").read_text()
    adapter.end_session("s0", now=START + timedelta(hours=1))
    assert "My bike is currently red" in (adapter.state_dir / "MEMORY.md").read_text()
    assert events[-1].mechanism == "thalia.gate.consolidate" and events[-1].stage == "output"
    adapter.close()


def _run_all_mechanisms(tmp_path: Path) -> list[FidelityEvent]:
    texts, _ = bottleneck_haystack(n=400, gold_at=300, distractors=12)
    texts[10] = "Please remember that my cousin Rui plays the violin"
    turns = make_turns(texts, per_session=100)
    collected: list[FidelityEvent] = []
    for name, options in [("wide", {"adaptive_windows": True, "prf": True, "mmr": True,
                                    "recency_weight": 0.2}),
                          ("recall", {"recall": True})]:
        adapter, events = build(tmp_path, name, **options)
        replay(adapter, turns)
        adapter.end_session(turns[-1].session_id, now=turns[-1].timestamp)
        result = adapter.query(BOTTLENECK_QUERY, now=START + timedelta(days=9))
        assert any("bluefish42" in f.text for f in result.fragments)
        collected += events
        adapter.close()
    return collected


def test_every_declared_mechanism_reports_five_stages(tmp_path):
    events = _run_all_mechanisms(tmp_path)
    stages: dict[str, set[str]] = {}
    for e in events:
        stages.setdefault(e.mechanism, set()).add(e.stage)
    for mech in BRIEF_MECHANISMS:
        assert FIVE <= stages.get(mech, set()), (mech, stages.get(mech))


@pytest.mark.parametrize("mech", [m.name for m in MECHANISMS if m.can_disable])
def test_ablation_switches(tmp_path, mech):
    adapter, events = build(tmp_path, disabled=frozenset({mech}), adaptive_windows=True, prf=True,
                            mmr=True, recency_weight=0.2, recall=True, verify=True,
                            partition_threshold=3)
    replay(adapter, make_turns(CONVERSATION))
    adapter.query("Where does Ana live now?", now=START + timedelta(days=1))
    mine = {e.stage for e in events if e.mechanism == mech}
    assert "skipped" in mine and "executed" not in mine
    adapter.close()


def test_disabling_rules():
    setup = lambda d: AdapterSetup(options=Options(), disabled=frozenset(d))  # noqa: E731
    assert build_config(Options(), setup({"thalia.retriever.mmr", "ice.rrf"})).ablate == {"retriever.mmr"}
    with pytest.raises(ValueError, match="cannot switch off"):
        build_config(Options(), setup({"thalia.inspector.grep"}))
    with pytest.raises(ValueError, match="cannot switch off"):
        build_config(Options(), setup({"thalia.no.such"}))


def test_options(tmp_path):
    with pytest.raises(ValidationError):
        Options(top_kk=3)
    with pytest.raises(ValidationError):
        Options(lexical_weight=0.9)
    cfg = build_config(Options(prf=True, top_k=3), AdapterSetup(options=Options(), retrieval_budget=900))
    assert cfg.query_expansion and cfg.top_k == 3 and cfg.context_budget_tokens == 900
    assert cfg.max_windows == 15 and not cfg.recall
    path = tmp_path / "thalia.toml"
    path.write_text("top_k = 4\nmax_windows = 30\n")
    cfg = build_config(Options(config_file=str(path), top_k=6), AdapterSetup(options=Options()))
    assert (cfg.top_k, cfg.max_windows) == (6, 30)  # file < explicitly set options


def test_setup_llm_and_embedder_are_used(tmp_path):
    class ScriptedLM:
        name = "scripted"

        def __init__(self):
            self.prompts = []

        def complete(self, messages):
            self.prompts.append(messages)
            return "Ana lives in Porto."

    class CountingEmbedder:
        name = "counting"

        def __init__(self):
            from lsrep.systems.thalia import HashingEmbedder
            self.inner, self.calls = HashingEmbedder(64), 0

        def embed(self, texts):
            self.calls += 1
            return self.inner.embed(texts)

    lm, emb = ScriptedLM(), CountingEmbedder()
    adapter = ThaliaAdapter(AdapterSetup(options=Options(), state_dir=tmp_path / "s", llm=lm,
                                         embedder=emb))
    adapter.reset(conversation_id="c", now=START)
    replay(adapter, make_turns(CONVERSATION))
    result = adapter.query("Where does Ana live?", now=START)
    assert result.answer == "Ana lives in Porto." and emb.calls > 0
    assert "Porto" in lm.prompts[0][-1]["content"]
    adapter.close()


def test_file_based_delivery_reports_truncation(tmp_path):
    adapter, _ = build(tmp_path, context_budget_tokens=12)
    replay(adapter, make_turns([f"wifi password note {n} bluefish42" for n in range(6)]))
    result = adapter.query("wifi password", now=START)
    assert result.truncated_tokens > 0
    assert "delivered by file" in (result.context_text or "")
    adapter.close()


def test_retry_is_a_quiet_no_op_but_a_different_turn_is_rejected(tmp_path):
    from lsrep.systems.thalia import DuplicateEpisodeError

    adapter, events = build(tmp_path)
    turns = make_turns(CONVERSATION[:2])
    replay(adapter, turns)
    before = adapter.state_digest()
    adapter.ingest(turns[1], now=turns[1].timestamp)
    assert adapter.state_digest() == before
    assert events[-1].stage == "skipped" and events[-1].mechanism == "thalia.gate.append"
    forged = turns[1].model_copy(update={"content": "something else"})
    with pytest.raises(DuplicateEpisodeError):
        adapter.ingest(forged, now=forged.timestamp)
    adapter.close()
