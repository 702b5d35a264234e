"""The Memory Gate on real dialogue: r_N's recall and precision by hand label, consolidation on a
real LoCoMo conversation, and the bullets ablation the bundled campaign measures.

`gate_recall_sample.json` holds hand labels (turn ids and labels only; the text stays in the shared
dataset): a uniform random sample of 400 of the 3,944 turns of locomo-dev7.json (recall and
precision), 50 more turns drawn from those the rule fires on, and every conv-26 turn it fires on
(precision). Label: does the speaker state a durable fact about themselves a long-term memory should
keep (a standing preference, a new or changed status/pursuit/membership, an explicit request)?

Measured (routing.py before -> after the recall revision), recall as hits/facts, precision as
hits/fired:
- in-sample (the first 300 turns; the revision was written while looking at their misses):
  recall 5/47 -> 31/47, precision 5/6 -> 31/34;
- out-of-sample (the last 100, labelled after the rules were final, without their output):
  recall 1/17 -> 4/17 (Wilson 95% 10-47%), precision 1/1 -> 4/4.
So the rule is precise but still misses most self-disclosure phrased freely; it is not tuned
further here, because a tuning round on these misses would leave no unseen sample to measure on.
Over every hand-labelled firing turn precision is 104/113. On conv-26 the gate now consolidates
twice (D13:1 at its novel task class, D15:28 at its session end), where before it never did, so
the bullets ablation has something to ablate.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from lsrep.adapters.thalia import Options, ThaliaAdapter
from lsrep.probes.locomo import build_locomo
from lsrep.systems.thalia import Thalia
from lsrep.systems.thalia.routing import requires_consolidation

from lsrep.contract import AdapterSetup, FidelityEvent, ReplayTurn

HERE = Path(__file__).parent
REPO = Path(__file__).resolve().parents[3]
# The shared data sit beside the checkout (or beside its parent, for a worktree).
LOCOMO = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared")
               if (p / "datasets").is_dir()), REPO.parent / "shared") / "datasets" / "locomo" / "locomo-dev7.json"
CAMPAIGN = REPO / "campaigns" / "seed-findings" / "thalia-bullets.toml"
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason="shared LoCoMo data not found")

LABELS = json.loads((HERE / "gate_recall_sample.json").read_text())
CONSOLIDATED_ON_CONV26 = ("D13:1", "D15:28")


def _texts() -> dict[tuple[str, str], str]:
    out = {}
    for conv in json.loads(LOCOMO.read_text()):
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    out[(conv["sample_id"], turn["dia_id"])] = turn.get("text", "")
    return out


def _fires(texts, rows) -> list[bool]:
    return [requires_consolidation("single-session", texts[(x["conversation"], x["dia_id"])]) for x in rows]


@needs_locomo
@pytest.mark.parametrize("splits, min_recall", [(("dev", "dev2"), 0.6), (("fresh",), 0.2)])
def test_recall_and_precision_on_a_uniform_sample_of_real_turns(splits, min_recall):
    """In-sample (dev, dev2: 31/47) and out-of-sample (fresh: 4/17) recall; precision >= .85."""
    texts = _texts()
    rows = [x for x in LABELS["labels"] if x["split"] in splits]
    fired = _fires(texts, rows)
    positives = sum(x["remember"] for x in rows)
    hits = sum(f and x["remember"] for f, x in zip(fired, rows, strict=True))
    assert positives >= 15 and sum(fired) >= 3  # real positives to recall, firings to judge
    recall, precision = hits / positives, hits / sum(fired)
    assert recall >= min_recall, (recall, hits, positives)
    assert precision >= 0.85, (precision, hits, sum(fired))


@needs_locomo
def test_precision_over_every_hand_labelled_firing_turn():
    texts = _texts()
    old = json.loads((HERE / "gate_labels.json").read_text())
    rows = {(x["conversation"], x["dia_id"]): x["remember"]
            for x in [*LABELS["labels"], *LABELS["fired_sample"], *LABELS["conv26_fired"], *old]}
    fired = [k for k in rows if requires_consolidation("single-session", texts[k])]
    assert len(fired) >= 100, len(fired)  # the labelled firing turns still fire
    assert sum(rows[k] for k in fired) / len(fired) >= 0.85


@needs_locomo
def test_the_rule_is_not_normal_speech_and_every_conv26_trigger_is_labelled():
    texts = _texts()
    fired = [k for k, text in texts.items() if requires_consolidation("single-session", text)]
    assert 150 <= len(fired) <= 300, len(fired)  # of 3,944 turns: ~5%, not every turn
    labelled = {(x["conversation"], x["dia_id"])
                for x in [*LABELS["labels"], *LABELS["fired_sample"], *LABELS["conv26_fired"]]}
    assert not [k for k in fired if k[0] == "conv-26" and k not in labelled]


def _conv26_turns() -> list[ReplayTurn]:
    (conv,) = build_locomo(LOCOMO, ["conv-26"])
    return [ReplayTurn(turn_id=t.turn_id, session_id=t.session_id, conversation_id="conv-26", index=i,
                       timestamp=t.timestamp, role=t.role, speaker=t.speaker, content=t.content)
            for i, t in enumerate(conv.turns)]


@needs_locomo
def test_the_gate_consolidates_real_conv26_turns_whose_facts_are_worth_keeping(tmp_path):
    turns = _conv26_turns()
    consolidated = []
    with Thalia(tmp_path / "s") as thalia:
        for i, t in enumerate(turns):
            out = thalia.append_turn(t.content, role=t.role, session_id=t.session_id,
                                     timestamp=t.timestamp, source_id=t.turn_id, speaker=t.speaker)
            if out.action != "none":
                consolidated.append(t.turn_id)
            if i + 1 == len(turns) or turns[i + 1].session_id != t.session_id:
                end = thalia.end_session(t.session_id, timestamp=t.timestamp)
                if end is not None and end.action != "none":
                    consolidated.append(t.turn_id)
        bullets = thalia.memory.snapshot().bullets
    assert tuple(consolidated) == CONSOLIDATED_ON_CONV26
    assert len(bullets) == 2 and "Bach and Mozart" in bullets[1].text
    good = {x["dia_id"] for x in LABELS["conv26_fired"] if x["remember"]}
    assert set(consolidated) <= good  # both hand-labelled as worth keeping


@needs_locomo
def test_of_the_shared_conversations_only_three_consolidate(tmp_path):
    """What the campaign header states: r_N fires on ~5% of the turns, the dual key lets 4 through."""
    got = {}
    for conv in build_locomo(LOCOMO):
        turns, done = conv.turns, []
        with Thalia(tmp_path / conv.sample_id) as thalia:
            for i, t in enumerate(turns):
                if thalia.append_turn(t.content, role=t.role, session_id=t.session_id, timestamp=t.timestamp,
                                      source_id=t.turn_id, speaker=t.speaker).action != "none":
                    done.append(t.turn_id)
                if i + 1 == len(turns) or turns[i + 1].session_id != t.session_id:
                    end = thalia.end_session(t.session_id, timestamp=t.timestamp)
                    if end is not None and end.action != "none":
                        done.append(t.turn_id)
        if done:
            got[conv.sample_id] = tuple(done)
    assert got == {"conv-26": CONSOLIDATED_ON_CONV26, "conv-41": ("D4:1",), "conv-43": ("D2:4",)}
    spec = tomllib.loads(CAMPAIGN.read_text())
    assert sorted(t["id"] for t in spec["trajectories"]) == sorted(got)


def _replay(tmp_path: Path, disabled: frozenset[str]):
    adapter = ThaliaAdapter(AdapterSetup(options=Options(), disabled=disabled, state_dir=tmp_path))
    events: list[FidelityEvent] = []
    adapter.bind_events(events.append)
    turns = _conv26_turns()
    adapter.reset(conversation_id="conv-26", now=turns[0].timestamp)
    for i, t in enumerate(turns):
        adapter.ingest(t, now=t.timestamp)
        if i + 1 == len(turns) or turns[i + 1].session_id != t.session_id:
            adapter.end_session(t.session_id, now=t.timestamp)
    result = adapter.query("What kind of music does Melanie like?", now=turns[-1].timestamp)
    adapter.close()
    return result, events


@needs_locomo
def test_the_campaign_ablation_removes_exactly_the_bullets(tmp_path):
    """The campaign's two conditions, replayed through the adapter: with consolidation the answer
    context carries the two bullets (citing their source turns); switched off, none, and the
    gate reports the ablation where it would have consolidated."""
    spec = tomllib.loads(CAMPAIGN.read_text())
    conds = {c["name"]: c for c in spec["conditions"]}
    assert spec["compare"] == [["thalia", "thalia-no-bullets"]]
    assert not conds["thalia"].get("disable") and not conds["thalia"].get("options")
    off = frozenset(conds["thalia-no-bullets"]["disable"])
    assert off == {"thalia.gate.consolidate"} and not conds["thalia-no-bullets"].get("options")
    assert [t["id"] for t in spec["trajectories"]] == ["conv-26", "conv-41", "conv-43"]

    on_result, on_events = _replay(tmp_path / "on", frozenset())
    off_result, off_events = _replay(tmp_path / "off", off)
    memory = [f for f in on_result.fragments if f.kind == "memory"]
    assert [f.source_turn_ids for f in memory] == [(t,) for t in CONSOLIDATED_ON_CONV26]
    assert not [f for f in off_result.fragments if f.kind == "memory"]
    assert [f.text for f in off_result.fragments] == [f.text for f in on_result.fragments if f.kind != "memory"]

    def gate(events, stage):
        return [e for e in events if e.mechanism == "thalia.gate.consolidate" and e.stage == stage]
    assert len(gate(on_events, "executed")) == 2 and not gate(off_events, "executed")
    assert len([e for e in gate(off_events, "skipped") if "ablated" in (e.reason or "")]) == 2
