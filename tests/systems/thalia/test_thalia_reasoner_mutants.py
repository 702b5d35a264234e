"""Recall, MEMORY.md and the Reasoner pinned by exact values (the `thalia-reasoner` mutation
session): the recall gate and its reasons, the limit, the present turns it skips, the recalled
windows (ids, negative source indices, text, provenance) and every event it emits; bullet parsing,
the content-token Jaccard and its threshold, the planned delta and the file it writes; ReAct
integration and its cap, citations at the overlap boundary and their fallback, grounding support,
the verify re-answer, and the Reasoner's exact event list and trace."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from lsrep.systems.thalia.config import HarnessConfig
from lsrep.systems.thalia.contracts import (
    Bullet,
    DeliveryMode,
    Episode,
    EvidenceWindow,
    RankedEvidence,
    RetrieverOutput,
)
from lsrep.systems.thalia.events import EventRelay, StageEvent
from lsrep.systems.thalia.lm import CallableLM
from lsrep.systems.thalia.memory import (
    HEADER,
    Delta,
    MemoryFile,
    bullet_fact,
    jaccard,
    make_snapshot,
    parse_bullets,
)
from lsrep.systems.thalia.reasoner import Reasoner, cite, integrate, support
from lsrep.systems.thalia.recall import recall_windows
from lsrep.systems.thalia.store import EpisodicStore
from lsrep.systems.thalia.text import token_count
from thalia_testkit import T0, Recorder

# -- recall.py --------------------------------------------------------------------------------


def _episode(turn_id: int, query: str, answer: str = "", speaker: str = "") -> Episode:
    return Episode(turn_id=turn_id, source_id=f"e{turn_id}", session_id=f"s{turn_id}",
                   timestamp=T0.replace(day=turn_id), role="user", speaker=speaker, query=query,
                   answer=answer)


def _store(tmp_path, episodes, fts=True, name="e") -> EpisodicStore:
    store = EpisodicStore(tmp_path / f"{name}{int(fts)}.sqlite", use_fts=fts)
    for e in episodes:
        store.append(e)
    return store


def _recall(query, store, present=(), **config):
    rec = Recorder()
    out = recall_windows(query, store, present, HarnessConfig(**config), EventRelay(rec))
    return out, rec.events


def test_recall_gate_reasons(tmp_path):
    empty = _store(tmp_path, [])
    out, events = _recall("wifi", empty, recall=False)
    assert out == () and events == [StageEvent("recall.fts", "ineligible", reason="recall is off")]
    out, events = _recall("wifi", empty, recall=True)
    assert out == () and events == [StageEvent("recall.fts", "ineligible",
                                                reason="episodic store is empty")]
    full = _store(tmp_path, [_episode(1, "my wifi password is blue")], name="full")
    out, events = _recall("wifi", full, recall=False)
    assert out == () and events == [StageEvent("recall.fts", "ineligible", reason="recall is off")]
    out, events = _recall("wifi", full, recall=True, ablate=frozenset({"recall.fts"}))
    assert out == () and events == [StageEvent("recall.fts", "eligible"),
                                     StageEvent("recall.fts", "skipped", reason="ablated")]
    empty.close()
    full.close()


@pytest.mark.parametrize("fts", [True, False])
def test_recall_windows_limit_exclusion_and_events(tmp_path, fts):
    store = _store(tmp_path, [
        _episode(1, "my wifi password is blue", "noted"),
        _episode(2, "the garden is green"),
        _episode(3, "wifi router in the attic", speaker="Ana"),
        _episode(4, "new wifi password is red"),
        _episode(5, "wifi again"),
    ], fts=fts)
    out, events = _recall("wifi password", store, present=[4], recall=True, recall_limit=2)
    # turn 4 is among the Inspector's windows: skipped; the limit counts the admitted ones
    ids = tuple(w.window_id for w in out)
    assert ids == (("recall:1", "recall:5") if fts else ("recall:1", "recall:3"))
    assert [w.source_index for w in out] == [-1, -2]
    assert all(w.origin == "recall" and w.rho == 0.0 and w.inspector_rank is None for w in out)
    first = out[0]
    assert first.window_id == "recall:1" and first.turn_id == 1 and first.source_id == "e1"
    assert first.session_id == "s1" and first.timestamp == T0.replace(day=1)
    assert first.text == "[2024-05-01] User: my wifi password is blue [2024-05-01] Assistant: noted"
    assert events == [
        StageEvent("recall.fts", "eligible"),
        StageEvent("recall.fts", "executed", count=2, params={
            "match": '"wifi" OR "password"', "backend": "fts5" if fts else "like", "limit": 2}),
        StageEvent("recall.fts", "output", count=2, ids=ids,
                   source_turn_ids=tuple(f"e{w.turn_id}" for w in out)),
    ]
    undated, _ = _recall("attic", store, recall=True, render_dates=False)
    assert [w.text for w in undated] == ["Ana: wifi router in the attic"]
    everything, _ = _recall("wifi", store, recall=True, recall_limit=10)
    assert sorted(w.turn_id for w in everything) == [1, 3, 4, 5]
    assert [w.source_index for w in everything] == [-1, -2, -3, -4]
    store.close()


def test_recall_without_hits_and_with_limit_zero(tmp_path):
    store = _store(tmp_path, [_episode(1, "my wifi password is blue")])
    out, events = _recall("zebra", store, recall=True)
    assert out == () and events == [
        StageEvent("recall.fts", "eligible"),
        StageEvent("recall.fts", "executed", count=0,
                   params={"match": '"zebra"', "backend": "fts5", "limit": 5})]
    out, events = _recall("what is the", store, recall=True, recall_drop_stopwords=True,
                          recall_limit=0)
    assert out == () and events[-1] == StageEvent(
        "recall.fts", "executed", count=0,
        params={"match": '"what" OR "is" OR "the"', "backend": "fts5", "limit": 0})
    out, _ = _recall("wifi", store, present=[1], recall=True)
    assert out == ()
    store.close()


def test_recall_source_turn_ids_keep_hit_order(tmp_path):
    store = _store(tmp_path, [_episode(1, "blue blue blue wifi"), _episode(2, "wifi")])
    out, events = _recall("blue wifi", store, recall=True)
    assert [w.window_id for w in out] == ["recall:1", "recall:2"]
    assert events[-1].source_turn_ids == ("e1", "e2") and events[-1].ids == ("recall:1", "recall:2")
    store.close()


# -- memory.py --------------------------------------------------------------------------------


def test_bullet_fact_and_parse_bullets():
    assert bullet_fact("- I live in Lisbon (source: turn 3, 2024-05-01) (was: turn 1, 2024-04-01)") \
        == "I live in Lisbon"
    assert bullet_fact("I live in Lisbon (source: turn 3, 2024-05-01)") == "I live in Lisbon"
    assert bullet_fact("-  spaced fact  ") == "spaced fact"
    text = ("# MEMORY\n\n- a fact (source: turn 4, 2024-05-01)\nnot a bullet\n-no space\n"
            "- unsourced fact\n")
    assert parse_bullets(text) == (
        Bullet(text="- a fact (source: turn 4, 2024-05-01)", source_turn=4, line_no=2),
        Bullet(text="- unsourced fact", source_turn=None, line_no=5))
    snap = make_snapshot(text)
    assert snap.text == text and snap.bullets == parse_bullets(text)
    assert snap.digest == hashlib.sha256(text.encode()).hexdigest()
    assert [b.bullet_id for b in snap.bullets] == ["memory:2", "memory:5"]


def test_jaccard_exact():
    assert jaccard("", "") == 0.0
    assert jaccard("the a", "of is") == 0.0  # stopwords only: no content tokens
    assert jaccard("office Berlin tower", "office Munich tower") == 0.5
    assert jaccard("office", "office Munich tower") == pytest.approx(1 / 3)
    assert jaccard("office", "") == 0.0
    assert jaccard("Office OFFICE", "office") == 1.0


def test_plan_threshold_boundary_first_match_and_sources(tmp_path):
    mf = MemoryFile(tmp_path / "MEMORY.md")
    assert mf.read() == "" and mf.snapshot().bullets == ()
    fresh = mf.plan("my  office\n is in Berlin", 2, T0, 0.5)
    assert fresh == Delta("append_memory", "- my office is in Berlin (source: turn 2, 2024-05-01)")
    mf.path.write_text(HEADER + "\n- office Berlin tower (source: turn 1, 2024-04-01)\n"
                       "- office Berlin tower annex (source: turn 3, 2024-04-02)\n"
                       "- cat Miso\n", encoding="utf-8")
    at = mf.plan("office Munich tower", 7, T0, 0.5)  # Jaccard exactly 0.5 with the first bullet
    assert at == Delta("update_memory", "- office Munich tower (source: turn 7, 2024-05-01) "
                       "(was: turn 1, 2024-04-01)",
                       replaced="- office Berlin tower (source: turn 1, 2024-04-01)")
    above = mf.plan("office Munich tower", 7, T0, 0.51)
    assert above == Delta("append_memory", "- office Munich tower (source: turn 7, 2024-05-01)")
    second = mf.plan("office Berlin tower annex", 8, T0, 0.9)  # only the second bullet reaches 0.9
    assert second.replaced == "- office Berlin tower annex (source: turn 3, 2024-04-02)"
    assert second.bullet.endswith("(was: turn 3, 2024-04-02)")
    unsourced = mf.plan("cat Miso sleeps", 9, T0, 0.6)
    assert unsourced == Delta("update_memory", "- cat Miso sleeps (source: turn 9, 2024-05-01) "
                              "(was: unsourced)", replaced="- cat Miso")
    assert mf.plan("zebra", 9, T0, 0.0).action == "update_memory"  # threshold 0: the first bullet
    assert mf.plan("zebra", 9, T0, 0.0).replaced.startswith("- office Berlin tower (source: turn 1")


def test_apply_writes_exact_text(tmp_path):
    mf = MemoryFile(tmp_path / "MEMORY.md")
    mf.apply(Delta("none", ""))
    assert mf.read() == "# MEMORY\n\n"
    mf.apply(Delta("append_memory", "- a (source: turn 1, 2024-05-01)"))
    assert mf.read() == "# MEMORY\n- a (source: turn 1, 2024-05-01)\n"
    mf.apply(Delta("append_memory", "- b (source: turn 2, 2024-05-01)"))
    mf.apply(Delta("update_memory", "- a2 (source: turn 3, 2024-05-02) (was: turn 1, 2024-05-01)",
                   replaced="- a (source: turn 1, 2024-05-01)"))
    assert mf.read() == ("# MEMORY\n- a2 (source: turn 3, 2024-05-02) (was: turn 1, 2024-05-01)\n"
                         "- b (source: turn 2, 2024-05-01)\n")
    before = mf.read()
    mf.apply(Delta("update_memory", "- c", replaced=None))  # nothing to replace: unchanged
    mf.apply(Delta("none", "- d", replaced="- b (source: turn 2, 2024-05-01)"))
    assert mf.read() == before
    mf.apply(Delta("append_memory", "- e", replaced="- b (source: turn 2, 2024-05-01)"))
    assert mf.read() == before + "- e\n"  # an append replaces nothing, whatever `replaced` says
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]  # the temporary file renamed


def test_apply_to_a_fresh_file_appends_under_the_header(tmp_path):
    mf = MemoryFile(tmp_path / "M.md")
    mf.apply(Delta("append_memory", "- x"))
    assert (tmp_path / "M.md").read_text(encoding="utf-8") == "# MEMORY\n- x\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["M.md"]


# -- reasoner.py: the pure functions ----------------------------------------------------------


def _w(i: int, text: str) -> EvidenceWindow:
    return EvidenceWindow(window_id=f"line:{i}", source_index=i, text=text, turn_id=i + 1,
                          source_id=f"t{i}", session_id="s", timestamp=T0, origin="inspector")


def test_integrate_cap_order_and_hop():
    ws = [_w(0, "garden party"), _w(1, "wifi password blue"), _w(2, "blue sticker"),
          _w(3, "sticker shop"), _w(4, "wifi router"), _w(5, "garden hose")]
    ids = lambda kept: [w.window_id for w in kept]  # noqa: E731
    # line:0 does not touch the query; line:2 joins through line:1, line:3 through line:2
    assert ids(integrate("wifi password", ws, 10)) == ["line:1", "line:2", "line:3", "line:4"]
    assert ids(integrate("wifi password", ws, 3)) == ["line:1", "line:2", "line:3"]
    assert ids(integrate("wifi password", ws, 1)) == ["line:1"]
    assert integrate("zebra", ws, 5) == [] and integrate("wifi", [], 5) == []
    assert ids(integrate("the wifi", ws, 10)) == ["line:1", "line:2", "line:3", "line:4"]


def test_cite_overlap_boundary():
    ws = [_w(0, "wifi password blue"), _w(1, "wifi garden"), _w(2, "zebra"), _w(3, "password wifi")]
    ids = lambda kept: [w.window_id for w in kept]  # noqa: E731
    assert ids(cite("the wifi password is blue", ws, 1)) == ["line:0", "line:1", "line:3"]
    assert ids(cite("the wifi password is blue", ws, 2)) == ["line:0", "line:3"]
    assert ids(cite("the wifi password is blue", ws, 3)) == ["line:0"]
    assert ids(cite("the wifi password is blue", ws, 4)) == []
    assert cite("", ws, 1) == []


def test_support_exact():
    assert support("", [_w(0, "wifi")]) == 0.0
    assert support("[2024-05-01] Ana: ", [_w(0, "wifi")]) == 0.0
    assert support("wifi password blue", []) == 0.0
    assert support("wifi password blue", [_w(0, "wifi password")]) == pytest.approx(2 / 3)
    # evidence accumulates over the cited windows
    assert support("wifi password blue", [_w(0, "wifi"), _w(1, "password"), _w(2, "blue")]) == 1.0
    assert support("the wifi", [_w(0, "wifi")]) == 0.5  # stopwords count in U(answer)


# -- reasoner.py: the Reasoner ----------------------------------------------------------------


def _retrieved(windows, inline=None, mode=DeliveryMode.INLINE, full=(), evidence_file=None):
    ranked = tuple(RankedEvidence(window=w, score=1.0 / (n + 1), fused_score=1.0 / (n + 1))
                   for n, w in enumerate(windows))
    return RetrieverOutput(query="q", category="single-session", weights=(0.5, 0.5), ranked=ranked,
                           inline=ranked if inline is None else ranked[:inline],
                           delivery_mode=mode, evidence_tokens=0, budget_tokens=0,
                           full_ranking=tuple(RankedEvidence(window=w, score=0.0, fused_score=0.0)
                                              for w in full),
                           evidence_file=evidence_file)


def _reason(replies, query, retrieved, category, snapshot=None, **config):
    rec = Recorder()
    seen: list[list[dict[str, str]]] = []
    it = iter(replies)

    def fn(messages):
        seen.append(list(messages))
        return next(it)

    reasoner = Reasoner(HarnessConfig(**config), CallableLM(fn, name="scripted"), EventRelay(rec))
    out = reasoner.reason(query, retrieved, category, snapshot or make_snapshot(""))
    return out, rec.events, seen


def _lm_events(messages, answered=True):
    digest = hashlib.sha256("\0".join(m["content"] for m in messages).encode()).hexdigest()
    tokens = sum(token_count(m["content"]) for m in messages)
    out = [StageEvent("reasoner.lm", "eligible"),
           StageEvent("reasoner.lm", "executed", params={"prompt_tokens": tokens,
                                                         "prompt_sha256": digest, "model": "scripted"})]
    return out + ([StageEvent("reasoner.lm", "output", count=1)] if answered else [])


def _route_events(category, route):
    p = {"category": category, "route": route}
    return [StageEvent("reasoner.route", "eligible"), StageEvent("reasoner.route", "executed", params=p),
            StageEvent("reasoner.route", "output", params=p)]


def test_single_pass_events_citations_and_output():
    ws = [_w(0, "garden party"), _w(1, "my wifi password is blue"), _w(2, "blue wifi router"),
          _w(3, "zebra")]
    out, events, seen = _reason(["  wifi password blue  "], "what is the wifi password",
                                _retrieved(ws), "single-session")
    assert out.answer == "wifi password blue" and out.route == "single-pass"
    assert out.prompt_window_ids == ("line:0", "line:1", "line:2", "line:3")  # no integration
    assert [c.window_id for c in out.citations] == ["line:1", "line:2"]
    assert [(c.source_index, c.source_id, c.text) for c in out.citations] == [
        (1, "t1", "my wifi password is blue"), (2, "t2", "blue wifi router")]
    assert out.citation_fallback is False and out.completions == 1
    assert out.support is None and out.support_after is None
    assert out.trace == ("classify: single-session", "route: single-pass", "cite: [1, 2]")
    assert out.messages == tuple(seen[0]) and len(seen) == 1
    assert events == [*_route_events("single-session", "single-pass"), *_lm_events(seen[0]),
                      StageEvent("reasoner.verify", "ineligible", reason="verify is off"),
                      StageEvent("reasoner.citations", "eligible"),
                      StageEvent("reasoner.citations", "executed", count=2),
                      StageEvent("reasoner.citations", "output", count=2, ids=("line:1", "line:2"),
                                 source_turn_ids=("t1", "t2"),
                                 params={"citation_fallback": False})]


def test_citation_fallback_and_duplicate_source_ids():
    ws = [_w(0, "garden party"), replace(_w(1, "wifi one"), source_id="t0"),
          replace(_w(2, "wifi two"), source_id="t0")]
    out, events, _ = _reason(["zebra"], "what is the wifi", _retrieved(ws), "single-session")
    assert [c.window_id for c in out.citations] == ["line:0"] and out.citation_fallback is True
    assert out.trace[-1] == "cite: [0] (fallback)"
    assert events[-2:] == [
        StageEvent("reasoner.citations", "executed", count=1, reason="citation_fallback"),
        StageEvent("reasoner.citations", "output", count=1, ids=("line:0",), source_turn_ids=("t0",),
                   params={"citation_fallback": True})]
    out, events, _ = _reason(["wifi"], "what is the wifi", _retrieved(ws), "single-session")
    assert events[-1].ids == ("line:1", "line:2") and events[-1].source_turn_ids == ("t0",)


def test_no_evidence_and_empty_answer():
    out, events, seen = _reason([""], "what is the wifi", _retrieved([]), "multi-session")
    assert out.answer == "" and out.citations == () and out.citation_fallback is False
    assert out.completions == 1 and out.prompt_window_ids == ()  # no retry without ranked windows
    assert out.trace == ("classify: multi-session", "route: react",
                         "read: 0 windows; integrate: kept 0", "cite: []")
    assert events == [*_route_events("multi-session", "react"), *_lm_events(seen[0], answered=False),
                      StageEvent("reasoner.verify", "ineligible", reason="verify is off"),
                      StageEvent("reasoner.citations", "ineligible", reason="no evidence")]


def test_react_integrates_to_the_cap_and_falls_back_to_the_ranking():
    ws = [_w(0, "garden party"), _w(1, "wifi password blue"), _w(2, "blue sticker"),
          _w(3, "wifi router"), _w(4, "wifi again")]
    out, _, seen = _reason(["wifi password blue"], "how many wifi password changes",
                           _retrieved(ws), "multi-session", max_evidence=2)
    assert out.prompt_window_ids == ("line:1", "line:2")
    assert out.trace[2] == "read: 5 windows; integrate: kept 2"
    assert "garden" not in seen[0][-1]["content"] and "router" not in seen[0][-1]["content"]
    # nothing shares a token with the query: the whole ranked list is read
    out, _, _ = _reason(["x"], "how many zebras in total", _retrieved(ws), "multi-session")
    assert out.prompt_window_ids == tuple(w.window_id for w in ws)
    assert out.trace[2] == "read: 5 windows; integrate: kept 5"


def test_react_retry_reads_the_ranked_list():
    ws = [_w(0, "garden party"), _w(1, "wifi password blue")]
    out, events, seen = _reason(["", "garden party"], "how many wifi password changes",
                                _retrieved(ws), "multi-session")
    assert len(seen) == 2 and out.completions == 2 and out.answer == "garden party"
    assert "garden" not in seen[0][-1]["content"] and "garden" in seen[1][-1]["content"]
    assert out.prompt_window_ids == ("line:0", "line:1")
    assert out.trace == ("classify: multi-session", "route: react",
                         "read: 2 windows; integrate: kept 1",
                         "retry: empty completion, re-run over the ranked list", "cite: [0]")
    assert events[3:8] == _lm_events(seen[0], answered=False) + _lm_events(seen[1])
    # single-pass never retries
    out, _, seen = _reason([""], "what is the wifi password", _retrieved(ws), "single-session")
    assert len(seen) == 1 and out.completions == 1


def test_file_based_note_and_trace():
    ws = [_w(0, "wifi password blue"), _w(1, "wifi router"), _w(2, "wifi again")]
    out, _, seen = _reason(["wifi"], "what is the wifi", _retrieved(
        ws, inline=1, mode=DeliveryMode.FILE_BASED, evidence_file="/tmp/ev.md"), "single-session")
    user = seen[0][-1]["content"]
    assert "(+2 ranked windows over budget, delivered by file: /tmp/ev.md)" in user
    assert out.trace[2] == "delivery: file_based, 2 windows withheld"
    assert out.prompt_window_ids == ("line:0",)
    out, _, seen = _reason(["wifi"], "what is the wifi", _retrieved(
        ws[:2], inline=1, mode=DeliveryMode.FILE_BASED), "single-session")
    assert "(+1 ranked windows over budget" in seen[0][-1]["content"]
    assert out.trace[2] == "delivery: file_based, 1 windows withheld"
    out, _, seen = _reason(["wifi"], "what is the wifi", _retrieved(
        ws, inline=3, mode=DeliveryMode.FILE_BASED), "single-session")
    assert "(+0 ranked windows over budget, delivered by file: not written (no evidence_dir))" \
        in seen[0][-1]["content"]
    out, _, seen = _reason(["wifi"], "what is the wifi", _retrieved(ws, inline=1), "single-session")
    assert "delivered by file" not in seen[0][-1]["content"] and len(out.trace) == 3


def test_memory_snapshot_event():
    snap = make_snapshot("# MEMORY\n\n- a (source: turn 1, 2024-05-01)\n- b\n")
    out, events, _ = _reason(["wifi"], "what is the wifi", _retrieved([_w(0, "wifi")]),
                             "single-session", snapshot=snap)
    assert StageEvent("memory.snapshot", "in_prompt", count=2, ids=("memory:2", "memory:3"),
                      params={"digest": snap.digest}) in events
    _, events, _ = _reason(["wifi"], "what is the wifi", _retrieved([_w(0, "wifi")]), "single-session")
    assert not [e for e in events if e.mechanism == "memory.snapshot"]


def test_verify_reanswers_below_threshold_only():
    ws = [_w(0, "wifi password blue"), _w(1, "garden")]
    full = [_w(5, "router password red"), *ws]
    out, events, seen = _reason(["wifi zebra", "router password red"], "what is the wifi",
                                _retrieved(ws, full=full), "single-session", verify=True,
                                grounding_threshold=0.6)
    assert len(seen) == 2 and out.completions == 2 and out.answer == "router password red"
    assert out.support == 0.5 and out.support_after == 1.0
    assert out.prompt_window_ids == ("line:5", "line:0", "line:1")
    assert [c.window_id for c in out.citations] == ["line:5", "line:0"]
    assert "verify: support 0.500 < 0.6, re-answered over 3 windows, support 1.000" in out.trace
    verify = [e for e in events if e.mechanism == "reasoner.verify"]
    assert verify == [StageEvent("reasoner.verify", "eligible"),
                      StageEvent("reasoner.verify", "executed",
                                 params={"support": 0.5, "threshold": 0.6}),
                      StageEvent("reasoner.verify", "output",
                                 params={"support_before": 0.5, "support_after": 1.0})]
    # at the threshold: no re-answer
    out, events, seen = _reason(["wifi zebra"], "what is the wifi", _retrieved(ws, full=full),
                                "single-session", verify=True, grounding_threshold=0.5)
    assert len(seen) == 1 and out.support == 0.5 and out.support_after is None
    assert [e.stage for e in events if e.mechanism == "reasoner.verify"] == ["eligible", "executed"]
    # below it but no full ranking: nothing to re-answer over
    out, _, seen = _reason(["wifi zebra"], "what is the wifi", _retrieved(ws), "single-session",
                           verify=True, grounding_threshold=0.6)
    assert len(seen) == 1 and out.support_after is None
    # ablated verify
    out, events, _ = _reason(["wifi zebra"], "what is the wifi", _retrieved(ws, full=full),
                             "single-session", verify=True, ablate=frozenset({"reasoner.verify"}))
    assert out.support is None
    assert [e.stage for e in events if e.mechanism == "reasoner.verify"] == ["eligible", "skipped"]


def test_verify_support_is_rounded_in_events():
    ws = [_w(0, "wifi password"), _w(1, "garden")]
    out, events, _ = _reason(["wifi password zebra"], "what is the wifi", _retrieved(ws),
                             "single-session", verify=True)
    assert out.support == pytest.approx(2 / 3)
    assert [e.params for e in events if e.mechanism == "reasoner.verify"][-1] == {
        "support": 0.666667, "threshold": 0.5}


def test_lm_error_is_reported_and_raised():
    rec = Recorder()

    def boom(messages):
        raise RuntimeError("down")

    reasoner = Reasoner(HarnessConfig(), CallableLM(boom), EventRelay(rec))
    with pytest.raises(RuntimeError, match="down"):
        reasoner.reason("what is the wifi", _retrieved([_w(0, "wifi")]), "single-session",
                        make_snapshot(""))
    assert rec.events[-2:] == [StageEvent("reasoner.lm", "eligible"),
                               StageEvent("reasoner.lm", "error", reason="RuntimeError: down")]


def test_output_flags_follow_the_query():
    out, _, _ = _reason(["x"], "remember that my office is in Berlin", _retrieved([]), "single-session")
    assert out.explicit_request is True and out.category == "single-session"
    out, _, _ = _reason(["x"], "what is the wifi", _retrieved([]), "single-session")
    assert out.explicit_request is False and out.requires_consolidation is False


def test_verify_reanswer_support_is_rounded_in_events():
    ws = [_w(0, "wifi password blue")]
    full = [_w(5, "router password red")]
    out, events, _ = _reason(["wifi password zebra", "router password zebra"], "what is the wifi",
                             _retrieved(ws, full=full), "single-session", verify=True,
                             grounding_threshold=0.7)
    assert out.support == pytest.approx(2 / 3) and out.support_after == pytest.approx(2 / 3)
    assert [e.params for e in events if e.mechanism == "reasoner.verify"][-1] == {
        "support_before": 0.666667, "support_after": 0.666667}
    assert "verify: support 0.667 < 0.7, re-answered over 1 windows, support 0.667" in out.trace


def test_apply_compares_actions_by_value(tmp_path):
    """A Delta built elsewhere (read back, joined) carries equal, not identical, action strings."""
    mf = MemoryFile(tmp_path / "MEMORY.md")
    append = "".join(["append", "_memory"])
    update = "".join(["update", "_memory"])
    assert append == "append_memory" and update == "update_memory"
    mf.apply(Delta(append, "- a (source: turn 1, 2024-05-01)"))
    assert mf.read() == "# MEMORY\n- a (source: turn 1, 2024-05-01)\n"
    mf.apply(Delta(update, "- b", replaced="- a (source: turn 1, 2024-05-01)"))
    assert mf.read() == "# MEMORY\n- b\n"


def test_verify_above_threshold_keeps_the_answer():
    ws = [_w(0, "wifi password blue"), _w(1, "garden")]
    full = [_w(5, "router password red"), *ws]
    out, events, seen = _reason(["wifi password"], "what is the wifi", _retrieved(ws, full=full),
                                "single-session", verify=True, grounding_threshold=0.5)
    assert len(seen) == 1 and out.completions == 1 and out.answer == "wifi password"
    assert out.support == 1.0 and out.support_after is None
    assert out.prompt_window_ids == ("line:0", "line:1")
    assert [e.stage for e in events if e.mechanism == "reasoner.verify"] == ["eligible", "executed"]


def test_delta_is_a_frozen_value():
    import dataclasses

    d = Delta("append_memory", "- a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.bullet = "- b"  # type: ignore[misc]
    assert {d, Delta("append_memory", "- a")} == {d} and d.replaced is None


def test_integrate_cap_beyond_small_integers():
    ws = [_w(i, f"wifi note{i}") for i in range(300)]
    assert len(integrate("wifi", ws, 257)) == 257
    assert len(integrate("wifi", ws, 299)) == 299
