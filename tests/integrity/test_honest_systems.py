"""Every built-in system raises zero integrity alarms on the bundled campaigns and the shared
LoCoMo data: the thresholds of content provenance were tuned to this (docs/integrity.md), and
a change to a check or a system that produces a false alarm fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lsrep.integrity import INTEGRITY_KEYS, evidence_records, integrity_records
from lsrep.registry import ADAPTERS
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.thirdparty.harness import wraps_library

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CLEAN = dict.fromkeys(INTEGRITY_KEYS, 0)


def _copy(name: str, tmp_path: Path, **replace: str) -> Path:
    (tmp_path / "campaigns").mkdir()
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    for folder in ("quickstart", "thalia-fallbacks"):
        if (REPO / "campaigns" / folder).exists():
            shutil.copytree(REPO / "campaigns" / folder, tmp_path / "campaigns" / folder)
    text = (REPO / "campaigns" / name).read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    dest = tmp_path / "campaigns" / name
    dest.write_text(text)
    return dest


def _assert_clean(path: Path) -> dict[str, dict]:
    out = run_campaign(path)
    store = RunStore(out.store_path)
    records = integrity_records(store, out.run_id)
    assert records and {c: r for c, r in records.items() if r != CLEAN} == {}
    return evidence_records(store, out.run_id)


def test_showcase_every_builtin_twice_raises_no_alarm(tmp_path):
    # Two repetitions, so determinism is checked too.
    evidence = _assert_clean(_copy("showcase.toml", tmp_path, **{"repetitions = 1": "repetitions = 2"}))
    assert evidence["full-context"]["recall"] == 1.0 and evidence["null"]["recall"] == 0.0


def test_density_stress_raises_no_alarm(tmp_path):
    _assert_clean(_copy("density.toml", tmp_path))


def test_thalia_on_the_quickstart_journal_raises_no_alarm(tmp_path):
    # thalia.toml's LoCoMo trajectory is covered by the slow test below.
    text = (REPO / "campaigns" / "thalia.toml").read_text()
    start = text.index("[[trajectories]]", text.index("[[trajectories]]") + 1)
    end = text.index("[[conditions]]")
    _assert_clean(_copy("thalia.toml", tmp_path, **{text[start:end]: ""}))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["locomo.toml", "ice.toml", "exia.toml", "thalia.toml"])
def test_locomo_campaigns_raise_no_alarm(tmp_path, name):
    if not SHARED.exists():
        pytest.skip("shared data not found")
    _assert_clean(_copy(name, tmp_path, **{"../../shared/datasets/": f"{SHARED}/datasets/"}))


def test_locomo_cut_every_registered_system_twice_raises_no_alarm(tmp_path):
    # The first four sessions of a shared LoCoMo conversation, every registered system, two
    # repetitions (determinism) — the fast version of the slow test above.
    if not SHARED.exists():
        pytest.skip("shared data not found")
    from lsrep.probes.locomo import build_locomo
    from lsrep.probes.native import write_probes, write_trajectory

    (conv,) = build_locomo(SHARED / "datasets" / "locomo" / "locomo-dev7.json", ["conv-30"])
    sessions: list[str] = []
    keep = []
    for turn in conv.turns:
        if turn.session_id not in sessions:
            if len(sessions) == 4:
                break
            sessions.append(turn.session_id)
        keep.append(turn)
    ids = {t.turn_id for t in keep}
    probes = [p for p in conv.probes if set(p.named_turn_ids()) <= ids]
    trajectory = write_trajectory(tmp_path / "conv.jsonl", keep)
    probe_file = write_probes(tmp_path / "probes.jsonl", probes)
    systems = [n for n in ADAPTERS.entries() if not n.startswith("keyword") and not wraps_library(n)]
    conditions = "\n".join(f'[[conditions]]\nname = "{s}"\nsystem = "{s}"\n' for s in systems)
    campaign = tmp_path / "cut.toml"
    campaign.write_text(f'''name = "locomo-cut"
store = "store.sqlite"
repetitions = 2
schedule = "{REPO / 'schedules' / 'nightly.toml'}"
[[trajectories]]
id = "conv-30"
trajectory = "{trajectory}"
probes = "{probe_file}"
{conditions}''')
    evidence = _assert_clean(campaign)
    assert evidence["full-context"]["recall"] > 0.9
