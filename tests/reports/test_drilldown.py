"""The drill-down's data: every observation of the run, with its fragments, cited turns, reference
versions, labels, judges' reasons and integrity flags exactly as the store has them, compressed into a
block that cannot close itself, deterministic, and absent from report.json and the Markdown report."""

from __future__ import annotations

import json
import re

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.drilldown import ALARMS, FRAGMENT_FLAGS, RULES, _runs, decode
from lsrep.reports.model import build_report

from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.integrity.test_zoo import zoo_campaign
from tests.reports.conftest import PLANTED


def unpack(doc: dict) -> list[dict]:
    """The document's observations as dicts, strings resolved, contexts expanded."""
    s = doc["s"]
    text = lambda i: None if i is None else s[i]  # noqa: E731
    out = []
    for row in doc["obs"]:
        o = dict(zip(doc["fields"], row, strict=True))
        traj, probe_id, kind, category, question = map(text, doc["probes"][o["probe"]])
        ranks = [start + k for start, n in zip(o["ctx"][::2], o["ctx"][1::2], strict=True) for k in range(n)]
        frags = []
        for i in ranks:
            f_text, cited, f_kind, mechs, score, flags, leak_turn, match_turn = doc["frags"][i]
            frags.append({"text": text(f_text), "cited": [text(c) for c in cited], "kind": text(f_kind),
                          "mechanisms": [text(m) for m in mechs], "score": score,
                          "flags": {n for b, n in enumerate(doc["frag_flags"]) if flags & (1 << b)},
                          "leak_turn_id": text(leak_turn), "match_turn_id": text(match_turn)})
        out.append({**o, "obs_id": text(o["id"]), "condition": doc["conditions"][o["cond"]], "trajectory": traj,
                    "probe_id": probe_id, "kind": kind, "category": category, "question": question,
                    "answer": text(o["answer"]), "expected": text(o["expected"]), "outcome": text(o["outcome"]),
                    "evidence": [text(t) for t in o["evidence"]], "fragments": frags,
                    "judges": [[text(j[0]), text(j[1]), j[2], j[3], text(j[4]), text(j[5]), text(j[6])]
                               for j in doc["judges"].get(str(len(out)), [])]})
    return out


@pytest.fixture(scope="module")
def example_html(example_run, tmp_path_factory):
    store, run_id = example_run
    paths = write_reports(store, run_id, tmp_path_factory.mktemp("dd"))
    return {fmt: p.read_text(encoding="utf-8") for fmt, p in paths.items()}


def block_of(html: str) -> str:
    return re.search(r'<script type="application/json" id="lsrep-observations">(.*?)</script>', html,
                     flags=re.S).group(1)


def test_runs_encode_consecutive_indices():
    assert _runs([]) == []
    assert _runs([3, 4, 5, 9]) == [3, 3, 9, 1]
    assert _runs([5, 4, 4]) == [5, 1, 4, 1, 4, 1]


def test_every_observation_is_in_the_block_as_the_store_has_it(example_run, example_html):
    store, run_id = example_run
    payload = block_of(example_html["html"])
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", payload)  # nothing in it can end the block or form markup
    doc = decode(payload)
    got = {o["obs_id"]: o for o in unpack(doc)}
    rows = store.rows("select o.*, j.outcome as label from observations o left join judgements j "
                      "on j.obs_id = o.obs_id and j.judge = 'deterministic' where o.run_id = ?", [run_id])
    assert len(got) == len(rows) == len(doc["obs"])
    for r in rows:
        o = got[r["obs_id"]]
        assert (o["condition"], o["trajectory"], o["probe_id"], o["cp"]) == (
            r["condition"], r["trajectory"], r["probe_id"], r["checkpoint"])
        assert (o["question"], o["answer"], o["expected"], o["outcome"]) == (
            r["question"], r["answer"], r["expected"], r["label"])
        assert o["evidence"] == json.loads(r["evidence_ids"])
        frags = store.fragment_rows(r["obs_id"])
        assert [f["text"] for f in o["fragments"]] == [f["text"] for f in frags]
        assert [f["cited"] for f in o["fragments"]] == [json.loads(f["source_turn_ids"]) for f in frags]
        assert [f["kind"] for f in o["fragments"]] == [f["kind"] for f in frags]
        (det,) = [j for j in o["judges"] if j[0] == "deterministic"]
        assert det[1] == r["label"] and det[5] == RULES[r["label"]]
    # Cited turns resolve to their text, the planted script included (rendered as text by the page).
    turns = {doc["s"][t[0]]: doc["s"][t[5]] for t in doc["turns"]["maya-journal"]}
    assert PLANTED in turns["t0001"]
    assert any("t0001" in f["cited"] for o in got.values() for f in o["fragments"])


def test_the_drilldown_stays_out_of_json_and_markdown(example_html):
    doc = json.loads(example_html["json"])
    assert "drilldown" not in doc and "drilldown" not in doc["report"]
    assert "lsrep-observations" not in example_html["md"]
    assert len(example_html["json"]) < len(example_html["html"])


def test_integrity_flags_reach_the_drilldown(tmp_path):
    from tests.integrity.test_zoo import CASES

    cases = {k: CASES[k] for k in ("future-read", "unsourced", "misattributed")}
    outcome = run_campaign(zoo_campaign(tmp_path, cases, repetitions=1))
    store = RunStore(outcome.store_path)
    report = build_report(store, outcome.run_id, boot=200)
    assert callable(report.drilldown)  # built only when HTML is rendered: JSON and Markdown never pay
    doc = decode(report.drilldown().payload)
    obs = unpack(doc)
    alarms = {c: set() for c in ("honest", *cases)}
    frag_flags = {c: set() for c in alarms}
    for o in obs:
        alarms[o["condition"]] |= {k for k in o["flags"] if k in ALARMS}
        for f in o["fragments"]:
            frag_flags[o["condition"]] |= f["flags"]
    assert alarms["honest"] == set() and frag_flags["honest"] == set()
    assert "proven_leak" in alarms["future-read"] and "content_leak" in frag_flags["future-read"]
    assert "unsourced" in alarms["unsourced"] and "unsourced" in frag_flags["unsourced"]
    assert "misattributed" in alarms["misattributed"] and "misattributed" in frag_flags["misattributed"]
    # A misattributed fragment names the turn its text does match.
    mis = [f for o in obs for f in o["fragments"] if "misattributed" in f["flags"]]
    assert mis and all(f["match_turn_id"] and f["match_turn_id"] not in f["cited"] for f in mis)
    # Per observation the counts are the store's.
    row = store.rows("select obs_id, content_leaks from observations where run_id = ? and content_leaks > 0 "
                     "order by obs_id limit 1", [outcome.run_id])[0]
    (o,) = [o for o in obs if o["obs_id"] == row["obs_id"]]
    assert o["flags"]["content_leaks"] == row["content_leaks"]
    assert set(FRAGMENT_FLAGS) >= {"leak", "content_leak", "unsourced", "misattributed"}
