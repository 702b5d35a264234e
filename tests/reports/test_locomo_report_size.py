"""The LoCoMo campaign's HTML report, drill-down included, stays self-contained and <= 10 MB
(slow: replays both conversations into every built-in system; benchmarks/report_size.py prints the
figures and timings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.drilldown import decode

from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = REPO / "campaigns" / "locomo.toml"
DATA = REPO / ".." / ".." / "shared" / "datasets" / "locomo" / "locomo-dev7.json"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not DATA.exists(), reason="the shared LoCoMo file is not at ../shared/datasets")]


def test_locomo_report_with_every_observation_is_at_most_10_mb(tmp_path):
    store_path = tmp_path / "locomo.sqlite"
    outcome = run_campaign(CAMPAIGN, store_path=store_path, fresh=True)
    store = RunStore(store_path)
    html = write_reports(store, outcome.run_id, tmp_path / "out", formats=("html",))["html"]
    size = html.stat().st_size
    assert size <= 10_000_000, f"{size / 1e6:.2f} MB"
    text = html.read_text(encoding="utf-8")
    payload = re.search(r'id="lsrep-observations">([A-Za-z0-9+/=]+)</script>', text).group(1)
    doc = decode(payload)
    n = store.rows("select count(*) n from observations where run_id = ?", [outcome.run_id])[0]["n"]
    assert len(doc["obs"]) == n > 10_000
    ctx = doc["fields"].index("ctx")  # (start, length) runs of fragment indices: every fragment row is there
    assert sum(sum(o[ctx][1::2]) for o in doc["obs"]) == store.rows(
        "select count(*) n from fragments f join observations o on o.obs_id = f.obs_id where o.run_id = ?",
        [outcome.run_id])[0]["n"]
