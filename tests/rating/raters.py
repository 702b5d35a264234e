"""Simulated raters and blinding checks shared by the rating tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lsrep.rating import RATINGS_FORMAT


def identifiers(store, run_id: str) -> set[str]:
    """Every system, condition, model and run identifier the packet must not show."""
    manifest = store.run(run_id)["manifest"]
    names = {run_id, manifest["answerer"]["name"], manifest["campaign"]["name"]}
    for c in manifest["campaign"]["conditions"]:
        names |= {c["name"], c["system"]}
    for c in manifest["conditions"].values():
        names |= {c["adapter"], c["adapter"].split(":")[1]}
    names |= {r["unit_id"] for r in store.rows("select unit_id from units where run_id = ?", [run_id])}
    return names


def assert_blind(text: str, names: set[str]) -> None:
    for name in names:
        hit = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)
        assert hit is None, f"identifier {name!r} appears: ...{text[max(hit.start() - 60, 0):hit.end() + 60]}..."


def ordered_items(key: dict) -> list[str]:
    return sorted(key["items"], key=lambda i: key["items"][i]["position"])


def write_ratings(path: Path, packet_id: str, rater: str, items: list[str], labels: list[str],
                  rubrics: list[int], notes: list[str] | None = None) -> Path:
    notes = notes or [""] * len(items)
    path.write_text(json.dumps({
        "format": RATINGS_FORMAT, "packet_id": packet_id, "rater": rater,
        "ratings": [{"item_id": i, "label": lab, "rubric": r, "note": n}
                    for i, lab, r, n in zip(items, labels, rubrics, notes, strict=True)],
    }))
    return path


# Two simulated raters over a 10-item packet, by packet position.
LABELS_A = ["correct", "correct", "correct", "stale", "stale", "abstained", "abstained", "abstained", "wrong", "wrong"]
LABELS_B = ["correct", "correct", "stale", "stale", "stale", "abstained", "abstained", "wrong", "wrong", "correct"]
RUBRIC_A = [5, 4, 4, 2, 3, 5, 4, 3, 1, 2]
RUBRIC_B = [5, 4, 2, 2, 1, 5, 5, 3, 1, 4]
DISAGREE = [2, 4, 7, 9]  # label differs (2, 7, 9) or rubric differs by more than 1 (2, 4, 9)
RESOLVED = {2: ("stale", 3), 4: ("stale", 2), 7: ("wrong", 1), 9: ("correct", 4)}
