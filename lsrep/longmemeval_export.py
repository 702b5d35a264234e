"""A stored LongMemEval run in the official file formats, and its official metric tables.

    paths = export_longmemeval(store, run_id, out_dir)     # out_dir/<condition>/...

Per condition, in ``out_dir/<condition>/``:

- ``hypotheses.jsonl``: ``{"question_id", "hypothesis"}`` per question, in file order
  (the input of the official ``evaluate_qa.py``); a failed observation has hypothesis "".
- ``hypotheses.jsonl.eval-results-<judge>`` for each `longmemeval` (official) model
  judge that ran: each line the hypothesis entry plus ``autoeval_label``
  ``{"model", "label"}``, serialised as ``evaluate_qa.py`` writes it (the official
  ``print_qa_metrics.py`` asserts the model is ``gpt-4o-2024-08-06``: give the judge
  endpoint that model name, or that one line of the official script fails).
- ``retrieval.jsonl``: per question ``question_id``, ``question_type``, ``question``,
  ``answer`` and ``retrieval_results`` ``{query, ranked_items: [{corpus_id, text,
  timestamp}], metrics: {session, turn}}`` — the official retrieval log's fields
  (the haystack itself is left out). Texts are read back from the input file.
- ``metrics.json``: the official QA metrics (from the official judge when one ran,
  else the deterministic one, named in ``qa_judge``) and retrieval averages.

Two official retrieval averages exist. ``print_retrieval_metrics.py`` (the script
that reads retrieval logs) leaves out ``_abs`` questions only: that is ``retrieval``,
the one LSREP prints and reports. ``run_retrieval.py``'s own summary also leaves out
questions with no user turn marked ``has_answer`` (answers only in assistant turns,
where the turn-level corpus has no correct item): that is ``retrieval_user_target``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from lsrep.errors import InputError, LsrepError
from lsrep.longmemeval_metrics import (
    OFFICIAL_TYPES,
    SESSION_SHOWN,
    TURN_SHOWN,
    average_retrieval,
    fmt,
    qa_metrics,
    turn_corpus_id,
)
from lsrep.store import RunStore

DETERMINISTIC = "deterministic"


def official_judges(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The campaign's official LongMemEval model judges (name and endpoint model)."""
    return [j for j in manifest.get("campaign", {}).get("judges", ()) if j.get("kind") == "longmemeval"]


def qa_judge_of(manifest: dict[str, Any]) -> str:
    judges = official_judges(manifest)
    return judges[0]["name"] if judges else DETERMINISTIC


def _rows(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    return store.rows(
        "select q.*, o.answer as hypothesis, o.status, o.question, o.sim_time from lme_questions q "
        "join observations o using (obs_id) where q.run_id = ? order by q.condition, q.position", [run_id])


def _labels(store: RunStore, run_id: str, judge: str) -> dict[str, dict[str, Any]]:
    return {r["obs_id"]: r for r in store.rows(
        "select obs_id, correct, status from judgements where run_id = ? and judge = ?", [run_id, judge])}


def metrics_by_condition(store: RunStore, run_id: str) -> dict[str, dict[str, Any]]:
    """Official QA and retrieval metrics per condition, in the campaign's condition order."""
    run = store.run(run_id)
    manifest = run["manifest"]
    judge = qa_judge_of(manifest)
    labels = _labels(store, run_id, judge)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _rows(store, run_id):
        grouped[row["condition"]].append(row)
    declared = [c["name"] for c in manifest.get("campaign", {}).get("conditions", [])]
    out = {}
    for cond in [c for c in declared if c in grouped] + sorted(set(grouped) - set(declared)):
        rows = grouped[cond]
        triples, unlabelled = [], 0
        for r in rows:
            label = labels.get(r["obs_id"])
            if label is None or label["status"] != "ok" or label["correct"] is None:
                unlabelled += 1
                continue
            triples.append((r["question_id"], r["question_type"], bool(label["correct"])))
        qa = qa_metrics(triples)
        retrieval = average_retrieval((r["question_id"], json.loads(r["metrics"])) for r in rows)
        targeted = average_retrieval((r["question_id"], json.loads(r["metrics"])) for r in rows if r["user_target"])
        out[cond] = {"qa_judge": judge, "official_judge": judge != DETERMINISTIC, "unlabelled": unlabelled,
                     **qa, "retrieval": retrieval, "retrieval_user_target": targeted}
    return out


def print_tables(store: RunStore, run_id: str) -> None:
    """The official QA table and retrieval table per condition."""
    metrics = metrics_by_condition(store, run_id)
    if not metrics:
        return
    judge = next(iter(metrics.values()))["qa_judge"]
    print()
    print(qa_judge_note(judge))
    width = max(len(c) for c in metrics) + 2
    short = {"single-session-user": "ss-user", "single-session-preference": "ss-pref",
             "single-session-assistant": "ss-asst", "multi-session": "multi", "temporal-reasoning": "temporal",
             "knowledge-update": "k-update"}
    header = f"{'condition':<{width}}" + "".join(f"{short[t]:>15}" for t in OFFICIAL_TYPES) + \
        f"{'task-avg':>10}{'overall':>10}{'abstention':>16}"
    print(header)
    print("-" * len(header))
    for cond, m in metrics.items():
        cells = "".join(f"{fmt(m['per_type'][t]['accuracy']) + ' (' + str(m['per_type'][t]['n']) + ')':>15}"
                        for t in OFFICIAL_TYPES)
        ab = m["abstention"]
        print(f"{cond:<{width}}{cells}{fmt(m['task_averaged']):>10}{fmt(m['overall']):>10}"
              f"{fmt(ab['accuracy']) + ' (' + str(ab['n']) + ')':>16}")
    print("per type: accuracy (questions); _abs questions count in their type and in abstention.")
    print()
    n = next(iter(metrics.values()))["retrieval"]["n"]
    print(f"retrieval (official definitions as print_retrieval_metrics.py; ranking = the order each system "
          f"returned its context; {n} non-_abs questions):")
    names = [f"session {x}" for x in SESSION_SHOWN] + [f"turn {x}" for x in TURN_SHOWN]
    header = f"{'condition':<{width}}" + "".join(f"{x:>22}" for x in names)
    print(header)
    print("-" * len(header))
    for cond, m in metrics.items():
        r = m["retrieval"]
        values = [r["session"].get(x) for x in SESSION_SHOWN] + [r["turn"].get(x) for x in TURN_SHOWN]
        print(f"{cond:<{width}}" + "".join(f"{fmt(v):>22}" for v in values))
    first = next(iter(metrics.values()))
    print(f"({first['retrieval']['n'] - first['retrieval_user_target']['n']} of them have no has_answer user turn: "
          "recall_all 1.0, ndcg 0 by the official definitions; run_retrieval.py's own summary leaves them out "
          "— metrics.json `retrieval_user_target`.)")


def qa_judge_note(judge: str) -> str:
    if judge == DETERMINISTIC:
        return ("QA metrics (LongMemEval definitions) from the DETERMINISTIC judge — not LongMemEval's official "
                "judge: it credits an answer that contains the reference (an answer written 'X (or Y)' counts "
                "X and Y as alternatives) and an abstention on _abs questions. For the official judge's numbers "
                "configure a `longmemeval` judge with an endpoint (the bundled campaign: set "
                "LSREP_LME_JUDGE_BASE_URL).")
    return f"QA metrics (LongMemEval definitions) from the official LongMemEval judge `{judge}`:"


def _data_file(manifest: dict[str, Any], data: Path | None, base: Path | None = None) -> Path:
    """The input file: `--data`, else the manifest's path (relative to the campaign file's folder)."""
    entry = manifest.get("inputs", {}).get("longmemeval") or {}
    path = Path(data) if data is not None else Path(entry.get("path", ""))
    if data is None and not path.is_absolute() and base is not None:
        path = base / path
    if not path.is_file():
        raise InputError(path, "the LongMemEval input file is needed for the retrieval texts (pass --data PATH)")
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    if entry.get("sha256") and digest.hexdigest() != entry["sha256"]:
        raise InputError(path, f"not the file this run read (sha256 {digest.hexdigest()[:12]}..., the run "
                               f"recorded {entry['sha256'][:12]}...)")
    return path


def _corpus_texts(record: dict[str, Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for sid, session, date in zip(record["haystack_session_ids"], record["haystack_sessions"],
                                  record["haystack_dates"], strict=True):
        for i, turn in enumerate(session):
            if turn["role"] == "user":
                out[turn_corpus_id(str(sid), i, turn.get("has_answer") is True)] = (turn["content"], date)
    return out


def export_longmemeval(store: RunStore, run_id: str, out_dir: Path | str, data: Path | None = None) -> list[Path]:
    """Write the official-format files of every condition; returns the paths written."""
    from lsrep.registry import SOURCES

    iter_json_records = SOURCES.load("longmemeval-records")  # the file's records, streamed (lsrep.probes)

    run = store.run(run_id)
    manifest = run["manifest"]
    if manifest.get("diagnostic") != "longmemeval":
        raise LsrepError(f"run {run_id} is not a LongMemEval diagnostic (run it with `lsrep longmemeval`)")
    rows = _rows(store, run_id)
    if not rows:
        raise LsrepError(f"run {run_id} has no LongMemEval rows (a store from before LongMemEval metrics?)")
    path = _data_file(manifest, data, Path(run["campaign_path"]).parent if run.get("campaign_path") else None)
    out = Path(out_dir)
    by_cond: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_cond[row["condition"]].append(row)
    judges = [(j["name"], (j.get("endpoint") or {}).get("model"), _labels(store, run_id, j["name"]))
              for j in official_judges(manifest)]
    metrics = metrics_by_condition(store, run_id)
    written: list[Path] = []
    for cond, crow in by_cond.items():
        folder = out / cond
        folder.mkdir(parents=True, exist_ok=True)
        hyp = folder / "hypotheses.jsonl"
        with hyp.open("w", encoding="utf-8") as fh:
            for r in crow:
                fh.write(json.dumps(_hypothesis(r)) + "\n")
        written.append(hyp)
        for name, model, labels in judges:
            target = folder / f"hypotheses.jsonl.eval-results-{name}"
            with target.open("w", encoding="utf-8") as fh:
                for r in crow:
                    label = labels.get(r["obs_id"])
                    if label is None or label["status"] != "ok" or label["correct"] is None:
                        continue  # no label was given; nothing is imputed
                    entry = {**_hypothesis(r), "autoeval_label": {"model": model, "label": bool(label["correct"])}}
                    fh.write(json.dumps(entry) + "\n")
            written.append(target)
        target = folder / "metrics.json"
        target.write_text(json.dumps(metrics[cond], indent=2) + "\n", encoding="utf-8")
        written.append(target)

    # Retrieval logs: one pass over the input file, every condition in step.
    wanted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        wanted[row["question_id"]].append(row)
    handles = {cond: (out / cond / "retrieval.jsonl").open("w", encoding="utf-8") for cond in by_cond}
    lines: dict[str, list[tuple[int, str]]] = defaultdict(list)
    try:
        for _, _, record in iter_json_records(path):
            qrows = wanted.get(str(record.get("question_id")))
            if not qrows:
                continue
            texts = _corpus_texts(record)
            for r in qrows:
                entry = {
                    "question_id": r["question_id"], "question_type": r["question_type"],
                    "question": record["question"], "answer": record["answer"],
                    "retrieval_results": {
                        "query": record["question"],
                        "ranked_items": [{"corpus_id": cid, "text": texts[cid][0], "timestamp": texts[cid][1]}
                                         for cid in json.loads(r["ranked"])],
                        "metrics": json.loads(r["metrics"]),
                    },
                }
                lines[r["condition"]].append((r["position"], json.dumps(entry)))
            # Flush in file order as we go, so memory holds about one question per condition.
            for cond, pending in lines.items():
                for _, line in sorted(pending):
                    handles[cond].write(line + "\n")
                pending.clear()
    finally:
        for fh in handles.values():
            fh.close()
    written.extend(out / cond / "retrieval.jsonl" for cond in by_cond)
    return written


def _hypothesis(row: dict[str, Any]) -> dict[str, Any]:
    return {"question_id": row["question_id"], "hypothesis": row["hypothesis"] if row["hypothesis"] is not None else ""}
