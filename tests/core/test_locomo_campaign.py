"""LoCoMo through every registered system, from the CLI, with per-category results over checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsrep.probes.locomo import build_locomo
from lsrep.probes.native import write_probes, write_trajectory
from lsrep.reports.model import build_report

from lsrep.cli import main
from lsrep.registry import ADAPTERS
from lsrep.store import RunStore
from tests.thirdparty.harness import wraps_library


def _first_sessions(shared: Path, out: Path, sessions: int) -> tuple[Path, Path]:
    """conv-26 cut to its first sessions (the probes that live inside them), as native files."""
    (conv,) = build_locomo(shared / "datasets" / "locomo" / "locomo-dev7.json", ["conv-26"])
    keep = []
    for turn in conv.turns:
        if turn.session_id not in {t.session_id for t in keep} and len({t.session_id for t in keep}) == sessions:
            break
        keep.append(turn)
    ids = {t.turn_id for t in keep}
    probes = [p for p in conv.probes if set(p.named_turn_ids()) <= ids]
    return write_trajectory(out / "conv.jsonl", keep), write_probes(out / "probes.jsonl", probes)


def test_locomo_campaign_runs_every_system(shared, tmp_path, repo, capsys):
    trajectory, probes = _first_sessions(shared, tmp_path, sessions=4)
    systems = [name for name in ADAPTERS.entries() if not name.startswith("keyword") and not wraps_library(name)]
    conditions = "\n".join(f'[[conditions]]\nname = "{s}"\nsystem = "{s}"\n' for s in systems)
    campaign = tmp_path / "locomo.toml"
    campaign.write_text(f'''name = "locomo-cut"
store = "store.sqlite"
schedule = "{repo / 'schedules' / 'nightly.toml'}"
[[trajectories]]
id = "conv-26"
trajectory = "{trajectory}"
probes = "{probes}"
{conditions}''')
    assert main(["run", str(campaign), "--quiet"]) == 0
    store = RunStore(tmp_path / "store.sqlite")
    run_id = store.latest_run()
    units = store.rows("select condition, status from units where run_id = ?", [run_id])
    assert {u["condition"] for u in units} == set(systems) and {u["status"] for u in units} == {"finished"}
    assert store.rows("select count(*) n from observations where run_id = ? and status = 'error'",
                      [run_id])[0]["n"] == 0
    assert store.rows("select sum(proven_leak) n from observations where run_id = ?", [run_id])[0]["n"] == 0
    cats = next(s for s in build_report(store, run_id).sections if s.id == "categories")
    table = next(b for b in cats.blocks if getattr(b, "caption", "") == "Accuracy by category over checkpoints")
    assert {r["condition"] for r in table.rows} == set(systems)
    assert {r["category"] for r in table.rows} >= {"single-hop", "multi-hop", "temporal", "adversarial"}
    assert [c.key for c in table.columns][2:] == ["cp0", "cp1", "cp2", "cp3"]
    json.dumps([dict(r) for r in table.rows], default=str)
    # The headline cannot be won by abstaining: null ranks last, full-context and ice above it.
    from lsrep.reports.render import render_json

    doc = json.loads(render_json(build_report(store, run_id, boot=200)))
    ranks = {c["name"]: c["rank"] for c in doc["conditions"]}
    assert ranks["null"] == max(ranks.values())
    assert ranks["full-context"] < ranks["null"] and ranks["ice"] < ranks["null"]
    by_name = {c["name"]: c for c in doc["conditions"]}
    assert by_name["null"]["answerable"]["accuracy"] == 0.0 and by_name["null"]["abstention"]["accuracy"] == 1.0
    # The converted conversation is recognised as LoCoMo: the official metric sits beside the labels.
    loc = by_name["ice"]["locomo"]
    assert {"f1", "per_category", "evidence_recall"} <= set(loc)
    assert {"single-hop", "multi-hop", "temporal", "adversarial"} <= set(loc["per_category"])
    assert by_name["null"]["locomo"]["evidence_recall"] == 0.0
    capsys.readouterr()
    assert main(["locomo-f1", run_id, "--store", str(tmp_path / "store.sqlite")]) == 0
    printed = capsys.readouterr().out
    assert "official" in printed and "multi-hop" in printed and "ev.recall" in printed
    ice_line = next(line for line in printed.splitlines() if line.startswith("ice "))
    assert float(ice_line.split()[2]) == pytest.approx(loc["f1"], abs=5e-4)
