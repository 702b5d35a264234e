"""Reading raters' files (JSON from the form, or the filled CSV), checking them against the packet's key, and storing the ratings."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsrep.errors import InputError, LsrepError
from lsrep.rating.common import RATER_LABELS, RATINGS_FORMAT, RUBRIC_SCORES, RatingsImport, _now
from lsrep.rating.packets import _put
from lsrep.store import RunStore


# -- reading ratings files --------------------------------------------------------------------
@dataclass(frozen=True)
class _Entry:
    item_id: str
    label: str
    rubric: int
    note: str
    line: int | None


@dataclass(frozen=True)
class _RatingsFile:
    path: Path
    packet_id: str
    rater: str
    entries: tuple[_Entry, ...]


def _check_entry(path: Path, item: str, label: Any, rubric: Any, line: int | None) -> tuple[str, int]:
    where = f"item {item!r}"
    norm = str(label or "").strip().lower()
    if not norm:
        raise InputError(path, f"{where}: no label", line)
    if norm not in RATER_LABELS:
        raise InputError(path, f"{where}: label {label!r} is not one of {', '.join(RATER_LABELS)}", line)
    if rubric is None or (isinstance(rubric, str) and not rubric.strip()):
        raise InputError(path, f"{where}: no rubric score", line)
    if isinstance(rubric, int) and not isinstance(rubric, bool):
        score = rubric
    elif isinstance(rubric, str) and rubric.strip().lstrip("+-").isdigit():
        score = int(rubric.strip())
    else:
        raise InputError(path, f"{where}: rubric {rubric!r} is not a whole number", line)
    if score not in RUBRIC_SCORES:
        raise InputError(path, f"{where}: rubric {score} is outside 1-5", line)
    return norm, score


def _read_json(path: Path) -> _RatingsFile:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    if not isinstance(data, dict) or not isinstance(data.get("ratings"), list):
        raise InputError(path, "not a ratings file (expected an object with a 'ratings' list)")
    if data.get("format", RATINGS_FORMAT) != RATINGS_FORMAT:
        raise InputError(path, f"unknown format {data.get('format')!r} (expected {RATINGS_FORMAT})")
    entries = []
    for i, r in enumerate(data["ratings"]):
        if not isinstance(r, dict) or not isinstance(r.get("item_id"), str):
            raise InputError(path, f"rating #{i + 1}: expected an object with an item_id")
        label, rubric = _check_entry(path, r["item_id"], r.get("label"), r.get("rubric"), None)
        entries.append(_Entry(r["item_id"], label, rubric, str(r.get("note") or ""), None))
    rater = str(data.get("rater") or "").strip() or path.stem
    return _RatingsFile(path, str(data.get("packet_id") or ""), rater, tuple(entries))


def _read_csv(path: Path) -> _RatingsFile:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        need = {"packet_id", "item_id", "label", "rubric"} - set(reader.fieldnames or ())
        if need:
            raise InputError(path, f"missing column(s): {', '.join(sorted(need))}", 1)
        entries, packets, raters = [], set(), set()
        for row in reader:
            line = reader.line_num
            item = (row["item_id"] or "").strip()
            if not item:
                raise InputError(path, "no item_id", line)
            packets.add((row["packet_id"] or "").strip())
            if (row.get("rater") or "").strip():
                raters.add(row["rater"].strip())
            label, rubric = _check_entry(path, item, row["label"], row["rubric"], line)
            entries.append(_Entry(item, label, rubric, (row.get("note") or "").strip(), line))
    if len(packets) > 1:
        raise InputError(path, f"rows name more than one packet: {', '.join(sorted(packets))}")
    if len(raters) > 1:
        raise InputError(path, f"rows name more than one rater: {', '.join(sorted(raters))}")
    return _RatingsFile(path, packets.pop() if packets else "", raters.pop() if raters else path.stem,
                        tuple(entries))


def _read_ratings(path: Path | str) -> _RatingsFile:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    if path.suffix.lower() == ".csv":
        return _read_csv(path)
    return _read_json(path)


def packet_key(store: RunStore, run_id: str, packet_id: str, kind: str = "rating") -> dict[str, Any]:
    """The stored key of a packet of this run and kind."""
    rows = store.rows("select * from rating_packets where packet_id = ?", [packet_id])
    if not packet_id or not rows:
        raise LsrepError(f"unknown packet id {packet_id!r}")
    row = rows[0]
    if row["run_id"] != run_id:
        raise LsrepError(f"packet {packet_id} belongs to another run ({row['run_id']})")
    if row["kind"] != kind:
        hint = "lsrep rate resolve" if row["kind"] == "adjudication" else "lsrep rate import"
        raise LsrepError(f"packet {packet_id} is for {row['kind']}, not {kind} (use `{hint}`)")
    return json.loads(row["key"])


def _file_packet(store: RunStore, run_id: str, file: _RatingsFile, kind: str) -> dict[str, Any]:
    try:
        return packet_key(store, run_id, file.packet_id, kind)
    except LsrepError as exc:
        raise InputError(file.path, str(exc)) from None


def _validate(file: _RatingsFile, key: dict[str, Any]) -> None:
    items = key["items"]
    seen: set[str] = set()
    for e in file.entries:
        if e.item_id not in items:
            raise InputError(file.path, f"item {e.item_id!r} is not in packet {file.packet_id}", e.line)
        if e.item_id in seen:
            raise InputError(file.path, f"item {e.item_id!r} is rated twice", e.line)
        seen.add(e.item_id)
    missing = [i for i in items if i not in seen]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(file.path, f"{len(missing)} item(s) of packet {file.packet_id} not rated: {shown}")


def import_ratings(store: RunStore, run_id: str, files: Sequence[Path | str]) -> list[RatingsImport]:
    """Validate every file against its packet key, then store all of them (or nothing)."""
    parsed = []
    for path in files:
        f = _read_ratings(path)
        key = _file_packet(store, run_id, f, "rating")
        _validate(f, key)
        parsed.append((f, key))
    seen: dict[tuple[str, str], Path] = {}
    for f, _ in parsed:
        if (f.packet_id, f.rater) in seen:
            raise InputError(f.path, f"rater {f.rater!r} already rated packet {f.packet_id} in "
                                     f"{seen[(f.packet_id, f.rater)]}")
        seen[(f.packet_id, f.rater)] = f.path
    now = _now()
    with store.db.conn:
        for f, key in parsed:
            store.db.conn.execute("delete from ratings where packet_id = ? and rater = ?", [f.packet_id, f.rater])
            _put(store, "ratings", [{
                "packet_id": f.packet_id, "item_id": e.item_id, "rater": f.rater, "run_id": run_id,
                "obs_id": key["items"][e.item_id]["obs_id"], "label": e.label, "rubric": e.rubric,
                "note": e.note, "imported_at": now,
            } for e in f.entries])
    return [RatingsImport(f.packet_id, (f.rater,), len(f.entries)) for f, _ in parsed]
