"""Fragment text is stored once per distinct content: a huge turn returned by every probe costs
about its own size again, not once per observation."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lsrep.runner import run_campaign
from lsrep.store import RunStore

CITY_PROBES = ["Which city does the user live in?", "Where is home?", "What city now?", "Where does the user live?"]


def _big_campaign(root: Path, size: int) -> tuple[Path, str]:
    rng = random.Random(1)
    words = "alpha beta gamma delta river city nurse harbour lantern orchard".split()
    parts, n = [], 0
    while n < size:
        parts.append(f"{rng.choice(words)}{len(parts) % 97}")
        n += len(parts[-1]) + 1
    big = " ".join(parts)
    turns = [
        ("t1", "s1", "2026-01-01T09:00:00+00:00", "I live in Lisbon."),
        ("t2", "s1", "2026-01-01T09:01:00+00:00", big),
        ("t3", "s2", "2026-01-02T09:00:00+00:00", "I moved to Porto."),
        ("t4", "s3", "2026-01-03T09:00:00+00:00", "Still in Porto."),
    ]
    (root / "t.jsonl").write_text("\n".join(json.dumps(
        {"turn_id": t, "session_id": s, "timestamp": ts, "role": "user", "content": c}) for t, s, ts, c in turns))
    (root / "p.jsonl").write_text("\n".join(json.dumps(
        {"probe_id": f"p{i}", "question": q, "kind": "current",
         "references": [{"answer": "Lisbon", "valid_from": "t1", "valid_until": "t3"},
                        {"answer": "Porto", "valid_from": "t3"}]}) for i, q in enumerate(CITY_PROBES)))
    campaign = root / "c.toml"
    campaign.write_text('''name = "big"
store = "big.sqlite"
schedule = { checkpoints = { at = ["session_end"] } }
[[trajectories]]
id = "big"
trajectory = "t.jsonl"
probes = "p.jsonl"
[[conditions]]
name = "full-context"
system = "full-context"
options = { context_limit = 100000000 }
[answerer]
kind = "extractive"
context_window = 100000000
''')
    return campaign, big


def _check(tmp_path: Path, size: int) -> None:
    campaign, big = _big_campaign(tmp_path, size)
    out = run_campaign(campaign)
    store = RunStore(out.store_path)
    n_big = store.rows("select count(*) n from fragments f join fragment_texts t on t.sha256 = f.text_sha256 "
                       "where length(t.text) >= ?", [len(big)])[0]["n"]
    assert n_big >= 12, "the big turn must be returned by every probe at every checkpoint for this to test anything"
    assert store.rows("select count(*) n from fragment_texts where length(text) >= ?", [len(big)])[0]["n"] == 1
    obs = store.rows("select obs_id from observations where run_id = ? order by obs_id", [out.run_id])
    texts = [f["text"] for f in store.fragment_rows(obs[-1]["obs_id"])]
    assert any(big in t for t in texts)
    store.db.conn.execute("pragma wal_checkpoint(truncate)")
    # The turn itself and one fragment copy, plus a little: well under one copy per observation.
    assert out.store_path.stat().st_size < 2.5 * len(big) + 2_000_000


def test_big_turn_stored_once_small(tmp_path):
    _check(tmp_path, 400_000)


@pytest.mark.slow
def test_30_mb_turn_keeps_the_store_small(tmp_path):
    _check(tmp_path, 30_000_000)
