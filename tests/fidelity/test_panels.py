"""Diagnostics panels: each built-in system's panel renders, in headless Chromium too, and its
figures are recomputed from the stored events (change the events, the figure follows)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lsrep.reports import panels
from lsrep.reports.build import write_reports
from lsrep.reports.model import build_report
from lsrep.reports.tree import Table

from lsrep.store import RunStore

from .test_fidelity_cli import REPO, write_campaign

CHROMIUM = Path("/usr/bin/chromium")
SYSTEMS = '''
[[conditions]]
name = "thalia"
system = "thalia"

[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "exia-seed"
system = "exia-seed"
options = { phase = 2, fix_phase2_ceiling = true }

[[conditions]]
name = "planted"
system = "tests.fidelity.planted:PlantedAdapter"
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    campaign = write_campaign(tmp_path_factory.mktemp("panels") / "c", SYSTEMS)
    res = subprocess.run([sys.executable, "-m", "lsrep.cli", "run", str(campaign), "--quiet", "--executor",
                          "in-process"], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    store = RunStore(campaign.parent / "runs.sqlite")
    return store, store.latest_run()


def tables(report) -> dict[str, Table]:
    return {b.caption: b for b in report.section("fidelity").blocks if isinstance(b, Table)}


def test_every_builtin_system_gets_its_panels(run):
    store, run_id = run
    got = tables(build_report(store, run_id, boot=50))
    for caption in ("THALIA (thalia): where evidence is lost", "THALIA (thalia): candidate funnel", "THALIA (thalia): citations and integrate",
                    "THALIA (thalia): Inspector triggers", "THALIA (thalia): Memory Gate and MEMORY.md bullets",
                    "ICE (ice): memory budget", "ICE (ice): per-leg yield", "ICE (ice): workers on the simulated clock",
                    "EXIA SEED (exia-seed): recall latency", "EXIA SEED (exia-seed): admission and forget decisions",
                    "EXIA SEED (exia-seed): seed defects E-1…E-21",
                    "Diagnostics: stage counts per mechanism over checkpoints"):
        assert caption in got and got[caption].rows, caption
    defects = {r["defect"]: r["state"] for r in got["EXIA SEED (exia-seed): seed defects E-1…E-21"].rows}
    assert defects["E-3 phase-2 additions bypass the recall ceiling"] == "repaired (fix on)"
    assert defects["E-13 busy consolidation does not queue"] == "reproduced (seed)"


def test_panel_figures_trace_back_to_stored_events(run, tmp_path):
    store, run_id = run
    legs = {r["leg"]: r for r in tables(build_report(store, run_id, boot=50))["ICE (ice): per-leg yield"].rows}
    ice_units = [u["unit_id"] for u in store.rows("select unit_id from units where run_id = ? and condition = 'ice'",
                                                  [run_id])]
    marks = ",".join("?" * len(ice_units))
    for leg, row in legs.items():
        (n,) = store.rows(f"select count(*) n from events where run_id = ? and mechanism = ? and stage = 'in_prompt' "
                          f"and unit_id in ({marks})", [run_id, leg, *ice_units])
        assert row["in_prompt"] == n["n"], leg
    assert legs["ice.leg.episodic_vector"]["in_prompt"] > 0
    # THALIA's Inspector recall, recomputed by hand from the rows of one checkpoint.
    recall = tables(build_report(store, run_id, boot=50))["THALIA (thalia): where evidence is lost"].rows[-1]
    obs = store.rows("select unit_id, checkpoint, probe_id, evidence_ids from observations where run_id = ? and "
                     "condition = 'thalia' and checkpoint = ?", [run_id, recall["checkpoint"]])
    hits = n = 0
    for o in obs:
        evidence = set(json.loads(o["evidence_ids"]))
        if not evidence:
            continue
        n += 1
        seen = set()
        for e in store.rows("select source_turn_ids from events where run_id = ? and unit_id = ? and checkpoint = ? "
                            "and probe_id = ? and stage in ('output', 'selected') and mechanism in "
                            "('thalia.inspector.grep', 'thalia.inspector.fallback_order', "
                            "'thalia.inspector.fallback_overlap', 'thalia.recall.fts')",
                            [run_id, o["unit_id"], o["checkpoint"], o["probe_id"]]):
            seen.update(json.loads(e["source_turn_ids"]))
        hits += bool(evidence & seen)
    assert recall["probes"] == n and recall["inspector"] == pytest.approx(hits / n)
    # THALIA's cited share and integrate counts, recomputed from the stored funnels.
    funnel_rows = tables(build_report(store, run_id, boot=50))["THALIA (thalia): citations and integrate"].rows
    thalia_units = [u["unit_id"] for u in store.rows(
        "select unit_id from units where run_id = ? and condition = 'thalia'", [run_id])]
    for row in funnel_rows:
        told = [json.loads(e["params"])["funnel"] for e in store.rows(
            f"select params from events where run_id = ? and mechanism = 'thalia.reasoner.citations' and stage = "
            f"'selected' and checkpoint = ? and unit_id in ({','.join('?' * len(thalia_units))})",
            [run_id, row["checkpoint"], *thalia_units])]
        assert told and all("prompt" in f for f in told)
        assert row["prompt_windows"] == sum(f["prompt"] for f in told) and row["cited_windows"] == sum(
            f["cited"] for f in told)
        assert row["cited_share"] == pytest.approx(sum(f["cited"] for f in told) / sum(f["prompt"] for f in told))
        assert row["dropped"] == sum(f["inline"] - f["prompt"] for f in told)
        assert row["narrowed"] == sum(f["prompt"] < f["inline"] for f in told)
    # Remove the stored in-prompt events of one leg: the figure follows the store, not the system.
    store.db.execute(f"delete from events where run_id = ? and mechanism = 'ice.leg.episodic_vector' and "
                     f"stage = 'in_prompt' and unit_id in ({marks})", [run_id, *ice_units])
    store.db.conn.commit()
    legs = {r["leg"]: r for r in tables(build_report(store, run_id, boot=50))["ICE (ice): per-leg yield"].rows}
    assert legs["ice.leg.episodic_vector"]["in_prompt"] == 0


def test_thalia_bullets_figures_are_the_stored_rows(run):
    """The Memory Gate table: consolidations from the stored events, the bullets' token share
    from the stored memory fragments against the observations' context tokens."""
    store, run_id = run
    (row,) = tables(build_report(store, run_id, boot=50))["THALIA (thalia): Memory Gate and MEMORY.md bullets"].rows
    (done,) = store.rows("select count(*) n from events where run_id = ? and unit_id like 'thalia/%' and "
                         "mechanism = 'thalia.gate.consolidate' and stage = 'executed'", [run_id])
    (tok,) = store.rows("select sum(f.tokens) t, count(distinct o.obs_id) n from fragments f join observations o "
                        "on o.obs_id = f.obs_id where o.run_id = ? and o.condition = 'thalia' and f.kind = 'memory'",
                        [run_id])
    (ctx,) = store.rows("select sum(context_tokens) t from observations where run_id = ? and condition = 'thalia'",
                        [run_id])
    assert done["n"] >= 1 and row["appended"] + row["updated"] == done["n"]
    assert tok["t"] > 0 and row["with_bullets"] == tok["n"]
    assert row["share_all"] == pytest.approx(tok["t"] / ctx["t"])
    assert row["bullet_tokens"] == pytest.approx(tok["t"] / tok["n"])


def test_a_third_party_adapter_adds_its_own_panel(run):
    store, run_id = run
    system = "tests.fidelity.planted:PlantedAdapter"

    def panel(view: panels.PanelView):
        n = len(view.of("planted.hollow", "executed"))
        return (Table((), ({"x": n},), caption=f"Planted ({view.condition}): {n} hollow runs"),)

    panels.register_panel(system, panel)
    try:
        got = tables(build_report(store, run_id, boot=50))
    finally:
        panels._REGISTERED.pop(system)
    (caption,) = [c for c in got if c.startswith("Planted (planted)")]
    (n,) = store.rows("select count(*) n from events where run_id = ? and mechanism = 'planted.hollow' and "
                      "stage = 'executed'", [run_id])
    assert caption == f"Planted (planted): {n['n']} hollow runs" and n["n"] > 0


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium not installed at /usr/bin/chromium")
def test_panels_render_in_chromium(run, tmp_path):
    store, run_id = run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'p'}",
           "--dump-dom", html.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for caption in ("THALIA (thalia): where evidence is lost", "ICE (ice): per-leg yield",
                    "EXIA SEED (exia-seed): recall latency", "Diagnostics: stage counts per mechanism"):
        assert caption in dom, caption
    section = dom[dom.index('id="fidelity"'):]
    assert re.search(r"ice\.leg\.episodic_vector</code>", section)
