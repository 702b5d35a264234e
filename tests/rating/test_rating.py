"""Rating packets, ratings, adjudication and agreement on the bundled example."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lsrep.errors import InputError, LsrepError
from lsrep.rating import (
    agreement_report,
    allocate,
    export_adjudication,
    export_packets,
    headline_judge,
    import_adjudication,
    import_ratings,
    packet_key,
    rating_section,
)
from lsrep.references import Expected

from .raters import (
    DISAGREE,
    LABELS_A,
    LABELS_B,
    RESOLVED,
    RUBRIC_A,
    RUBRIC_B,
    assert_blind,
    identifiers,
    ordered_items,
    write_ratings,
)


def kappa_by_hand(a: list[str], b: list[str]) -> float:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    chance = sum(ca[k] * cb[k] for k in set(a) | set(b)) / n**2
    return float("nan") if chance == 1 else (observed - chance) / (1 - chance)



@pytest.fixture
def rated(store_copy, tmp_path):
    """A 10-item packet rated by two raters (files written, not yet imported)."""
    store, run_id = store_copy
    files = export_packets(store, run_id, sample=10, seed=11, out_dir=tmp_path / "packet")
    key = packet_key(store, run_id, files.packet_id)
    items = ordered_items(key)
    a = write_ratings(tmp_path / "ana.json", files.packet_id, "ana", items, LABELS_A, RUBRIC_A,
                  ["", "", "<script>alert(1)</script>"] + [""] * 7)
    b = write_ratings(tmp_path / "ben.json", files.packet_id, "ben", items, LABELS_B, RUBRIC_B)
    return store, run_id, files, key, items, a, b


# -- sampling ---------------------------------------------------------------------------------
def test_allocation_is_proportional_with_one_per_stratum():
    rng = np.random.default_rng(0)
    assert allocate([35, 6, 1], 10, rng) == [8, 1, 1]
    assert allocate([10, 10], 4, rng) == [2, 2]
    assert allocate([3, 2], 50, rng) == [3, 2]
    small = allocate([5, 5, 5], 2, rng)
    assert sum(small) == 2 and max(small) == 1


def test_export_is_blinded_stratified_and_keyed(store_copy, tmp_path):
    store, run_id = store_copy
    files = export_packets(store, run_id, sample=30, seed=5, out_dir=tmp_path / "p")
    assert files.packet_id == hashlib.sha256(f"{run_id}\x1f5\x1f30".encode()).hexdigest()[:16]
    html, text = files.html.read_text(), files.csv.read_text()
    names = identifiers(store, run_id)
    assert_blind(html, names)
    assert_blind(text, names)
    assert files.key.parent.name == "KEY-do-not-share" and files.key.parent.parent == tmp_path / "p"

    key = json.loads(files.key.read_text())
    assert key == packet_key(store, run_id, files.packet_id)
    rows = list(csv.DictReader(text.splitlines()))
    assert [r["item_id"] for r in rows] == ordered_items(key)
    assert html.count('class="item"') == 30 and all(f'data-item="{i}"' in html for i in key["items"])
    obs = {o["obs_id"]: o for o in store.observations(run_id)}
    for info in key["items"].values():
        assert obs[info["obs_id"]]["condition"] == info["condition"]
        assert obs[info["obs_id"]]["status"] == "ok"
    row = next(r for r in rows if r["item_id"] == ordered_items(key)[0])
    first = obs[key["items"][row["item_id"]]["obs_id"]]
    assert row["question"] == first["question"] and row["answer"] == first["answer"]
    # Every stratum is sampled (20 strata, 30 items) and the order is not the store's order.
    assert all(s["sampled"] >= 1 for s in key["strata"]) and sum(s["sampled"] for s in key["strata"]) == 30
    assert [key["items"][i]["obs_id"] for i in ordered_items(key)] != sorted(i["obs_id"] for i in key["items"].values())
    # The same seed gives the same packet.
    again = export_packets(store, run_id, sample=30, seed=5, out_dir=tmp_path / "q")
    assert again.packet_id == files.packet_id and again.csv.read_text() == text


def test_packet_shows_versions_with_validity(store_copy, tmp_path):
    store, run_id = store_copy
    files = export_packets(store, run_id, sample=189, seed=1, out_dir=tmp_path / "all")
    rows = list(csv.DictReader(files.csv.read_text().splitlines()))
    stale = [r for r in rows if r["superseded"]]
    later = [r for r in rows if r["later"]]
    assert stale and later
    assert re.search(r"since turn t\d+ \(2026-\d\d-\d\d \d\d:\d\d UTC\); until turn t\d+", stale[0]["superseded"])
    assert "becomes true at turn t" in later[0]["later"]
    assert any(r["expected"].startswith("abstain") for r in rows)


# -- round trip -------------------------------------------------------------------------------
def test_round_trip_adjudication_and_agreement(rated, tmp_path):
    store, run_id, files, key, items, a, b = rated
    done = import_ratings(store, run_id, [a, b])
    assert [d.raters for d in done] == [("ana",), ("ben",)]
    assert store.rows("select count(*) n from ratings")[0]["n"] == 20

    adj = export_adjudication(store, run_id, None, tmp_path / "adj")
    assert adj.agreed == 6 and adj.items == 4
    adj_key = json.loads(adj.key.read_text())
    assert set(adj_key["items"]) == {items[i] for i in DISAGREE}
    adj_rows = list(csv.DictReader(adj.csv.read_text().splitlines()))
    assert {r["item_id"] for r in adj_rows} == {items[i] for i in DISAGREE}
    html = adj.html.read_text()
    assert "Rater A" in html and "Rater B" in html
    assert_blind(html, {"ana", "ben"})
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert_blind(html, identifiers(store, run_id))

    # Agreed items are already human labels; item 6 (rubric 4 vs 5) takes the lower median.
    human = {r["obs_id"]: r for r in store.rows("select * from judgements where judge = 'human'")}
    assert len(human) == 6
    assert human[key["items"][items[6]]["obs_id"]]["rubric"] == 4

    resolution = write_ratings(tmp_path / "judith.json", adj.packet_id, "judith", [items[i] for i in RESOLVED],
                               [v[0] for v in RESOLVED.values()], [v[1] for v in RESOLVED.values()])
    assert import_adjudication(store, run_id, resolution).items == 4

    final = {i: (LABELS_A[i], None) for i in range(10) if i not in DISAGREE} | RESOLVED
    adjudications = {r["item_id"]: r for r in store.rows("select * from adjudications")}
    assert len(adjudications) == 10
    for i, (label, _) in final.items():
        row = adjudications[items[i]]
        assert row["label"] == label
        assert row["source"] == ("adjudicator" if i in DISAGREE else "agreement")
        assert row["adjudicator"] == ("judith" if i in DISAGREE else None)

    obs = {o["obs_id"]: o for o in store.observations(run_id)}
    human = {r["obs_id"]: r for r in store.rows("select * from judgements where judge = 'human'")}
    assert len(human) == 10
    for i in range(10):
        obs_id = key["items"][items[i]]["obs_id"]
        row, label = human[obs_id], final[i][0]
        expect_abstain = Expected.model_validate_json(obs[obs_id]["expected"]).expect_abstain
        assert row["outcome"] == label and row["run_id"] == run_id and row["status"] == "ok"
        assert row["correct"] == int(label == "correct" or (label == "abstained" and expect_abstain))
        if i in RESOLVED:
            assert row["rubric"] == RESOLVED[i][1]

    report = agreement_report(store, run_id)
    (pair,) = report.rater_pairs
    assert (pair.rater_a, pair.rater_b, pair.n) == ("ana", "ben", 10)
    assert pair.label_percent == pytest.approx(0.7)
    assert pair.label_kappa == pytest.approx(0.6)  # (0.7 - 0.25) / (1 - 0.25)
    assert pair.rubric_weighted_kappa == pytest.approx(0.5625)  # 1 - (0.7/4) / (1.6/4)
    assert report.adjudicated == 10 and report.pending == 0
    assert report.by_source == {"agreement": 6, "adjudicator": 4}

    det = {r["obs_id"]: r["outcome"] for r in store.rows("select * from judgements where judge = 'deterministic'")}
    human_labels = [final[i][0] for i in range(10)]
    order = [key["items"][items[i]]["obs_id"] for i in range(10)]
    det_labels = [det[o] for o in order]
    (judge,) = report.judges
    assert judge.judge == "deterministic" and judge.n == 10
    assert judge.percent == pytest.approx(np.mean([h == d for h, d in zip(human_labels, det_labels, strict=True)]))
    assert judge.kappa == pytest.approx(kappa_by_hand(human_labels, det_labels))
    per = {lab.label: lab for lab in judge.per_label}
    for label, lab in per.items():
        h = [str(x == label) for x in human_labels]
        d = [str(x == label) for x in det_labels]
        assert lab.n_human == human_labels.count(label) and lab.n_judge == det_labels.count(label)
        assert lab.percent == pytest.approx(np.mean([x == y for x, y in zip(h, d, strict=True)]))
        assert lab.kappa == pytest.approx(kappa_by_hand(h, d), nan_ok=True)


def test_headline_judge_and_report_section(rated, tmp_path):
    store, run_id, files, key, items, a, b = rated
    assert rating_section(store, run_id) is not None  # a packet exists, nothing rated yet
    import_ratings(store, run_id, [a, b])
    export_adjudication(store, run_id, files.packet_id, tmp_path / "adj")

    head = headline_judge(store, run_id)
    assert head.judge_of_record == "human" and len(head.labels) == 189
    assert head.by_judge == {"human": 6, "deterministic": 183}
    obs_id = key["items"][items[0]]["obs_id"]
    assert head.labels[obs_id].judge == "human" and head.labels[obs_id].outcome == "correct"

    section = rating_section(store, run_id)
    json.dumps(section)  # plain data
    assert section["counts"] == {
        "observations": 189, "sampled": 10, "raters": 2, "adjudicated": 6, "agreed": 6, "adjudicator": 0,
        "pending": 4, "human_labels_in_run": 6,
    }
    assert section["headline"]["human"] == 6 and section["headline"]["judge_of_record"] == "human"
    assert section["rater_agreement"][0]["label_kappa"] == pytest.approx(0.6)
    assert section["judge_vs_human"][0]["judge"] == "deterministic"

    # A run whose judge of record is the deterministic judge ignores the human labels.
    run = store.run(run_id)
    manifest = run["manifest"]
    manifest["campaign"]["judge_of_record"] = "deterministic"
    store.db["runs"].update(run_id, {"manifest": json.dumps(manifest)})
    assert headline_judge(store, run_id).by_judge == {"deterministic": 189}


def test_no_packet_no_section(store_copy):
    store, run_id = store_copy
    assert rating_section(store, run_id) is None
    with pytest.raises(LsrepError, match="no rating packet"):
        agreement_report(store, run_id)


# -- validation -------------------------------------------------------------------------------
def _assert_nothing_written(store) -> None:
    assert store.rows("select count(*) n from ratings")[0]["n"] == 0


def test_bad_files_name_file_and_item_and_write_nothing(rated, tmp_path):
    store, run_id, files, key, items, a, b = rated
    cases = {
        "bad-label": (["correct"] * 9 + ["maybe"], [3] * 10, items, f"item '{items[9]}': label 'maybe'"),
        "rubric-7": (["correct"] * 10, [3, 3, 7] + [3] * 7, items, f"item '{items[2]}': rubric 7 is outside 1-5"),
        "unknown-item": (["correct"] * 10, [3] * 10, items[:9] + ["izzz"], "item 'izzz' is not in packet"),
        "missing-item": (["correct"] * 9, [3] * 9, items[:9], f"1 item(s) of packet {files.packet_id} not rated: {items[9]}"),
    }
    for name, (labels, rubrics, ids, message) in cases.items():
        bad = write_ratings(tmp_path / f"{name}.json", files.packet_id, name, ids, labels, rubrics)
        with pytest.raises(InputError) as err:
            import_ratings(store, run_id, [a, bad])  # the good file is not written either
        assert str(bad) in str(err.value) and message in str(err.value), str(err.value)
        _assert_nothing_written(store)

    other = write_ratings(tmp_path / "other.json", "0123456789abcdef", "x", items, ["correct"] * 10, [3] * 10)
    with pytest.raises(InputError, match="unknown packet id '0123456789abcdef'"):
        import_ratings(store, run_id, [other])
    with pytest.raises(InputError, match="rater 'ana' already rated"):
        import_ratings(store, run_id, [a, a])
    _assert_nothing_written(store)


def test_filled_csv_imports_and_names_the_line(rated, tmp_path):
    store, run_id, files, key, items, a, b = rated
    rows = list(csv.DictReader(files.csv.read_text().splitlines()))
    for row, label, rubric in zip(rows, LABELS_A, RUBRIC_A, strict=True):
        row.update(label=label.upper(), rubric=str(rubric))

    def write(name: str, rows: list[dict]) -> Path:
        path = tmp_path / name
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return path

    bad_rows = [dict(r) for r in rows]
    bad_rows[3]["rubric"] = "7"
    bad = write("cleo.csv", bad_rows)
    with pytest.raises(InputError) as err:
        import_ratings(store, run_id, [bad])
    assert f"{bad}:5: item '{items[3]}': rubric 7 is outside 1-5" == str(err.value)
    _assert_nothing_written(store)

    (done,) = import_ratings(store, run_id, [write("cleo.csv", rows)])
    assert done.raters == ("cleo",) and done.items == 10  # pseudonym from the file name
    stored = {r["item_id"]: r for r in store.rows("select * from ratings where rater = 'cleo'")}
    assert [stored[i]["label"] for i in items] == LABELS_A


def test_adjudication_rejects_stale_packet_and_wrong_kind(rated, tmp_path):
    store, run_id, files, key, items, a, b = rated
    import_ratings(store, run_id, [a, b])
    adj = export_adjudication(store, run_id, None, tmp_path / "adj")
    resolution = write_ratings(tmp_path / "judith.json", adj.packet_id, "judith", [items[i] for i in DISAGREE],
                               ["wrong"] * 4, [1] * 4)
    with pytest.raises(InputError, match="is for adjudication, not rating .use `lsrep rate resolve`"):
        import_ratings(store, run_id, [resolution])
    # Ben changes his mind: the adjudication packet no longer matches the ratings.
    import_ratings(store, run_id, [write_ratings(tmp_path / "ben.json", files.packet_id, "ben", items,
                                                 LABELS_A, RUBRIC_A)])
    with pytest.raises(InputError, match="changed since adjudication packet"):
        import_adjudication(store, run_id, resolution)
    assert export_adjudication(store, run_id, None, tmp_path / "adj2").items == 0
    assert store.rows("select count(*) n from adjudications where source = 'agreement'")[0]["n"] == 10
    # And back: the items disputed again lose their agreement label.
    import_ratings(store, run_id, [write_ratings(tmp_path / "ben-2.json", files.packet_id, "ben", items,
                                                 LABELS_B, RUBRIC_B)])
    assert export_adjudication(store, run_id, None, tmp_path / "adj3").items == 4
    assert store.rows("select count(*) n from adjudications")[0]["n"] == 6
    assert store.rows("select count(*) n from judgements where judge = 'human'")[0]["n"] == 6
