"""The report shows rater agreement, judges against people, and which numbers rest on human labels."""

from __future__ import annotations

import json

from lsrep.reports.build import write_reports
from lsrep.reports.model import build_report

from lsrep.rating import export_adjudication, import_adjudication, import_ratings

from .raters import write_ratings
from .test_rating import RESOLVED, rated  # noqa: F401 - the fixture is shared


def test_report_after_round_trip(rated, tmp_path):  # noqa: F811 - pytest injects the imported fixture
    store, run_id, files, key, items, a, b = rated
    import_ratings(store, run_id, [a, b])
    adj = export_adjudication(store, run_id, None, tmp_path / "adj")
    resolution = write_ratings(tmp_path / "judith.json", adj.packet_id, "judith", [items[i] for i in RESOLVED],
                               [v[0] for v in RESOLVED.values()], [v[1] for v in RESOLVED.values()])
    import_adjudication(store, run_id, resolution)

    report = build_report(store, run_id)
    banner = " ".join(c.title + " " + c.text for c in report.banner)
    assert "rest on human labels" in banner and "10 of 189 from `human`" in banner
    judges = next(s for s in report.sections if s.id == "judges")
    captions = [getattr(b, "caption", "") for b in judges.blocks]
    assert "Agreement between human raters" in captions
    assert "Automatic judges against the adjudicated human labels" in captions
    human_vs = next(b for b in judges.blocks if getattr(b, "caption", "") ==
                    "Automatic judges against the adjudicated human labels")
    overall = next(r for r in human_vs.rows if r["judge"] == "deterministic" and r["label"] == "all labels")
    assert overall["n"] == 10
    paths = write_reports(store, run_id, tmp_path / "report")
    data = json.loads(paths["json"].read_text())
    assert any(s["id"] == "judges" for s in data["report"]["sections"])
    assert "Agreement between human raters" in paths["html"].read_text()
