"""Decay, reinforcement, summaries, model injection, and byte-stable state."""

from __future__ import annotations

import json
import math
import shutil

from ice_testkit import FILLER, Harness, day
from lsrep.systems.ice.extraction import TASK_EXTRACT, TASK_SUMMARIZE

from lsrep.contract import digest_directory


def strength(h: Harness, turn_id: str) -> float:
    return h.system.db.episodic.get(turn_id).strength


def test_decay_halves_strength_every_14_simulated_days_with_floor(harness):
    h = harness()
    first = h.say("I baked sourdough bread.", at=0)
    h.system.run_decay(now=day(14))
    assert math.isclose(strength(h, first), 0.5, rel_tol=1e-9)
    h.system.run_decay(now=day(28))  # dt counts from the last update, not from creation
    assert math.isclose(strength(h, first), 0.25, rel_tol=1e-9)
    h.system.run_decay(now=day(400))
    assert strength(h, first) == 0.05
    assert h.recorder.last("worker.decay", "output").params["mean_strength"] == 0.05


def test_access_reinforces_retrieved_turns_only_when_switched_on_i10(harness):
    def run(**config) -> tuple[Harness, str]:
        h = harness(**config)
        bread = h.say("I baked sourdough bread with rye flour.", at=0)
        h.say_all(FILLER[2:] + FILLER[2:], at=1)
        h.system.run_decay(now=day(30))
        return h, bread

    h, bread = run()
    weak = strength(h, bread)
    assert weak < 0.3
    pf = h.ask("What bread did I bake with rye?", at=30)
    assert any(bread in f.source_turn_ids and f.kind == "memory" for f in pf.fragments)
    assert strength(h, bread) == 1.0
    assert bread in h.recorder.last("reinforce", "output").ids

    off, bread = run(disabled=frozenset({"reinforce"}))
    before = _digest(off)
    off.ask("What bread did I bake with rye?", at=30)
    assert off.recorder.stages("reinforce") == ["eligible", "skipped"]
    assert strength(off, bread) < 0.3 and _digest(off) == before  # a read-only query

    nodecay = harness(disabled=frozenset({"worker.decay"}))
    t = nodecay.say("I baked sourdough bread.")
    nodecay.system.run_decay(now=day(60))
    assert strength(nodecay, t) == 1.0
    assert nodecay.recorder.stages("worker.decay") == ["eligible", "skipped"]


def test_summary_worker_writes_batches_of_20(harness):
    h = harness()
    h.say_all(FILLER * 5)  # 40 turns -> two batches
    written = h.system.run_summaries(now=day(50))
    assert len(written) == 2
    assert h.system.run_summaries(now=day(51)) == []  # nothing new to summarise
    first = h.system.db.summaries.get(written[0])
    assert len(first.source_turns) == 20 and first.source_turns[0] == "t0000"
    assert len(first.text) <= 600


class ScriptedModel:
    """A deterministic fake model with scripted replies (a real component, not a mock)."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.calls: list[str] = []

    def complete(self, messages) -> str:
        task = messages[0]["content"].splitlines()[0]
        self.calls.append(task)
        return self.replies[task]


def test_injected_model_drives_extraction_and_summaries(tmp_path):
    reply = {"triples": [{"subject": "user", "relation": "Lives In", "object": "Oslo",
                          "type": "property", "date": None, "confidence": 0.95,
                          "object_type": "place"}],
             "entities": [{"name": "Oslo", "type": "place"}], "procedures": []}
    model = ScriptedModel({TASK_EXTRACT: "Sure! " + json.dumps(reply),
                           TASK_SUMMARIZE: json.dumps({"summary": "User lives in Oslo."})})
    h = Harness(tmp_path / "a")
    h.system.lm = model
    h.say_all(["Whatever the text says."] * 20)
    assert h.system.db.codex.current_value(
        h.system.db.codex.lookup("user")[0], "lives_in") == "Oslo"
    assert h.system.run_summaries(now=day(30))
    assert model.calls.count(TASK_EXTRACT) == 20 and model.calls[-1] == TASK_SUMMARIZE

    broken = Harness(tmp_path / "b")
    broken.system.lm = ScriptedModel({TASK_EXTRACT: "no json here"})
    broken.say("I live in Oslo.")
    assert broken.recorder.stages("extract.codex") == ["error"]
    assert broken.system.db.episodic.pending_extraction() == []


def _digest(h: Harness) -> str:
    return digest_directory(h.system.state_dir)


def test_state_bytes_are_stable_and_restorable(tmp_path):
    runs = []
    for name in ("a", "b"):
        h = Harness(tmp_path / name)
        h.say_all(["I live in Lisbon.", "Always answer in bullet points."] + FILLER)
        h.system.run_decay(now=day(20))
        h.system.run_summaries(now=day(20))
        h.ask("Where do I live?", at=21)
        runs.append(h)
    assert _digest(runs[0]) == _digest(runs[1])

    h = runs[0]
    before = _digest(h)
    h.system.close()
    shutil.copytree(h.system.state_dir, tmp_path / "snap")
    h.ask("What did I bake with the starter?", at=22)  # reinforces: state changes
    assert _digest(h) != before
    h.system.close()
    shutil.rmtree(h.system.state_dir)
    shutil.copytree(tmp_path / "snap", h.system.state_dir)
    assert _digest(h) == before
    assert h.ask("Where do I live?", at=23).fragments  # reopens cleanly after restore
