"""Blinded rating packets: a stratified sample of observations, stripped of identifiers, as an HTML form and a CSV, with the key kept apart."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lsrep.errors import LsrepError
from lsrep.judge.deterministic import DETERMINISTIC_JUDGE
from lsrep.rating.common import (
    KEY_DIR,
    RATER_LABELS,
    RATINGS_FORMAT,
    RUBRIC_SCORES,
    TEMPLATES,
    PacketFiles,
    _now,
)
from lsrep.references import Expected
from lsrep.store import RunStore


# -- sampling ---------------------------------------------------------------------------------
def allocate(sizes: Sequence[int], n: int, rng: np.random.Generator) -> list[int]:
    """Proportional allocation of `n` over strata, at least one per stratum where `n` allows.

    Each step gives one more to the stratum furthest below its quota n*size/total
    (random tie-break), so the result is proportional up to rounding.
    """
    total = sum(sizes)
    n = min(n, total)
    if n <= 0 or total == 0:
        return [0] * len(sizes)
    alloc = [1 if n >= len(sizes) and s > 0 else 0 for s in sizes]
    order = rng.permutation(len(sizes))
    tie = {int(i): rank for rank, i in enumerate(order)}
    while sum(alloc) < n:
        open_ = [i for i, s in enumerate(sizes) if alloc[i] < s]
        best = max(open_, key=lambda i: (n * sizes[i] / total - alloc[i], -tie[i]))
        alloc[best] += 1
    return alloc


def sample_observations(rows: list[dict[str, Any]], n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """A stratified sample (condition x category x deterministic outcome), in shuffled order."""
    strata: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r["obs_id"]):
        strata[_stratum(row)].append(row)
    keys = sorted(strata, key=lambda k: tuple(str(x) for x in k))
    counts = allocate([len(strata[k]) for k in keys], n, rng)
    chosen: list[dict[str, Any]] = []
    for key, k in zip(keys, counts, strict=True):
        members = strata[key]
        picks = rng.choice(len(members), size=k, replace=False) if k else []
        chosen.extend(members[int(i)] for i in sorted(picks))
    return [chosen[int(i)] for i in rng.permutation(len(chosen))]


def _stratum(row: dict[str, Any]) -> tuple[str, str, str]:
    return (row["condition"], row["category"] or "", row["det_outcome"] or "")


# -- blinded item views -----------------------------------------------------------------------
def _format_time(value: str | None) -> str:
    if not value:
        return "unknown date"
    when = datetime.fromisoformat(value)
    offset = when.utcoffset()
    zone = "UTC" if offset is not None and offset.total_seconds() == 0 else when.strftime("%z")
    return f"{when:%Y-%m-%d %H:%M} {zone}".strip()


def _turn_dates(store: RunStore, run_id: str) -> dict[tuple[str, str], str]:
    rows = store.rows("select trajectory, turn_id, sim_time, timestamp from turns where run_id = ?", [run_id])
    return {(r["trajectory"], r["turn_id"]): r["sim_time"] or r["timestamp"] for r in rows}


def _item_view(row: dict[str, Any], item_id: str, dates: dict[tuple[str, str], str]) -> dict[str, Any]:
    """What a rater sees of one observation: no run, condition, system or model identifier."""
    expected = Expected.model_validate_json(row["expected"])

    def turn(turn_id: str) -> str:
        return f"turn {turn_id} ({_format_time(dates.get((row['trajectory'], turn_id)))})"

    def view(version, status: str, status_class: str) -> dict[str, str]:
        validity = f"since {turn(version.valid_from)}"
        if status_class == "later":
            validity = f"becomes true at {turn(version.valid_from)}"
        if version.valid_until:
            validity += f"; until {turn(version.valid_until)}"
        return {"status": status, "status_class": status_class, "answer": version.answer,
                "aliases": ", ".join(version.aliases), "validity": validity}

    refs = [view(v, "in force", "in-force") for v in expected.in_force]
    refs += [view(v, "superseded (stale if given)", "superseded") for v in expected.superseded]
    refs += [view(v, "later (future if given)", "later") for v in expected.later]
    return {
        "item_id": item_id, "date": _format_time(row["sim_time"]), "question": row["question"],
        "kind": row["kind"], "expect_abstain": expected.expect_abstain, "reason": expected.reason,
        "references": refs, "answer": row["answer"] or "", "ratings": [],
    }


def _observations(store: RunStore, run_id: str, obs_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    rows = store.rows(
        "select o.*, j.outcome as det_outcome from observations o left join judgements j "
        "on j.obs_id = o.obs_id and j.judge = ? where o.run_id = ?",
        [DETERMINISTIC_JUDGE, run_id],
    )
    if obs_ids is None:
        return rows
    by_id = {r["obs_id"]: r for r in rows}
    missing = [o for o in obs_ids if o not in by_id]
    if missing:
        raise LsrepError(f"run {run_id} no longer holds observation(s) {', '.join(missing[:3])}")
    return [by_id[o] for o in obs_ids]


# -- writing packets --------------------------------------------------------------------------
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


def _spreadsheet_safe(text: str) -> str:
    # A cell starting with = + - @ is run as a formula by spreadsheets; the quote shows it as text.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _write_packet(out_dir: Path, packet_id: str, kind: str, views: list[dict[str, Any]],
                  key: dict[str, Any]) -> PacketFiles:
    out_dir.mkdir(parents=True, exist_ok=True)
    title = "Adjudication packet" if kind == "adjudication" else "Rating packet"
    html = _environment().get_template("packet.html.j2").render(
        title=title, packet_id=packet_id, kind=kind, items=views, labels=RATER_LABELS,
        rubric_scores=RUBRIC_SCORES, ratings_format=RATINGS_FORMAT,
    )
    html_path = out_dir / "packet.html"
    html_path.write_text(html, encoding="utf-8")
    csv_path = out_dir / "packet.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        prior = ["prior_ratings"] if kind == "adjudication" else []
        writer.writerow(["packet_id", "item_id", "date", "question", "expected", "in_force", "superseded",
                         "later", "answer", *prior, "rater", "label", "rubric", "note"])
        for v in views:
            refs = {c: " | ".join(_ref_text(r) for r in v["references"] if r["status_class"] == c)
                    for c in ("in-force", "superseded", "later")}
            expect = "abstain" + (f" ({v['reason']})" if v["reason"] else "") if v["expect_abstain"] else "answer"
            prior_cells = ["; ".join(f"{r['rater']}: {r['label']} {r['rubric']}" + (f" ({r['note']})" if r["note"] else "")
                                     for r in v["ratings"])] if prior else []
            cells = [v["date"], v["question"], expect, refs["in-force"], refs["superseded"], refs["later"],
                     v["answer"], *prior_cells]
            writer.writerow([packet_id, v["item_id"], *map(_spreadsheet_safe, cells), "", "", "", ""])
    key_path = out_dir / KEY_DIR / "key.json"
    key_path.parent.mkdir(exist_ok=True)
    key_path.write_text(json.dumps(key, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return PacketFiles(packet_id, kind, len(views), html_path, csv_path, key_path)


def _ref_text(ref: dict[str, str]) -> str:
    aliases = f" (also: {ref['aliases']})" if ref["aliases"] else ""
    return f"{ref['answer']}{aliases}, {ref['validity']}"


def _save_packet(store: RunStore, run_id: str, key: dict[str, Any], *, seed: int | None,
                 sample_size: int | None) -> dict[str, Any]:
    """Store a packet's key (re-exporting the same packet keeps its creation time)."""
    packet_id = key["packet_id"]
    old = store.rows("select key, created_at from rating_packets where packet_id = ?", [packet_id])
    if old:
        if json.loads(old[0]["key"])["items"] != key["items"] and store.rows(
            "select 1 from ratings where packet_id = ? limit 1", [packet_id]
        ):
            raise LsrepError(f"packet {packet_id} already has ratings and would now hold other items; "
                             "export with another seed or sample size")
        key = {**key, "created_at": old[0]["created_at"]}
    with store.db.conn:
        _put(store, "rating_packets", [{
            "packet_id": packet_id, "run_id": run_id, "kind": key["kind"], "created_at": key["created_at"],
            "seed": seed, "sample_size": sample_size, "items": len(key["items"]),
            "key": json.dumps(key, sort_keys=True),
        }])
    return key


def _put(store: RunStore, table: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert or replace whole rows with plain SQL, so they join the caller's open transaction."""
    for row in rows:
        cols = list(row)
        store.db.conn.execute(f"insert or replace into {table} ({', '.join(cols)}) "
                              f"values ({', '.join('?' * len(cols))})", [row[c] for c in cols])


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def export_packets(store: RunStore, run_id: str, *, sample: int, seed: int, out_dir: Path | str) -> PacketFiles:
    """Write a blinded rating packet of `sample` stratified observations to `out_dir`."""
    if sample < 1:
        raise LsrepError("the sample size must be at least 1")
    out_dir = Path(out_dir)
    rows = [r for r in _observations(store, run_id) if r["status"] == "ok" and r["answer"] is not None]
    if not rows:
        raise LsrepError(f"run {run_id} has no answered observations to rate")
    from lsrep.stats import rng_for  # scipy: only when sampling

    packet_id = _digest(run_id, seed, sample)
    chosen = sample_observations(rows, sample, rng_for(seed, "rating-packet", run_id))
    item_ids = [f"i{_digest(packet_id, r['obs_id'])[:8]}" for r in chosen]
    if len(set(item_ids)) != len(item_ids):  # vanishingly rare; longer ids keep them unique
        item_ids = [f"i{_digest(packet_id, r['obs_id'])}" for r in chosen]
    sizes = Counter(_stratum(r) for r in rows)
    taken = Counter(_stratum(r) for r in chosen)
    key = {
        "packet_id": packet_id, "kind": "rating", "run_id": run_id, "seed": seed, "sample_size": sample,
        "created_at": _now(),
        "items": {iid: {"obs_id": r["obs_id"], "condition": r["condition"], "position": pos + 1,
                        "stratum": list(_stratum(r))}
                  for pos, (iid, r) in enumerate(zip(item_ids, chosen, strict=True))},
        "strata": [{"condition": s[0], "category": s[1], "outcome": s[2], "size": sizes[s], "sampled": taken[s]}
                   for s in sorted(sizes)],
    }
    key = _save_packet(store, run_id, key, seed=seed, sample_size=sample)
    dates = _turn_dates(store, run_id)
    views = [_item_view(r, iid, dates) for iid, r in zip(item_ids, chosen, strict=True)]
    return _write_packet(out_dir, packet_id, "rating", views, key)
