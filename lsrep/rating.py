"""Human adjudication: blinded rating packets out, ratings in, judges measured against people.

A rating packet is a stratified sample of a run's answered observations
(condition x category x deterministic outcome), shuffled and stripped of
system, condition, model and run identifiers. Raters label each item with a
protocol outcome and a 1-5 rubric score in a self-contained HTML form (or the
CSV twin); the key that maps item ids back to observations stays in
`KEY-do-not-share/` and in `rating_packets`. Where raters disagree (label, or
rubric by more than 1) an adjudication packet holds just those items; agreed
and adjudicated labels become judge `human` in `judgements`.

Agreed rubric = the lower median of the raters' scores. Per-label agreement is
one-vs-rest: Cohen's kappa and percent agreement on "label vs any other label".
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lsrep.errors import InputError, LsrepError
from lsrep.judge.deterministic import DETERMINISTIC_JUDGE
from lsrep.judge.verdict import OUTCOMES
from lsrep.references import Expected
from lsrep.store import RunStore

RATER_LABELS: tuple[str, ...] = ("correct", "stale", "future", "abstained", "wrong")
RUBRIC_SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)
HUMAN_JUDGE = "human"
HUMAN_JUDGE_VERSION = "1"
RATINGS_FORMAT = "lsrep-ratings/1"
KEY_DIR = "KEY-do-not-share"
TEMPLATES = Path(__file__).parent / "templates" / "rating"
PER_LABEL_METHOD = "one-vs-rest: Cohen's kappa and percent agreement on 'this label vs any other'"


# -- results ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PacketFiles:
    """What an export wrote."""

    packet_id: str
    """The packet's id (also in every ratings file)."""
    kind: str
    """`rating` or `adjudication`."""
    items: int
    """Items in the packet."""
    html: Path | None
    """The HTML form (None when there was nothing to write)."""
    csv: Path | None
    """The CSV twin."""
    key: Path | None
    """The key, kept apart from what raters see."""
    agreed: int = 0
    """Adjudication: items the raters agreed on (recorded without an adjudicator)."""


@dataclass(frozen=True)
class RatingsImport:
    """What an import stored."""

    packet_id: str
    raters: tuple[str, ...]
    items: int


@dataclass(frozen=True)
class RaterPair:
    """Agreement between two raters over the items both rated."""

    rater_a: str
    rater_b: str
    n: int
    label_percent: float
    label_kappa: float
    rubric_weighted_kappa: float
    """Linearly weighted kappa over the 1-5 scale."""


@dataclass(frozen=True)
class LabelAgreement:
    """One-vs-rest agreement of a judge with the human label for one outcome label."""

    label: str
    n_human: int
    """Items the adjudicated human label gives this label."""
    n_judge: int
    n_both: int
    percent: float
    kappa: float


@dataclass(frozen=True)
class JudgeAgreement:
    """An automatic judge against the adjudicated human labels."""

    judge: str
    n: int
    percent: float
    kappa: float
    per_label: tuple[LabelAgreement, ...]


@dataclass(frozen=True)
class AgreementReport:
    """Rater-rater and judge-vs-human agreement for one rating packet."""

    packet_id: str
    items: int
    raters: tuple[str, ...]
    rater_pairs: tuple[RaterPair, ...]
    adjudicated: int
    by_source: dict[str, int]
    """Adjudicated items by source (`agreement`, `adjudicator`)."""
    pending: int
    """Items the raters disagree on with no adjudication yet."""
    judges: tuple[JudgeAgreement, ...]
    per_label_method: str = PER_LABEL_METHOD


@dataclass(frozen=True)
class HeadlineLabel:
    """The label that counts for one observation."""

    judge: str
    outcome: str | None
    correct: int | None


@dataclass(frozen=True)
class HeadlineJudges:
    """Which judge's labels the headline numbers use, per observation."""

    judge_of_record: str
    labels: dict[str, HeadlineLabel]
    """obs_id -> the label that counts."""
    by_judge: dict[str, int] = field(default_factory=dict)
    """Observations per judge whose label counts."""

    @property
    def human(self) -> int:
        return self.by_judge.get(HUMAN_JUDGE, 0)


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


# -- agreement --------------------------------------------------------------------------------
def _judge_agreement(judge: str, human: list[str], other: list[str | None]) -> JudgeAgreement:
    from lsrep.judge.agreement import cohen_kappa, percent_agreement

    labels = [lab for lab in OUTCOMES if lab in human or lab in other]
    per_label = []
    for lab in labels:
        h = [x == lab for x in human]
        j = [None if y is None else y == lab for y in other]
        pairs = [(a, b) for a, b in zip(h, j, strict=True) if b is not None]
        per_label.append(LabelAgreement(
            label=lab, n_human=sum(a for a, _ in pairs), n_judge=sum(b for _, b in pairs),
            n_both=sum(a and b for a, b in pairs), percent=percent_agreement(h, j).value,
            kappa=cohen_kappa(h, j, categories=[False, True]).value,
        ))
    overall = percent_agreement(human, other)
    return JudgeAgreement(judge, overall.n, overall.value,
                          cohen_kappa(human, other, categories=OUTCOMES).value, tuple(per_label))


def agreement_report(store: RunStore, run_id: str, packet_id: str | None = None) -> AgreementReport:
    """Rater-rater agreement on a rating packet and every automatic judge against the human labels."""
    # Imported here: the lsrep.llm package loads the OpenAI client, which packets never need.
    from lsrep.judge.agreement import cohen_kappa, percent_agreement

    packet_id = packet_id or latest_packet(store, run_id)
    key = packet_key(store, run_id, packet_id)
    by_item = _ratings_by_item(store, packet_id)
    items = list(key["items"])
    raters = sorted({r for rs in by_item.values() for r in rs})
    pairs = []
    for i, a in enumerate(raters):
        for b in raters[i + 1:]:
            la = [by_item[it][a]["label"] if a in by_item.get(it, {}) else None for it in items]
            lb = [by_item[it][b]["label"] if b in by_item.get(it, {}) else None for it in items]
            ra = [by_item[it][a]["rubric"] if a in by_item.get(it, {}) else None for it in items]
            rb = [by_item[it][b]["rubric"] if b in by_item.get(it, {}) else None for it in items]
            pct = percent_agreement(la, lb)
            pairs.append(RaterPair(a, b, pct.n, pct.value, cohen_kappa(la, lb, categories=RATER_LABELS).value,
                                   cohen_kappa(ra, rb, categories=RUBRIC_SCORES, weights="linear").value))
    adjudicated = store.rows("select * from adjudications where packet_id = ? order by obs_id", [packet_id])
    obs_ids = [a["obs_id"] for a in adjudicated]
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    if obs_ids:
        marks = ",".join("?" * len(obs_ids))
        for r in store.rows(f"select obs_id, judge, outcome from judgements where obs_id in ({marks}) "
                            "and judge != ? and status = 'ok'", [*obs_ids, HUMAN_JUDGE]):
            labels[r["judge"]][r["obs_id"]] = r["outcome"]
    human = [a["label"] for a in adjudicated]
    judge_names = sorted(labels, key=lambda j: (j != DETERMINISTIC_JUDGE, j))
    judges = tuple(_judge_agreement(j, human, [labels[j].get(o) for o in obs_ids]) for j in judge_names)
    source_of = {a["item_id"]: a["source"] for a in adjudicated}
    pending = sum(1 for it in items if len(by_item.get(it, {})) >= 2 and disagrees(list(by_item[it].values()))
                  and source_of.get(it) != "adjudicator")
    return AgreementReport(
        packet_id=packet_id, items=len(items), raters=tuple(raters), rater_pairs=tuple(pairs),
        adjudicated=len(adjudicated), by_source=dict(Counter(a["source"] for a in adjudicated)),
        pending=pending, judges=judges,
    )


# -- judge of record --------------------------------------------------------------------------
def headline_judge(store: RunStore, run_id: str) -> HeadlineJudges:
    """Per observation, the judge whose label the headline numbers use.

    `judge_of_record = "human"`: the adjudicated human label where one exists, the
    deterministic judge elsewhere. Another judge name: that judge where it gave an
    `ok` judgement, the deterministic judge elsewhere.
    """
    campaign = store.run(run_id)["manifest"].get("campaign", {})
    of_record = campaign.get("judge_of_record") or DETERMINISTIC_JUDGE
    rows = store.rows(
        "select o.obs_id, j.judge, j.outcome, j.correct from observations o left join judgements j "
        "on j.obs_id = o.obs_id and j.status = 'ok' and j.judge in (?, ?) where o.run_id = ?",
        [of_record, DETERMINISTIC_JUDGE, run_id],
    )
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        entry = found[r["obs_id"]]
        if r["judge"] is not None:
            entry[r["judge"]] = r
    labels = {}
    for obs_id, by_judge in found.items():
        judge = of_record if of_record in by_judge else DETERMINISTIC_JUDGE
        row = by_judge.get(judge, {})
        labels[obs_id] = HeadlineLabel(judge, row.get("outcome"), row.get("correct"))
    return HeadlineJudges(of_record, labels, dict(Counter(lab.judge for lab in labels.values())))


# -- report section ---------------------------------------------------------------------------
def _num(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def rating_section(store: RunStore, run_id: str) -> dict[str, Any] | None:
    """Everything the report needs about human ratings of a run, as plain data (None: no packet)."""
    if not store.rows("select 1 from rating_packets where run_id = ? and kind = 'rating' limit 1", [run_id]):
        return None
    packet_id = latest_packet(store, run_id)
    packet = store.rows("select * from rating_packets where packet_id = ?", [packet_id])[0]
    rep = agreement_report(store, run_id, packet_id)
    head = headline_judge(store, run_id)
    total = len(head.labels)
    human_run = store.rows("select count(*) as n from adjudications where run_id = ?", [run_id])[0]["n"]
    return {
        "packet": {"packet_id": packet_id, "created_at": packet["created_at"], "seed": packet["seed"],
                   "sample_size": packet["sample_size"], "items": rep.items, "raters": list(rep.raters)},
        "counts": {"observations": total, "sampled": rep.items, "raters": len(rep.raters),
                   "adjudicated": rep.adjudicated, "agreed": rep.by_source.get("agreement", 0),
                   "adjudicator": rep.by_source.get("adjudicator", 0), "pending": rep.pending,
                   "human_labels_in_run": human_run},
        "rater_agreement": [{
            "rater_a": p.rater_a, "rater_b": p.rater_b, "n": p.n, "label_percent": _num(p.label_percent),
            "label_kappa": _num(p.label_kappa), "rubric_weighted_kappa": _num(p.rubric_weighted_kappa),
        } for p in rep.rater_pairs],
        "judge_vs_human": [{
            "judge": j.judge, "n": j.n, "percent": _num(j.percent), "kappa": _num(j.kappa),
            "per_label": [{"label": lab.label, "n_human": lab.n_human, "n_judge": lab.n_judge,
                           "n_both": lab.n_both, "percent": _num(lab.percent), "kappa": _num(lab.kappa)}
                          for lab in j.per_label],
        } for j in rep.judges],
        "headline": {"judge_of_record": head.judge_of_record, "observations": total,
                     "by_judge": dict(sorted(head.by_judge.items())), "human": head.human,
                     "human_share": head.human / total if total else None},
        "methods": {
            "sample": "stratified by condition x category x deterministic outcome, proportional allocation "
                      "with at least one item per stratum, seeded",
            "rater_agreement": "percent agreement and Cohen's kappa on labels; linearly weighted Cohen's "
                               "kappa on the 1-5 rubric",
            "adjudication": "agreed = same label and rubric within 1 (rubric: lower median); "
                            "other items resolved by an adjudicator",
            "per_label": PER_LABEL_METHOD,
        },
    }


def _now() -> str:
    # Wall-clock time for bookkeeping only.
    return datetime.now(UTC).isoformat(timespec="seconds")
