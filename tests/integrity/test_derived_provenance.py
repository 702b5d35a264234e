"""Derived memories: citing more turns cannot raise evidence recall; citation precision shows the over-citing."""

from __future__ import annotations

import json

from lsrep.reports.model import build_report
from lsrep.reports.render import render_markdown

from lsrep.executors.local import InProcessExecutor
from lsrep.integrity import evidence_records
from lsrep.runner import run_campaign
from lsrep.store import RunStore

HERE = "tests.integrity.derived_adapters"


def _run(example):
    text = example.read_text()
    head, _, rest = text.partition("[[conditions]]")
    tail = "[answerer]" + rest.split("[answerer]", 1)[1]
    conds = {"per-turn": "FactsPerTurn", "per-session": "FactsPerSession"}
    example.write_text(head + "".join(f'[[conditions]]\nname = "{n}"\nsystem = "{HERE}:{c}"\n\n'
                                      for n, c in conds.items()) + tail)
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    return RunStore(out.store_path), out.run_id


def _mean(store, run_id, cond, column):
    rows = [r[column] for r in store.rows(f"select {column} from observations where run_id = ? and condition = ? "
                                          f"and {column} is not null", [run_id, cond])]
    return sum(rows) / len(rows), len(rows)


def test_over_citing_the_same_memories_does_not_raise_evidence_recall(example):
    store, run_id = _run(example)
    honest, n = _mean(store, run_id, "per-turn", "evidence_recall")
    over, n_over = _mean(store, run_id, "per-session", "evidence_recall")
    assert n == n_over > 0
    assert 0 < honest and over <= honest, (honest, over)
    # The same texts: the same content recall.
    assert _mean(store, run_id, "per-turn", "content_recall") == _mean(store, run_id, "per-session", "content_recall")
    ev = evidence_records(store, run_id)
    assert ev["per-session"]["citation_precision"] < ev["per-turn"]["citation_precision"]
    assert ev["per-turn"]["citation_precision"] > 0.9
    assert ev["per-session"]["citation_precision"] < 0.6


def test_derived_fragments_are_recorded_with_the_turns_they_carry(example):
    store, run_id = _run(example)
    rows = store.rows("select f.derived, f.source_turn_ids, f.carried_turn_ids, f.unsourced from fragments f "
                      "join observations o on o.obs_id = f.obs_id where o.run_id = ? and o.condition = 'per-session'",
                      [run_id])
    assert rows and all(r["derived"] == 1 and r["unsourced"] == 0 for r in rows)
    assert all(set(json.loads(r["carried_turn_ids"])) <= set(json.loads(r["source_turn_ids"])) for r in rows)
    assert any(len(json.loads(r["carried_turn_ids"])) < len(json.loads(r["source_turn_ids"])) for r in rows)


def test_the_report_shows_citation_precision(example):
    store, run_id = _run(example)
    report = build_report(store, run_id)
    assert "Citation precision" in render_markdown(report)
    from lsrep.reports.build import write_report

    path = write_report(report, "json", example.parent / "r.json")
    data = json.loads(path.read_text())
    text = json.dumps(data)
    assert '"citation_precision"' in text


def test_declared_nondeterminism_is_counted_but_not_alarmed(tmp_path):
    from lsrep.reports.render import render_markdown as md

    from tests.integrity.test_zoo import zoo_campaign

    cases = {"noisy": ("NondeterministicAdapter", ""), "declared": ("DeclaredNondeterministicAdapter", "")}
    out = run_campaign(zoo_campaign(tmp_path, cases, budget=None, repetitions=2), executor=InProcessExecutor())
    store = RunStore(out.store_path)
    report = build_report(store, out.run_id)
    alarms = [c for c in report.banner if "integrity alarm" in c.title] + [
        b for s in report.sections for b in s.blocks if getattr(b, "title", "").endswith("from the campaign checks")]
    text = " ".join(getattr(b, "text", "") for b in alarms)
    assert "noisy: " in text and "declared: " not in text
    assert "Declared nondeterministic (counted, expected to differ): declared." in md(report)
