"""Campaign trajectories from native files, LoCoMo (in memory) and the seeded generator."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lsrep.errors import InputError
from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[2]


def _copy_campaign(name: str, tmp_path: Path) -> Path:
    (tmp_path / "campaigns").mkdir()
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    dest = tmp_path / "campaigns" / name
    shutil.copy(REPO / "campaigns" / name, dest)
    return dest


def test_density_stress_unbudgeted_prompt_overflows_while_ice_stays_in_budget(tmp_path):
    campaign = _copy_campaign("density.toml", tmp_path)
    out = run_campaign(campaign)
    store = RunStore(out.store_path)
    rows = {r["condition"]: r for r in store.rows(
        "select condition, avg(prompt_tokens) as prompt, max(prompt_tokens) as worst, "
        "sum(within_limit = 0) as over, sum(status = 'error') as errors, count(*) as n "
        "from observations where run_id = ? group by condition", [out.run_id])}
    window = 32000
    assert rows["vector-rag"]["prompt"] > 2 * window
    assert rows["vector-rag"]["over"] == rows["vector-rag"]["errors"] > 0.8 * rows["vector-rag"]["n"]
    assert rows["ice"]["worst"] <= window and rows["ice"]["errors"] == 0
    failures = store.rows("select message from failures where run_id = ? and phase = 'answer'", [out.run_id])
    assert failures and all("prompt_over_context_window" in f["message"] for f in failures)


def test_generate_source_is_deterministic_and_validated(tmp_path):
    campaign = tmp_path / "gen.toml"
    campaign.write_text('''name = "gen"
store = "s.sqlite"
[[trajectories]]
id = "p1"
generate = { seed = 5, sessions = 4, turns_per_session = 6 }
[[conditions]]
name = "full-context"
system = "full-context"
''')
    a = run_campaign(campaign, fresh=True)
    b = run_campaign(campaign, fresh=True)
    store = RunStore(a.store_path)
    q = "select probe_id, checkpoint, answer from observations where run_id = ? order by 1, 2"
    assert store.rows(q, [a.run_id]) == store.rows(q, [b.run_id]) != []
    campaign.write_text(campaign.read_text().replace("sessions = 4", "sessions = 0"))
    with pytest.raises(InputError, match="sessions"):
        run_campaign(campaign)


def test_locomo_source_needs_exactly_one_source(tmp_path, shared):
    campaign = tmp_path / "bad.toml"
    campaign.write_text(f'''name = "bad"
[[trajectories]]
id = "conv-26"
locomo = "{shared / 'datasets/locomo/locomo-dev7.json'}"
trajectory = "x.jsonl"
[[conditions]]
name = "null"
system = "null"
''')
    with pytest.raises(InputError, match="exactly one source"):
        run_campaign(campaign)
