"""`lsrep rate ...` end to end on a copy of the replayed example."""

from __future__ import annotations

import json
from types import SimpleNamespace

from lsrep.cli import main
from lsrep.rating import packet_key

from .raters import DISAGREE, LABELS_A, LABELS_B, RUBRIC_A, RUBRIC_B, ordered_items, write_ratings


def test_rate_commands(store_copy, tmp_path, capsys):
    # In process: a fresh interpreter per command would spend most of the test importing.
    def lsrep(*args: str) -> SimpleNamespace:
        code = main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    store, run_id = store_copy
    s = ["--store", str(store.path)]
    res = lsrep("rate", "export", "latest", "--sample", "10", "--seed", "11", "-o", str(tmp_path / "packet"), *s)
    assert res.returncode == 0, res.stderr
    packet_id = res.stdout.split()[1].rstrip(":")
    assert "KEY-do-not-share" in res.stdout and (tmp_path / "packet" / "packet.html").exists()
    items = ordered_items(packet_key(store, run_id, packet_id))

    bad = write_ratings(tmp_path / "bad.json", packet_id, "x", items, ["correct"] * 9 + ["maybe"], [3] * 10)
    res = lsrep("rate", "import", run_id[:12], str(bad), *s)
    assert res.returncode == 2 and res.stderr.startswith(f"lsrep: error: {bad}: item '{items[9]}': label 'maybe'")
    assert len(res.stderr.strip().splitlines()) == 1

    a = write_ratings(tmp_path / "ana.json", packet_id, "ana", items, LABELS_A, RUBRIC_A)
    b = write_ratings(tmp_path / "ben.json", packet_id, "ben", items, LABELS_B, RUBRIC_B)
    res = lsrep("rate", "import", "latest", str(a), str(b), *s)
    assert res.returncode == 0 and "10 ratings from ana" in res.stdout and "10 ratings from ben" in res.stdout

    res = lsrep("rate", "adjudicate", "latest", "-o", str(tmp_path / "adj"), *s)
    assert res.returncode == 0, res.stderr
    assert "6 item(s) agreed" in res.stdout and "4 disagreement(s)" in res.stdout
    adj_id = json.loads((tmp_path / "adj" / "KEY-do-not-share" / "key.json").read_text())["packet_id"]
    done = write_ratings(tmp_path / "judith.json", adj_id, "judith", [items[i] for i in DISAGREE],
                         ["wrong"] * 4, [2] * 4)
    res = lsrep("rate", "resolve", "latest", str(done), *s)
    assert res.returncode == 0 and "4 item(s) resolved by judith" in res.stdout

    res = lsrep("rate", "agreement", "latest", *s)
    assert res.returncode == 0, res.stderr
    assert "ana             ben                10    0.70    0.60       0.56" in res.stdout
    assert "deterministic: n=10" in res.stdout and "adjudicator 4, agreement 6" in res.stdout
    res = lsrep("rate", "agreement", "latest", "--json", *s)
    report = json.loads(res.stdout)
    assert abs(report["rater_pairs"][0]["label_kappa"] - 0.6) < 1e-9
    assert report["adjudicated"] == 10 and report["pending"] == 0
