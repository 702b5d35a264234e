"""Per-observation drill-down data for the HTML report: every observation, compact and compressed.

    dd = build(ctx)                      # Drilldown(payload, count, labels)
    doc = decode(dd.payload)             # the document the report's inline script renders

The HTML report carries the payload in a `<script type="application/json">` block, which the
browser never executes; the report's inline script (templates/drilldown.js) decodes it with the
browser's own `DecompressionStream` only when the reader opens the Observations section, and
renders every data-derived string as text. Base64 keeps `<`, `&` and quotes out of the block, so
no turn or answer can close it.

The document interns every string once (`s`, the string table) and refers to it by index:

- `turns`: {trajectory: [[turn_id, speaker, session_id, timestamp, role, content], ...]};
- `frags`: distinct fragments, [text, [cited turn ids], kind, [mechanisms], score, flags,
  leak_turn_id, match_turn_id], flags a bit set of `FRAGMENT_FLAGS`;
- `probes`: [trajectory, probe_id, kind, category, question];
- `obs`: one row per observation in the report's order, laid out as `OBS_FIELDS`; `ctx` holds
  the fragment indices in rank order as runs [start, length, start, length, ...];
- `judges`: {obs index: [[judge, outcome, correct, rubric, status, rationale, error], ...]}
  for every judge with a row (the label shown is the report's judge, as in every section).

Everything is sorted or in store order, and zlib is deterministic, so the same run store gives
the same bytes.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from lsrep.reports.common import OUTCOMES, Context
from lsrep.reports.figures import OUTCOME_COLORS
from lsrep.reports.palette import condition_colors

VERSION = 1
FRAGMENT_FLAGS: tuple[str, ...] = ("leak", "content_leak", "unsourced", "misattributed", "unknown_source")
"""Bit i of a fragment's flags is FRAGMENT_FLAGS[i]."""
ALARMS: tuple[str, ...] = (
    "proven_leak", "content_leaks", "unsourced", "misattributed", "duplicate_citations", "budget_violation",
)
"""Integrity alarms of an observation (columns of `observations`, docs/integrity.md): the drill-down's
"integrity flags" filter and Flags column."""
NOTES: tuple[str, ...] = ("stale_in_context", "future_in_context", "unattributed")
"""Evidence facts shown with the alarms when non-zero, not alarms themselves."""
OBS_FLAGS: tuple[str, ...] = ALARMS + NOTES
OBS_FIELDS: tuple[str, ...] = (
    "id", "cond", "probe", "rep", "cp", "sim_time", "expected", "answer", "system_answer", "status", "error",
    "outcome", "correct", "f1", "exact", "label_judge", "flags", "ctx", "evidence", "n_frag", "ctx_tokens",
)
"""The positions of an `obs` row."""

RULES: dict[str, str] = {
    "future": "the answer gives a version that becomes true only after this checkpoint",
    "correct": "the answer gives the version in force (and no superseded one, unless marked as past)",
    "stale": "the answer gives a superseded version and not the one in force",
    "abstained": "the answer is an abstention (credited only where abstention was expected)",
    "wrong": "the answer gives no version in force, superseded or later (or hedges between them)",
}
"""Why the deterministic judge gave each label (lsrep.judge.deterministic), shown as its reason."""


class _Pool:
    """Strings interned once; `ix(None)` is None."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.strings: list[str] = []

    def ix(self, text: Any) -> int | None:
        if text is None:
            return None
        text = str(text)
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.strings)
            self.strings.append(text)
        return i


def _runs(indices: list[int]) -> list[int]:
    """[3, 4, 5, 9] -> [3, 3, 9, 1]: consecutive indices as (start, length) pairs."""
    out: list[int] = []
    for i in indices:
        if out and out[-2] + out[-1] == i:
            out[-1] += 1
        else:
            out += [i, 1]
    return out


def _round(x: Any) -> Any:
    return None if x is None else float(f"{float(x):.4g}")


def _fragments(ctx: Context, pool: _Pool) -> tuple[list[list[Any]], dict[str, list[int]]]:
    """Distinct fragment records and, per observation, its fragments' indices in rank order."""
    store = ctx.store
    run_id = ctx.data.run["run_id"]
    texts = {r["sha256"]: r["text"] for r in store.rows(
        "select t.sha256, t.text from fragment_texts t where t.sha256 in (select f.text_sha256 from fragments f "
        "join observations o on o.obs_id = f.obs_id where o.run_id = ?)", [run_id])}
    records: dict[tuple, int] = {}
    table: list[list[Any]] = []
    by_obs: dict[str, list[int]] = defaultdict(list)
    bits = " + ".join(f"{1 << i} * (coalesce(f.{name}, 0) != 0)" for i, name in enumerate(FRAGMENT_FLAGS))
    cursor = store.db.conn.execute(
        f"select f.obs_id, f.text_sha256, f.text, f.source_turn_ids, f.kind, f.mechanisms, f.score, {bits}, "
        "f.leak_turn_id, f.match_turn_id from fragments f join observations o on o.obs_id = f.obs_id "
        "where o.run_id = ? order by f.obs_id, f.rank", [run_id])
    for row in cursor:
        key = row[1:]
        i = records.get(key)
        if i is None:
            sha, text, src, kind, mech, score, flags, leak_turn, match_turn = key
            i = records[key] = len(table)
            table.append([pool.ix(texts.get(sha) if sha else text), [pool.ix(t) for t in json.loads(src or "[]")],
                          pool.ix(kind), [pool.ix(m) for m in json.loads(mech or "[]")], _round(score), flags,
                          pool.ix(leak_turn), pool.ix(match_turn)])
        by_obs[row[0]].append(i)
    return table, by_obs


def _judges(ctx: Context, pool: _Pool, position: dict[str, int]) -> dict[str, list[list[Any]]]:
    out: dict[str, list[list[Any]]] = defaultdict(list)
    for r in ctx.store.rows(
        "select obs_id, judge, outcome, correct, rubric, status, rationale, error from judgements "
        "where run_id = ? order by obs_id, judge", [ctx.data.run["run_id"]],
    ):
        if r["obs_id"] not in position:
            continue
        rationale = r["rationale"] or (RULES.get(r["outcome"]) if r["judge"] == "deterministic" else None)
        out[str(position[r["obs_id"]])].append([
            pool.ix(r["judge"]), pool.ix(r["outcome"]), r["correct"], r["rubric"], pool.ix(r["status"]),
            pool.ix(rationale), pool.ix(r["error"])])
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def drilldown_document(ctx: Context) -> dict[str, Any]:
    """The drill-down document (module docstring), before compression."""
    data = ctx.data
    pool = _Pool()
    conditions = list(data.conditions)
    turns: dict[str, list[list[Any]]] = defaultdict(list)
    for (traj, _), t in sorted(data.turns.items(), key=lambda kv: (kv[0][0], kv[1]["idx"])):
        turns[traj].append([pool.ix(t["turn_id"]), pool.ix(t["speaker"]), pool.ix(t["session_id"]),
                            pool.ix(t["timestamp"]), pool.ix(t["role"]), pool.ix(t["content"])])
    frags, by_obs = _fragments(ctx, pool) if ctx.store is not None else ([], {})
    probes: dict[tuple[str, str], int] = {}
    probe_rows: list[list[Any]] = []
    rows: list[list[Any]] = []
    position: dict[str, int] = {}
    for o in data.observations:
        key = (o["trajectory"], o["probe_id"])
        if key not in probes:
            probes[key] = len(probe_rows)
            probe_rows.append([pool.ix(o["trajectory"]), pool.ix(o["probe_id"]), pool.ix(o["kind"]),
                               pool.ix(o["category"]), pool.ix(o["question"])])
        flags = {name: o[name] for name in OBS_FLAGS if o.get(name)}
        position[o["obs_id"]] = len(rows)
        rows.append([
            pool.ix(o["obs_id"]), conditions.index(o["condition"]), probes[key], o["repetition"], o["checkpoint"],
            pool.ix(o["sim_time"]), pool.ix(o["expected"]), pool.ix(o["answer"]), pool.ix(o["system_answer"]),
            pool.ix(o["status"]), pool.ix(o["error"]), pool.ix(o["outcome"]), o["correct"], _round(o["f1"]),
            o["exact"], pool.ix(o.get("label_judge")), flags, _runs(by_obs.get(o["obs_id"], [])),
            [pool.ix(t) for t in json.loads(o["evidence_ids"] or "[]")], o["n_fragments"], o["context_tokens"],
        ])
    colours = condition_colors(conditions)
    return {
        "v": VERSION, "run": data.run["run_id"], "judge": data.judge, "conditions": conditions,
        "colors": [colours[c] for c in conditions], "outcome_colors": OUTCOME_COLORS,
        "frag_flags": list(FRAGMENT_FLAGS), "fields": list(OBS_FIELDS), "alarms": list(ALARMS),
        "turns": dict(sorted(turns.items())), "frags": frags, "probes": probe_rows, "obs": rows,
        "judges": _judges(ctx, pool, position) if ctx.store is not None else {}, "s": pool.strings,
    }


def encode(doc: dict[str, Any]) -> str:
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode(payload: str) -> dict[str, Any]:
    """The document back from a payload (what the report's script does in the browser)."""
    return json.loads(zlib.decompress(base64.b64decode(payload)).decode("utf-8"))


@dataclass(frozen=True)
class Drilldown:
    payload: str
    """Base64 of the zlib-compressed document (`decode`)."""
    count: int
    """Observations in it."""
    labels: tuple[str, ...]
    """Labels to filter by: the outcomes, then `unjudged` when some observation has no label."""


def build(ctx: Context) -> Drilldown:
    doc = drilldown_document(ctx)
    unjudged = any(o["outcome"] is None for o in ctx.data.observations)
    return Drilldown(encode(doc), len(doc["obs"]), OUTCOMES + (("unjudged",) if unjudged else ()))


def empty_drilldown() -> Drilldown:
    """For a report tree built without one (the section then says there is nothing to show)."""
    doc = {"v": VERSION, "run": "", "judge": "", "conditions": [], "colors": [], "outcome_colors": OUTCOME_COLORS,
           "frag_flags": list(FRAGMENT_FLAGS), "fields": list(OBS_FIELDS), "alarms": list(ALARMS), "turns": {}, "frags": [], "probes": [],
           "obs": [], "judges": {}, "s": []}
    return Drilldown(encode(doc), 0, OUTCOMES)
