"""Per-condition integrity alarms of a stored run, as stored and as the current provenance code judges
the stored contexts again (issue 17: every built-in system must raise 0 on the shared LoCoMo data).

    python scripts/integrity_alarms.py STORE [RUN_ID]

The stored counts are `lsrep.integrity.integrity_records` (what `lsrep report --format json` shows
under `integrity`). The re-judged columns apply the provenance verdicts of this checkout
(`lsrep.provenance`, with `lsrep.paraphrase`) to every stored fragment at its observation's prefix, so
a change to the detectors can be measured on a stored run without replaying the systems.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from types import SimpleNamespace

from lsrep.integrity import integrity_records
from lsrep.provenance import DERIVED_KINDS, TurnIndex, cited_positions
from lsrep.store import RunStore


def rejudge(store: RunStore, run_id: str) -> dict[str, dict[str, int]]:
    turns: dict[str, list] = defaultdict(list)
    for t in store.rows("select trajectory, turn_id, role, speaker, content from turns where run_id = ? order by "
                        "trajectory, idx", [run_id]):
        turns[t["trajectory"]].append(SimpleNamespace(**t))
    indexes = {tr: (TurnIndex.of_turns(ts), {t.turn_id: i for i, t in enumerate(ts)})
               for tr, ts in turns.items()}
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    obs = store.rows("select obs_id, condition, trajectory, prefix_len from observations where run_id = ?", [run_id])
    for o in obs:
        index, ids = indexes[o["trajectory"]]
        leaked = False
        counts = out[o["condition"]]
        for f in store.rows("select coalesce(t.text, f.text) as text, f.source_turn_ids, f.kind from fragments f "
                            "left join fragment_texts t on t.sha256 = f.text_sha256 where f.obs_id = ?", [o["obs_id"]]):
            cited = cited_positions(json.loads(f["source_turn_ids"] or "[]"), ids)
            derived = (f["kind"] or "") in DERIVED_KINDS
            v = index.verdict(f["text"], o["prefix_len"], cited, derived)
            leaked |= v.leak or max(cited, default=-1) >= o["prefix_len"]
            counts["unsourced"] += v.unsourced
            counts["misattributed"] += v.misattributed
            counts["paraphrased_leaks"] += v.leak_evidence == "tokens"
        counts["proven_leaks"] += leaked
    return {c: dict(v) for c, v in out.items()}


def main(argv: list[str]) -> int:
    store = RunStore(argv[0])
    run_id = argv[1] if len(argv) > 1 else store.rows("select run_id from runs order by rowid desc limit 1")[0]["run_id"]
    stored, again = integrity_records(store, run_id), rejudge(store, run_id)
    keys = ("proven_leaks", "unsourced", "misattributed", "duplicate_citations", "nondeterministic_checkpoints",
            "budget_violations")
    print(f"run {run_id}: stored alarms | re-judged now (leaks, unsourced, misattributed, paraphrased)")
    for cond in stored:
        s, r = stored[cond], again.get(cond, {})
        print(f"{cond:<14} " + " ".join(f"{k}={s[k]}" for k in keys) + " | " +
              " ".join(f"{k}={r.get(k, 0)}" for k in ("proven_leaks", "unsourced", "misattributed",
                                                      "paraphrased_leaks")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
