"""Adjudication: agreed items become human labels; disagreements go to an adjudication packet, whose resolutions are stored in turn."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsrep.errors import InputError, LsrepError
from lsrep.rating.common import HUMAN_JUDGE, HUMAN_JUDGE_VERSION, PacketFiles, RatingsImport, _now
from lsrep.rating.packets import (
    _digest,
    _item_view,
    _observations,
    _put,
    _save_packet,
    _turn_dates,
    _write_packet,
)
from lsrep.rating.ratings_files import _file_packet, _read_ratings, _validate, packet_key
from lsrep.references import Expected
from lsrep.store import RunStore


# -- adjudication -----------------------------------------------------------------------------
def latest_packet(store: RunStore, run_id: str, kind: str = "rating") -> str:
    rows = store.rows("select packet_id from rating_packets where run_id = ? and kind = ? "
                      "order by created_at desc, packet_id limit 1", [run_id, kind])
    if not rows:
        raise LsrepError(f"run {run_id} has no {kind} packet (run `lsrep rate export` first)")
    return rows[0]["packet_id"]


def _ratings_by_item(store: RunStore, packet_id: str) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in store.rows("select * from ratings where packet_id = ? order by item_id, rater", [packet_id]):
        out[r["item_id"]][r["rater"]] = r
    return out


def _ratings_digest(by_item: dict[str, dict[str, dict[str, Any]]]) -> str:
    return _digest(*sorted(f"{i}:{r}:{v['label']}:{v['rubric']}" for i, rs in by_item.items() for r, v in rs.items()))


def disagrees(ratings: Sequence[dict[str, Any]]) -> bool:
    """Raters disagree on the label, or their rubric scores differ by more than 1."""
    rubrics = [r["rubric"] for r in ratings]
    return len({r["label"] for r in ratings}) > 1 or max(rubrics) - min(rubrics) > 1


def _human_judgement(obs: dict[str, Any], label: str, rubric: int, rationale: str,
                     votes: list[dict[str, Any]]) -> dict[str, Any]:
    expected = Expected.model_validate_json(obs["expected"])
    correct = label == "correct" or (label == "abstained" and expected.expect_abstain)
    agree = sum(v["label"] == label for v in votes) / len(votes) if votes else None
    return {
        "obs_id": obs["obs_id"], "judge": HUMAN_JUDGE, "run_id": obs["run_id"],
        "judge_version": HUMAN_JUDGE_VERSION, "prompt_digest": None, "outcome": label, "correct": int(correct),
        "rubric": rubric, "exact": None, "f1": None, "passes": json.dumps(votes, sort_keys=True),
        "agreement": agree, "status": "ok", "error": None, "rationale": rationale,
    }


def _record(store: RunStore, run_id: str, packet_id: str, decisions: list[dict[str, Any]]) -> None:
    """Write final labels to `adjudications` and judge `human` rows, in the caller's transaction."""
    obs = {o["obs_id"]: o for o in _observations(store, run_id, [d["obs_id"] for d in decisions])}
    now = _now()
    for d in decisions:
        _put(store, "adjudications", [{
            "obs_id": d["obs_id"], "run_id": run_id, "packet_id": packet_id, "item_id": d["item_id"],
            "label": d["label"], "rubric": d["rubric"], "source": d["source"], "adjudicator": d["adjudicator"],
            "imported_at": now,
        }])
        why = "raters agreed" if d["source"] == "agreement" else f"adjudicated by {d['adjudicator']}"
        _put(store, "judgements", [_human_judgement(obs[d["obs_id"]], d["label"], d["rubric"], why, d["votes"])])


def _votes(ratings: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"rater": r, "label": v["label"], "rubric": v["rubric"]} for r, v in sorted(ratings.items())]


def export_adjudication(store: RunStore, run_id: str, packet_id: str | None, out_dir: Path | str) -> PacketFiles:
    """Record agreed items as human labels and write a packet of the disagreements (if any)."""
    packet_id = packet_id or latest_packet(store, run_id)
    key = packet_key(store, run_id, packet_id)
    by_item = _ratings_by_item(store, packet_id)
    raters = sorted({r for rs in by_item.values() for r in rs})
    if len(raters) < 2:
        raise LsrepError(f"packet {packet_id} has ratings from {len(raters)} rater(s); adjudication needs two")
    blind = {r: f"Rater {chr(ord('A') + i)}" if i < 26 else f"Rater {i + 1}" for i, r in enumerate(raters)}
    agreed, disputed = [], []
    for item_id, info in key["items"].items():
        rs = by_item.get(item_id, {})
        if len(rs) < len(raters):
            missing = ", ".join(r for r in raters if r not in rs)
            raise LsrepError(f"item {item_id} of packet {packet_id} lacks ratings from {missing}")
        (disputed if disagrees(list(rs.values())) else agreed).append((item_id, info["obs_id"], rs))
    earlier = {r["obs_id"] for r in store.rows(
        "select obs_id from adjudications where packet_id = ? and source = 'agreement'", [packet_id])}
    with store.db.conn:
        for obs in earlier & {obs for _, obs, _ in disputed}:  # re-imported ratings undid an agreement
            store.db.conn.execute("delete from adjudications where obs_id = ?", [obs])
            store.db.conn.execute("delete from judgements where obs_id = ? and judge = ?", [obs, HUMAN_JUDGE])
        _record(store, run_id, packet_id, [{
            "obs_id": obs, "item_id": item_id, "label": next(iter(rs.values()))["label"],
            "rubric": statistics.median_low(v["rubric"] for v in rs.values()), "source": "agreement",
            "adjudicator": None, "votes": _votes(rs),
        } for item_id, obs, rs in agreed])
    if not disputed:
        return PacketFiles(packet_id, "adjudication", 0, None, None, None, agreed=len(agreed))
    digest = _ratings_digest(by_item)
    adj_id = _digest(packet_id, "adjudication", digest)
    adj_key = {
        "packet_id": adj_id, "kind": "adjudication", "run_id": run_id, "source_packet": packet_id,
        "ratings_digest": digest, "created_at": _now(), "raters": {b: r for r, b in blind.items()},
        "items": {item_id: key["items"][item_id] for item_id, _, _ in disputed},
    }
    adj_key = _save_packet(store, run_id, adj_key, seed=None, sample_size=len(disputed))
    obs_rows = _observations(store, run_id, [obs for _, obs, _ in disputed])
    dates = _turn_dates(store, run_id)
    views = []
    for (item_id, _, rs), row in zip(disputed, obs_rows, strict=True):
        view = _item_view(row, item_id, dates)
        view["ratings"] = [{"rater": blind[r], "label": v["label"], "rubric": v["rubric"], "note": v["note"] or ""}
                           for r, v in sorted(rs.items(), key=lambda kv: blind[kv[0]])]
        views.append(view)
    files = _write_packet(Path(out_dir), adj_id, "adjudication", views, adj_key)
    return replace(files, agreed=len(agreed))


def import_adjudication(store: RunStore, run_id: str, path: Path | str) -> RatingsImport:
    """Store an adjudicator's final labels for every item of an adjudication packet."""
    f = _read_ratings(path)
    key = _file_packet(store, run_id, f, "adjudication")
    _validate(f, key)
    source = key["source_packet"]
    if _ratings_digest(_ratings_by_item(store, source)) != key["ratings_digest"]:
        raise InputError(f.path, f"the ratings of packet {source} changed since adjudication packet "
                                 f"{f.packet_id} was written; export a new one (`lsrep rate adjudicate`)")
    by_item = _ratings_by_item(store, source)
    with store.db.conn:
        _record(store, run_id, source, [{
            "obs_id": key["items"][e.item_id]["obs_id"], "item_id": e.item_id, "label": e.label,
            "rubric": e.rubric, "source": "adjudicator", "adjudicator": f.rater,
            "votes": _votes(by_item[e.item_id]),
        } for e in f.entries])
    return RatingsImport(f.packet_id, (f.rater,), len(f.entries))
