"""The report: every section from the example run, self-contained and escaped HTML, the
synthetic run's ablation, judges and failures, and the CLI."""

from __future__ import annotations

import json
import re

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.model import SECTION_IDS, build_report
from lsrep.reports.render import render_html, render_json, render_markdown, script_hash
from lsrep.reports.tree import Callout, Figure, Table

from lsrep.cli import main
from lsrep.errors import LsrepError
from tests.reports.conftest import PLANTED
from tests.reports.synthetic import RUN_ID


@pytest.fixture(scope="module")
def example_outputs(example_run, tmp_path_factory):
    store, run_id = example_run
    out = tmp_path_factory.mktemp("report")
    paths = write_reports(store, run_id, out)
    return {fmt: path.read_text(encoding="utf-8") for fmt, path in paths.items()}


def tables(section) -> list[Table]:
    return [b for b in section.blocks if isinstance(b, Table)]


def test_example_report_has_every_section(example_run):
    store, run_id = example_run
    report = build_report(store, run_id)
    assert tuple(s.id for s in report.sections) == SECTION_IDS
    assert all(s.blocks for s in report.sections)
    assert report.conditions == ("null", "full-context", "vector-rag")
    headline = tables(report.section("headline"))[0]
    # The headline reads as the ranking: best headline first (campaign order among equals).
    assert [r["condition"] for r in headline.rows] == ["full-context", "vector-rag", "null"]
    assert [r["rank"] for r in headline.rows] == [1, 1, 3]
    for row in headline.rows:
        acc = row["accuracy"]
        assert acc.n == 63 and acc.clusters == row["probes"]
        assert "probe" in acc.unit and acc.interval[0] <= acc.value <= acc.interval[1]
        assert row["wilson"].method == "Wilson score interval"
    # No declared comparisons: all three pairs, Holm-corrected.
    paired = tables(report.section("paired"))[0]
    assert len(paired.rows) == 3
    assert all(r["flip_holm"] >= r["flip_p"] for r in paired.rows)
    assert all("mcnemar" not in r for r in paired.rows)
    figures = {b.kind for s in report.sections for b in s.blocks if isinstance(b, Figure)}
    assert {"over_time", "outcome_mix", "forest", "cost"} <= figures
    fidelity = tables(report.section("fidelity"))[0]
    statuses = {(r["condition"], r["mechanism"]): r["status"] for r in fidelity.rows}
    assert statuses[("vector-rag", "vrag.retrieve")] == "reached_prompt"
    assert statuses[("full-context", "fullctx.truncate")] == "never_eligible"
    assert any("offline, deterministic" in c.title for c in report.banner)


def test_every_interval_names_its_resampling_unit(example_outputs):
    html = example_outputs["html"]
    assert html.count("resampling unit = probe (trajectory, probe_id)") >= 5
    doc = json.loads(example_outputs["json"])
    estimates = []

    def walk(node):
        if isinstance(node, dict):
            if {"value", "interval", "unit", "n", "clusters", "method"} <= node.keys():
                estimates.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    assert len(estimates) > 30
    assert all(e["unit"] for e in estimates)


def test_html_is_self_contained(example_outputs):
    html = example_outputs["html"]
    refs = re.findall(r"""(?:src|href|action|poster|data)\s*=\s*["']?([^"'\s>]+)""", html, flags=re.I)
    assert refs, "expected internal anchors"
    assert all(r.startswith("#") for r in refs), [r for r in refs if not r.startswith("#")]
    assert not re.search(r"url\(\s*['\"]?(?!#)", html)
    assert "@import" not in html
    assert "http://" not in html and "https://" not in html
    assert "<svg" in html
    # The only scripts: the drill-down's data block and the one inline script the CSP pins by hash.
    assert re.findall(r"<script[^>]*>", html, flags=re.I) == [
        '<script type="application/json" id="lsrep-observations">', "<script>"]
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    assert "default-src 'none'" in csp and "connect-src" not in csp
    (inline,) = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert f"script-src {script_hash(inline)}" in csp
    for section_id in SECTION_IDS:
        assert f'id="{section_id}"' in html


def test_planted_script_is_escaped_everywhere(example_outputs):
    html, md = example_outputs["html"], example_outputs["md"]
    assert PLANTED not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html
    assert PLANTED not in md and "<script" not in md and "&lt;script" in md


def test_markdown_and_json_cover_every_section(example_outputs):
    md = example_outputs["md"]
    doc = json.loads(example_outputs["json"])
    tree = doc["report"]
    assert [s["id"] for s in tree["sections"]] == list(SECTION_IDS)
    for section in tree["sections"]:
        assert f'<a id="{section["id"]}"></a>' in md
    assert tree["meta"]["resampling_unit"] == "probe (trajectory, probe_id)"


def test_report_is_deterministic(example_run):
    store, run_id = example_run
    first = build_report(store, run_id, boot=300)
    again = build_report(store, run_id, boot=300)
    assert render_json(first) == render_json(again)
    assert render_html(first) == render_html(again)


def test_synthetic_run_ablation_judges_and_failures(synthetic_store):
    report = build_report(synthetic_store, RUN_ID, boot=400)
    fidelity = {(r["condition"], r["mechanism"]): r for r in tables(report.section("fidelity"))[0].rows}
    graph = fidelity[("toy", "toy.graph")]
    assert graph["verdict"] == "contributing"
    (contrast,) = tables(report.section("fidelity"))[1].rows
    assert (contrast["mechanism"], contrast["ablation"]) == ("toy.graph", "toy-no-graph")
    assert contrast["effect"].value > 0 and contrast["flip"] < 0.05 and contrast["verdict"] == "contributing"
    assert fidelity[("toy", "toy.broken")]["verdict"] == "defective"
    assert fidelity[("toy", "toy.idle")]["verdict"] == "never_exercised"
    assert fidelity[("toy-no-graph", "toy.graph")]["status"] == "disabled"
    assert fidelity[("toy-no-graph", "toy.graph")]["verdict"] == "disabled"
    assert fidelity[("toy", "toy.lex")]["verdict"] == "exercised"
    integrity = {r["condition"]: r for r in tables(report.section("fidelity"))[2].rows}
    assert integrity["toy-no-graph"]["unattributed_fragments"] == 48
    assert integrity["toy"]["leak_observations"] == 1
    assert integrity["all conditions"]["observations"] == 96
    assert any(isinstance(b, Callout) and b.tone == "danger" for b in report.section("fidelity").blocks)

    paired = tables(report.section("paired"))[0]
    assert [r["comparison"] for r in paired.rows] == ["toy − toy-no-graph"]  # the declared family
    assert "nos" not in paired.rows[0]  # the deterministic judge gives no rubric

    judges = tables(report.section("judges"))
    assert len(judges) == 2
    agreement = {r["label"]: r for r in judges[1].rows}
    assert agreement["credited correct"]["n"] == 2 * 16 * 3 - 2  # one failed model label per condition
    assert 0 < agreement["credited correct"]["kappa"] < 1
    failures = tables(report.section("failures"))
    assert failures[0].rows and failures[1].rows[0]["n"] == 1
    assert tables(report.section("consolidation"))[1].rows  # maintenance-step events

    html = render_html(report)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html and "<i>A</i>" not in html
    assert "not a language model" not in html  # this answerer is a model
    render_markdown(report)


def test_model_judge_rubric_gives_net_ordinal_superiority(synthetic_store):
    report = build_report(synthetic_store, RUN_ID, judge="evolving", boot=300)
    row = tables(report.section("paired"))[0].rows[0]
    assert row["nos"].value > 0 and "net ordinal superiority" in row["nos"].method
    details = tables(report.section("outcome-mix"))[0]  # the unranked scores, beside the mix
    assert any(c.key == "rubric" for c in details.columns)
    assert "unjudged" in details.rows[0]["mix"] or "unjudged" in details.rows[1]["mix"]


def test_unknown_judge_and_condition_are_clear_errors(synthetic_store):
    with pytest.raises(LsrepError, match="judge 'nope' has no judgements"):
        build_report(synthetic_store, RUN_ID, judge="nope")
    with pytest.raises(LsrepError, match="unknown condition"):
        build_report(synthetic_store, RUN_ID, compare=[("toy", "ghost")])


def test_cli_report(synthetic_store, tmp_path, capsys):
    store = str(synthetic_store.path)
    assert main(["report", "latest", "--store", store, "-o", str(tmp_path / "all"), "--format", "all"]) == 0
    assert {p.name for p in (tmp_path / "all").iterdir()} == {"report.html", "report.md", "report.json"}
    assert main(["report", RUN_ID[:12], "--store", store, "-o", str(tmp_path / "r.md"), "--format", "md",
                 "--compare", "toy-no-graph:toy", "--judge", "evolving"]) == 0
    assert "toy-no-graph − toy" in (tmp_path / "r.md").read_text()
    assert main(["report", "latest", "--store", store, "-o", str(tmp_path / "x.html"),
                 "--compare", "toy:ghost"]) == 2
    assert "unknown condition 'ghost'" in capsys.readouterr().err
    assert main(["report", "latest", "--store", str(tmp_path / "missing.sqlite"), "-o", str(tmp_path / "y")]) == 2
