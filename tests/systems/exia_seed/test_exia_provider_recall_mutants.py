"""The provider's recall wiring and tool dispatch, exactly: which prompts are recalled for, the
phase, the returned block, the recall status, the journal row, priming from the previous recall,
and which tool runs with which error reply.

Killing tests for scripts/mutation/exia-rules2.toml (provider.py: `is_trivial_prompt`, `prefetch`,
`_primed`, `_journal`, `handle_tool_call`). The facts are LoCoMo conv-26 turns (Caroline and
Melanie) copied here, so the tests run without the shared data.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from exia_testkit import at, fact
from lsrep.systems.exia_seed import ExiaSeedProvider
from lsrep.systems.exia_seed.provider import RecallStatus, is_trivial_prompt

LABEL = "EXIA SEED"
FACTS = [
    ("Caroline went to a LGBTQ support group on May 7 and found it powerful.", "Caroline"),
    ("Melanie ran a charity race for mental health last Saturday.", "Melanie"),
    ("Caroline is researching adoption agencies to start a family.", "Caroline"),
]


def remembered(rig, **settings):
    """A provider whose pages hold FACTS, each page with a summary, consolidated on March 1."""
    r = rig(scripted=True, **settings)
    r.model.summary = lambda subject: f"{subject} is a counselor who paints."
    proposals = []
    for text, node in FACTS:
        proposals.append(fact(text, [r.note(text, at())], node))
    r.model.push({"faits": proposals})
    assert r.provider.consolidate(at())["admis"] == 3
    r.events.clear()
    return r


def recall_events(r, mechanism: str) -> list[tuple]:
    return [(e.stage, e.reason, e.count, e.ids, dict(e.params)) for e in r.events if e.mechanism == mechanism]


def journal(r) -> list[dict]:
    path = r.root / "journal" / "rappel.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- the trivial-prompt skip --------------------------------------------------------------------

@pytest.mark.parametrize(("prompt", "trivial"), [
    ("", True), ("   ", True), ("?!", True),                    # nothing left once stripped
    ("  Thanks! ", True), ("OK.", True), ("merci", True),        # acknowledgements
    ("/reset", True), (" /help me", True),                       # slash commands
    ("What did Caroline do at the support group?", False),
    ("thanks for the advice about adoption agencies", False),
    ("ok so where did Melanie run", False),
])
def test_is_trivial_prompt(prompt, trivial):
    assert is_trivial_prompt(prompt) is trivial


# -- who is recalled for ---------------------------------------------------------------------------

@pytest.mark.parametrize(("context", "settings"), [("subagent", {}), ("cron", {"phase": 2}),
                                                    ("primary", {"auto_recall": False})])
def test_ineligible_recall_returns_nothing_and_journals_nothing(rig, context, settings):
    r = rig(context=context, **settings)
    assert r.provider.prefetch("What did Caroline do at the support group?", now=at()) == ""
    phase = settings.get("phase", 1)
    assert [(e.mechanism, e.stage, e.reason) for e in r.events] == [
        (f"recall.phase{phase}", "ineligible", "contexte non primaire ou rappel désactivé")]
    assert r.provider.recall_status() == RecallStatus(LABEL, 0, phase)
    assert journal(r) == []


@pytest.mark.parametrize(("prompt", "settings", "reason"), [
    ("Thanks!", {"phase": 2}, "trivial"),
    ("/new", {}, "trivial"),
    ("What did Caroline do at the support group?", {"phase": 2, "disabled": {"recall.phase2"}}, "disabled"),
    ("What did Caroline do at the support group?", {"disabled": {"recall.phase1"}}, "disabled"),
    ("Thanks!", {"disabled": {"recall.phase1"}}, "trivial"),
])
def test_trivial_or_disabled_recall_is_skipped(rig, prompt, settings, reason):
    r = remembered(rig, **settings)
    phase = settings.get("phase", 1)
    assert r.provider.prefetch(prompt, now=at(days=1)) == ""
    assert [(e.mechanism, e.stage, e.reason) for e in r.events] == [(f"recall.phase{phase}", "skipped", reason)]
    assert r.provider.recall_status() == RecallStatus(LABEL, 0, phase)
    assert journal(r) == []


def test_a_disabled_other_phase_does_not_skip(rig):
    r = remembered(rig, phase=2, disabled={"recall.phase1"})
    assert "Caroline is researching adoption agencies" in r.provider.prefetch("What did Caroline do at the support "
                                                                              "group?", now=at(days=1))


# -- phases -------------------------------------------------------------------------------------

CAROLINE_BLOCK = ("Caroline\n  Caroline is a counselor who paints.\n"
                  "  - Caroline went to a LGBTQ support group on May 7 and found it powerful. (2026-03-01)\n"
                  "  - Caroline is researching adoption agencies to start a family. (2026-03-01)")


def test_phase2_returns_the_block_with_its_status_events_and_journal(rig):
    r = remembered(rig, phase=2)
    query = "What did Caroline do at the support group?"
    block = r.provider.prefetch(query, now=at(days=1))
    assert block == CAROLINE_BLOCK and len(block) == 212
    st = r.provider.recall_status()
    facts = [line.fact_ids[0] for line in st.lines if line.kind == "fact"]
    assert [line.kind for line in st.lines] == ["subject", "summary", "fact", "fact"]
    assert st.lines[1].fact_ids == tuple(facts)  # a summary line carries ids, which are not shown facts
    assert (st.provider_label, st.count, st.phase, st.subjects, st.selected, st.graph_reached, st.primed) == (
        LABEL, 2, 2, ("caroline",), tuple(facts), (), ())
    assert st.tokens == 53 and st.work == 11  # (212 + 3) // 4
    assert recall_events(r, "recall.phase2") == [
        ("eligible", None, None, (), {}),
        ("output", None, 2, tuple(facts), {"estimated_tokens": 53, "subjects": 1, "summaries": 1}),
        ("selected", None, 2, tuple(facts), {}),
    ]
    assert journal(r) == [{"ts": "2026-03-02T09:00:00+00:00", "requete": query, "phase": 2, "faits": facts,
                           "sujets": ["caroline"], "jetons_generiques": 40, "jetons_bloc": 53}]


def test_only_fact_lines_count_as_shown(rig):
    # The summary cites every fact of the page, the future one too; the block shows only the
    # facts recall kept, and only those are counted, reported and selected.
    r = rig(scripted=True, phase=2)
    r.model.summary = lambda subject: f"{subject} is a counselor who paints."
    later = "Caroline will meet the adoption agency on March 20."
    proposals = [fact(text, [r.note(text, at())], node) for text, node in FACTS[::2]]
    proposals.append(fact(later, [r.note(later, at())], "Caroline", type="prospective",
                          date_evenement="2026-03-20", echeance="2026-03-20"))
    r.model.push({"faits": proposals})
    assert r.provider.consolidate(at())["admis"] == 3
    r.events.clear()
    block = r.provider.prefetch("What did Caroline do at the support group?", now=at(days=1))
    assert later not in block
    st = r.provider.recall_status()
    shown = tuple(line.fact_ids[0] for line in st.lines if line.kind == "fact")
    assert len(st.lines[1].fact_ids) == 3 and len(shown) == 2 and set(shown) < set(st.lines[1].fact_ids)
    assert st.count == 2
    assert [(e.stage, e.count, e.ids) for e in r.events if e.mechanism == "recall.phase2"] == [
        ("eligible", None, ()), ("output", 2, shown), ("selected", 2, shown)]


def test_phase2_tokens_round_up(rig):
    r = remembered(rig, phase=2)
    block = r.provider.prefetch("Where did Melanie run the charity race?", now=at(days=1))
    assert block == ("Melanie\n  Melanie is a counselor who paints.\n"
                     "  - Melanie ran a charity race for mental health last Saturday. (2026-03-01)")
    assert len(block) == 121
    st = r.provider.recall_status()
    assert (st.count, st.tokens) == (1, 31)  # (121 + 3) // 4
    assert [line.kind for line in st.lines] == ["subject", "summary", "fact"]
    assert recall_events(r, "recall.phase2")[1][4] == {"estimated_tokens": 31, "subjects": 1, "summaries": 1}
    assert journal(r)[0]["jetons_bloc"] == 31


@pytest.mark.parametrize("phase", [1, 0])
def test_phase1_journals_and_returns_nothing(rig, phase):
    r = remembered(rig, phase=phase)
    query = "What did Caroline do at the support group?"
    assert r.provider.prefetch(query, now=at(days=1)) == ""
    st = r.provider.recall_status()
    assert (st.count, st.phase, st.lines, st.subjects, st.tokens, st.work) == (0, 1, (), ("caroline",), 0, 11)
    assert len(st.selected) == 2
    assert recall_events(r, "recall.phase1") == [
        ("eligible", None, None, (), {}),
        ("executed", None, 2, (), {"journaled_tokens": 40}),
    ]
    assert journal(r) == [{"ts": "2026-03-02T09:00:00+00:00", "requete": query, "phase": 1,
                           "faits": list(st.selected), "sujets": ["caroline"], "jetons_generiques": 40,
                           "jetons_bloc": 0}]


def test_a_phase_above_2_is_phase_2(rig):
    r = remembered(rig, phase=3)
    assert r.provider.prefetch("What did Caroline do at the support group?", now=at(days=1)) == CAROLINE_BLOCK
    assert r.provider.recall_status().phase == 2
    assert journal(r)[0]["phase"] == 2


def test_phase2_with_nothing_selected_is_executed_without_selection(rig):
    r = remembered(rig, phase=2)
    assert r.provider.prefetch("Which pottery class did she take?", now=at(days=1)) == ""
    st = r.provider.recall_status()
    assert (st.count, st.lines, st.selected, st.tokens) == (0, (), (), 0)
    assert recall_events(r, "recall.phase2") == [
        ("eligible", None, None, (), {}),
        ("executed", None, 0, (), {"estimated_tokens": 0, "subjects": 0, "summaries": 0}),
    ]


# -- priming ------------------------------------------------------------------------------------

def primed_after(rig, gap: timedelta, **settings) -> tuple[str, ...]:
    """The pages primed when a second recall follows the first by `gap`."""
    r = remembered(rig, phase=2, **settings)
    first = at(days=1)
    r.provider.prefetch("What did Caroline do at the support group?", now=first)
    assert r.provider.recall_status().primed == ()
    assert r.provider.runtime.primed_at == first.isoformat() and r.provider.runtime.primed == ["caroline"]
    r.provider.prefetch("Where did Melanie run the charity race?", now=first + gap)
    return r.provider.recall_status().primed


def test_the_previous_recall_primes_the_next_within_the_window(rig):
    assert primed_after(rig, timedelta(minutes=3)) == ("caroline",)
    assert primed_after(rig, timedelta(minutes=10)) == ("caroline",)  # the window's end is inside
    assert primed_after(rig, timedelta(minutes=10, seconds=1)) == ()
    assert primed_after(rig, timedelta(minutes=30), priming_minutes=30) == ("caroline",)
    assert primed_after(rig, timedelta(minutes=31), priming_minutes=30) == ()
    assert primed_after(rig, timedelta(0), priming_minutes=0) == ("caroline",)


def test_no_priming_before_any_recall(rig):
    r = remembered(rig, phase=2)
    assert r.provider._primed(at(days=1)) == set()
    r.provider.prefetch("What did Caroline do at the support group?", now=at(days=1))
    assert r.provider._primed(at(days=1, minutes=5)) == {"caroline"}
    assert r.provider._primed(at(days=1, minutes=11)) == set()


# -- tool dispatch ------------------------------------------------------------------------------

def test_a_tool_call_needs_a_datetime(rig):
    r = rig()
    assert json.loads(r.provider.handle_tool_call("memoire_noter", {"texte": "x"})) == {
        "error": "now (simulated time) is required"}
    assert json.loads(r.provider.handle_tool_call("memoire_noter", {"texte": "x"}, now=at().isoformat())) == {
        "error": "now (simulated time) is required"}
    assert r.events == []


def test_an_unknown_tool_and_an_uninitialised_provider(rig):
    r = rig()
    assert json.loads(r.provider.handle_tool_call("memoire_oublier", {}, now=at())) == {
        "error": "outil inconnu: memoire_oublier"}
    assert r.events == []
    bare = ExiaSeedProvider()
    assert json.loads(bare.handle_tool_call("memoire_chercher", {"requete": "Caroline"}, now=at())) == {
        "error": "fournisseur non initialisé"}


@pytest.mark.parametrize(("tool", "mechanism"), [("memoire_noter", "tool.note"), ("memoire_chercher", "tool.search"),
                                                 ("memoire_lire", "tool.read")])
def test_a_disabled_tool_is_skipped(rig, tool, mechanism):
    r = rig(disabled={mechanism})
    reply = r.provider.handle_tool_call(tool, {"texte": "Caroline paints.", "requete": "Caroline",
                                                "sujet": "Caroline"}, now=at())
    assert reply == '{"error": "outil d\\u00e9sactiv\\u00e9"}'
    assert [(e.mechanism, e.stage, e.reason) for e in r.events] == [(mechanism, "skipped", "disabled")]
    assert not (r.root / "registre").exists() or not any((r.root / "registre").iterdir())


def test_each_tool_runs_its_own_code(rig):
    r = remembered(rig)
    note = json.loads(r.provider.handle_tool_call("memoire_noter", {"texte": "Melanie's café has a pottery corner."},
                                                  now=at(days=1)))
    assert set(note) == {"ok", "id"} and note["ok"] is True
    assert [(e.mechanism, e.stage) for e in r.events] == [("tool.note", "eligible"), ("tool.note", "output")]
    r.events.clear()
    raw = r.provider.handle_tool_call("memoire_chercher", {"requete": "charity race"}, now=at(days=1))
    found = json.loads(raw)
    assert [f["fait"] for f in found["faits"]] == ["Melanie ran a charity race for mental health last Saturday."]
    assert [(e.mechanism, e.stage) for e in r.events] == [("tool.search", "eligible"), ("recall.cache", "eligible"),
                                                          ("recall.cache", "executed"), ("tool.search", "output")]
    r.events.clear()
    page = json.loads(r.provider.handle_tool_call("memoire_lire", {"sujet": "Caroline"}, now=at(days=1)))
    assert [f["fait"] for s in page["sections"].values() for f in s] == [FACTS[0][0], FACTS[2][0]]
    assert [(e.mechanism, e.stage) for e in r.events if e.mechanism.startswith("tool")] == [
        ("tool.read", "eligible"), ("tool.read", "output")]


def test_tool_names_parsed_from_a_host_message_dispatch_by_value(rig):
    # A host reads the model's tool call from JSON: the names are equal to the constants, not the
    # same objects.
    r = remembered(rig)
    calls = json.loads('[{"name": "memoire_noter", "arguments": {"texte": "Caroline paints sunsets by the lake."}},'
                       ' {"name": "memoire_chercher", "arguments": {"requete": "charity race"}},'
                       ' {"name": "memoire_lire", "arguments": {"sujet": "Melanie"}}]')
    replies = [json.loads(r.provider.handle_tool_call(c["name"], c["arguments"], now=at(days=1))) for c in calls]
    assert replies[0]["ok"] is True
    assert [f["fait"] for f in replies[1]["faits"]] == [FACTS[1][0]]
    assert [f["fait"] for s in replies[2]["sections"].values() for f in s] == [FACTS[1][0]]
    assert [(e.mechanism, e.stage) for e in r.events if e.mechanism.startswith("tool")] == [
        ("tool.note", "eligible"), ("tool.note", "output"), ("tool.search", "eligible"), ("tool.search", "output"),
        ("tool.read", "eligible"), ("tool.read", "output")]


def test_a_tool_reply_keeps_non_ascii_text(rig):
    r = rig(scripted=True)
    text = "Melanie's café has a pottery corner."
    r.model.push({"faits": [fact(text, [r.note(text, at())], "Melanie")]})
    assert r.provider.consolidate(at())["admis"] == 1
    raw = r.provider.handle_tool_call("memoire_chercher", {"requete": "café pottery"}, now=at(days=1))
    assert "Melanie's café has a pottery corner." in raw


def test_a_failing_tool_replies_with_its_error_cut_at_200_characters(rig):
    r = remembered(rig)
    bad = "x" * 300
    reply = json.loads(r.provider.handle_tool_call("memoire_chercher", {"requete": "race", "limite": bad},
                                                   now=at(days=1)))
    message = f"invalid literal for int() with base 10: '{bad}'"[:200]
    assert reply == {"error": message} and len(message) == 200
    assert [(e.mechanism, e.stage, e.reason) for e in r.events if e.mechanism == "tool.search"] == [
        ("tool.search", "eligible", None), ("tool.search", "error", message)]
