"""Does a system's memory keep LoCoMo's speaker names? Counted from a finished (or partial) store.

    .venv/bin/python scripts/speaker_names.py runs/exia.sqlite [CONDITION ...]

Per condition and trajectory of the store's latest run: observations, answers credited correct by
the deterministic judge, returned fragments and how many name one of the conversation's two
speakers, answers naming a speaker, and correct answers naming one. The speakers come from the
shared LoCoMo file (../shared/datasets/locomo/locomo-dev7.json).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo" / "locomo-dev7.json"


def speakers(path: Path) -> dict[str, tuple[str, str]]:
    data = json.loads(path.read_text())
    return {x["sample_id"]: (x["conversation"]["speaker_a"], x["conversation"]["speaker_b"]) for x in data}


def count(store: Path, conditions: tuple[str, ...] = ()) -> dict[tuple[str, str], dict[str, int]]:
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    run = db.execute("select run_id from runs order by created_at desc limit 1").fetchone()[0]
    names = speakers(SHARED)
    texts: dict[str, list[str]] = defaultdict(list)
    for r in db.execute("select f.obs_id, coalesce(t.text, f.text) text from fragments f join observations o "
                        "using (obs_id) left join fragment_texts t on t.sha256 = f.text_sha256 where o.run_id = ?",
                        [run]):
        texts[r["obs_id"]].append(r["text"] or "")
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for o in db.execute("select o.obs_id, o.condition, o.trajectory, o.answer, j.correct from observations o left "
                        "join judgements j on j.obs_id = o.obs_id and j.judge = 'deterministic' where o.run_id = ?",
                        [run]):
        if (conditions and o["condition"] not in conditions) or o["trajectory"] not in names:
            continue
        a, b = names[o["trajectory"]]
        g = out[(o["condition"], o["trajectory"])]
        named = bool(o["answer"]) and (a in o["answer"] or b in o["answer"])
        g["observations"] += 1
        g["correct"] += bool(o["correct"])
        g["fragments"] += len(texts[o["obs_id"]])
        g["fragments_naming_a_speaker"] += sum(a in t or b in t for t in texts[o["obs_id"]])
        g["answers_naming_a_speaker"] += named
        g["correct_answers_naming_a_speaker"] += named and bool(o["correct"])
    return out


def main(argv: list[str]) -> int:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (condition, trajectory), g in sorted(count(Path(argv[0]), tuple(argv[1:])).items()):
        print(condition, trajectory, json.dumps(g))
        for k, v in g.items():
            totals[condition][k] += v
    for condition, g in totals.items():
        print("total", condition, json.dumps(g))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
