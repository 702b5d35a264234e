"""Budgets: ICE's packed context stays bounded under density stress (~3,000-token turns)."""

from __future__ import annotations

from ice_testkit import day
from lsrep.systems.ice.text import estimate_tokens

TOPICS = ["glaciers", "violins", "lighthouses", "orchards", "submarines", "telescopes",
          "vineyards", "bridges", "volcanoes", "libraries", "railways", "beehives"]


def dense_turn(topic: str, tokens: int = 3000) -> str:
    """A turn of about `tokens` estimated tokens about one topic."""
    sentence = (f"Today I kept thinking about {topic} and wrote long notes about {topic}, "
                f"their history, their makers and the places where {topic} matter. ")
    text = sentence * (tokens * 4 // len(sentence) + 1)
    return text[: tokens * 4]


def test_density_stress_context_stays_within_budget(harness):
    h = harness()
    for n in range(30):  # 30 turns of 3,000 tokens: a top-30 baseline sends ~90k tokens
        h.say(dense_turn(f"{TOPICS[n % len(TOPICS)]} (round {n // len(TOPICS)})"))
    assert estimate_tokens(dense_turn("x")) == 3000
    pf = h.ask("What did I write about violins and telescopes?")
    memory = sum(f.tokens for f in pf.memory)
    recent = sum(f.tokens for f in pf.fragments if f.kind == "recent")
    assert pf.budget.native == 16000  # min(16,000, 2,000 + 0.5 x 90,000)
    assert 0 < memory <= pf.budget.effective
    assert recent <= h.system.config.recent_max_tokens
    assert memory + recent <= 20000  # the seed: ICE held ~20k where top-30 sent ~88k
    top30 = sum(estimate_tokens(t.render()) for t in h.system.db.episodic.all_turns()[:30])
    assert top30 > 80000 and top30 > 4 * (memory + recent)

    fresh = h.ask("What did I write about violins and telescopes?", conv="elsewhere")
    assert fresh.budget.native == 2000
    assert sum(f.tokens for f in fresh.memory) <= 2000  # no 3,000-token turn fits


def test_context_budget_caps_everything_returned(harness):
    h = harness(context_budget=7000)
    h.system.set_slot("style", "concise", now=day(0))
    for topic in TOPICS:
        h.say(dense_turn(topic))
    pf = h.ask("What did I write about violins and telescopes?")
    total = sum(f.tokens for f in pf.fragments)
    assert total <= 7000
    assert pf.budget.effective < pf.budget.native
    assert pf.truncated_tokens > 0
    assert h.recorder.last("recent_window", "executed").params["cap_tokens"] <= 7000 * 0.25


def test_static_budget_replaces_dynamic(harness):
    h = harness(static_budget=5000)
    for topic in TOPICS[:4]:
        h.say(dense_turn(topic, 500))
    pf = h.ask("What did I write about violins?")
    assert (pf.budget.native, pf.budget.rule) == (5000, "static")
