"""The metrics record of report.json, headroom, the one test family and checkpoint alignment."""

from __future__ import annotations

import json

import pytest
from lsrep.reports.model import build_report
from lsrep.reports.render import render_json, render_markdown
from lsrep.reports.timeline import CheckpointAxis
from lsrep.reports.tree import Figure, Table

from lsrep.cli import main


@pytest.fixture(scope="module")
def example_doc(example_run):
    store, run_id = example_run
    report = build_report(store, run_id, boot=300)
    return report, json.loads(render_json(report))


def test_conditions_record_has_every_key(example_doc):
    _, doc = example_doc
    assert doc["schema"] == 2 and "report" in doc and doc["report"]["sections"]
    names = [c["name"] for c in doc["conditions"]]
    assert names == ["null", "full-context", "vector-rag"]
    for c in doc["conditions"]:
        assert {"name", "system", "rank", "headline", "answerable", "abstention", "labels"} <= set(c)
        assert set(c["headline"]) >= {"metric", "value", "ci"} and len(c["headline"]["ci"]) == 2
        assert set(c["answerable"]) >= {"n", "correct", "accuracy", "ci"}
        assert set(c["abstention"]) >= {"n", "correct", "accuracy"}
        assert set(c["labels"]) == {"stale", "future", "proven_leak"}
        assert c["calibration"] is False
        # Counts and rates come from the same observations.
        a = c["answerable"]
        assert a["accuracy"] == pytest.approx(a["correct"] / a["n"], abs=1e-6)
        assert a["n"] + c["abstention"]["n"] + c["unjudged"] == c["observations"]
        assert "locomo" not in c  # not a LoCoMo trajectory
    by = {c["name"]: c for c in doc["conditions"]}
    assert by["null"]["rank"] == 3 and by["full-context"]["rank"] < 3 and by["vector-rag"]["rank"] < 3
    assert by["null"]["headline"]["value"] == 0.0 and by["null"]["abstention"]["accuracy"] == 1.0
    assert doc["headline_metric"]["resampling_unit"] == "probe (trajectory, probe_id)"


def test_calibration_block_and_headroom(example_doc):
    report, doc = example_doc
    cal = doc["calibration"]
    assert {"ceiling", "floor", "judge_agreement", "stale_detection", "future_detection"} <= set(cal)
    assert cal["floor"] == 0.0 and cal["ceiling"] >= 0.6
    assert cal["stale_detection"]["rate"] == 1.0 and cal["future_detection"]["rate"] == 1.0
    # Calibration systems appear only in the calibration block, never as conditions.
    assert not {"oracle", "oracle-stale", "oracle-future"} & {c["name"] for c in doc["conditions"]}
    assert all(s["calibration"] for s in cal["systems"].values())
    by = {c["name"]: c for c in doc["conditions"]}
    assert by["null"]["headroom"]["value"] == 0.0
    fc = by["full-context"]
    expected = (fc["headline"]["value"] - cal["systems"]["null"]["headline"]["value"]) / (
        cal["systems"]["oracle"]["headline"]["value"] - cal["systems"]["null"]["headline"]["value"])
    assert fc["headroom"]["value"] == pytest.approx(expected, abs=1e-5)
    md = render_markdown(report)
    assert "Instrument calibration (reference systems, never ranked)" in md and "Headroom position" in md
    assert not any("Low ceiling" in c.title for c in report.banner)


def test_forest_and_table_use_the_same_cluster_aware_test(example_doc):
    report, _ = example_doc
    paired = report.section("paired")
    (table,) = [b for b in paired.blocks if isinstance(b, Table)]
    (forest,) = [b for b in paired.blocks if isinstance(b, Figure)]
    for row, point in zip(table.rows, forest.data["rows"], strict=True):
        assert point["p_holm"] == row["flip_holm"]
        assert point["significant"] == (row["flip_holm"] < 0.05)
        assert "sign-flip" in row["flip_method"]
    assert "McNemar" not in forest.caption
    assert any("probe (trajectory, probe_id)" in c.note for c in table.columns if c.key == "flip")


def test_checkpoints_of_different_lengths_are_aligned_by_position():
    axis = CheckpointAxis(True, 4, {"short": 4, "long": 8})
    assert [axis.x({"trajectory": "short", "checkpoint": i}) for i in range(4)] == [0, 1, 2, 3]
    assert [axis.x({"trajectory": "long", "checkpoint": i}) for i in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    same = CheckpointAxis(False, 6, {"a": 6})
    assert same.x({"trajectory": "a", "checkpoint": 5}) == 5


def test_over_time_is_answerable_only(example_doc):
    report, doc = example_doc
    (table,) = [b for b in report.section("over-time").blocks if isinstance(b, Table)]
    null_cells = [r["c:null"] for r in table.rows if r["c:null"] is not None]
    assert null_cells and all(c.value == 0.0 for c in null_cells)


def test_report_json_cli(example_run, tmp_path):
    store, run_id = example_run
    out = tmp_path / "r.json"
    assert main(["report", run_id, "--store", str(store.path), "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [c["rank"] for c in doc["conditions"]][0] == 3


def test_checkpoint_axis_aligns_only_when_lengths_differ():
    from types import SimpleNamespace

    from lsrep.reports.timeline import checkpoint_axis

    def ctx(lengths):
        units = [{"unit_id": f"u{t}", "trajectory": t} for t in lengths]
        cps = [{"unit_id": f"u{t}", "ordinal": i} for t, n in lengths.items() for i in range(n)]
        return SimpleNamespace(data=SimpleNamespace(units=units, checkpoints=cps, observations=[]))

    same = checkpoint_axis(ctx({"a": 5, "b": 5}))
    assert not same.aligned and same.x({"trajectory": "b", "checkpoint": 4}) == 4
    differ = checkpoint_axis(ctx({"a": 4, "b": 12}))
    assert differ.aligned and differ.bins == 4
    # The last checkpoint of each trajectory lands in the last bin, whatever its length.
    assert differ.x({"trajectory": "a", "checkpoint": 3}) == differ.x({"trajectory": "b", "checkpoint": 11}) == 3
    assert "never pooled" in differ.note
