"""The fidelity audit end to end through the CLI: `lsrep run` on a small campaign, then the
`fidelity` list of `lsrep report --format json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

TURNS = [
    ("s01", "user", "Hi, I'm Ana. I live in Lisbon and I work as a baker."),
    ("s01", "assistant", "Nice to meet you, Ana."),
    ("s01", "user", "Always answer in bullet points."),
    ("s01", "assistant", "Understood."),
    ("s02", "user", "My sister Rita moved to Porto last week."),
    ("s02", "assistant", "That's exciting news for Rita."),
    ("s02", "user", "I adopted a cat named Miso."),
    ("s02", "assistant", "Miso is a lovely name."),
]
PROBES = [
    ("format", "How should you format answers?", "bullet points", "t0003"),
    ("city", "Which city does Ana live in?", "Lisbon", "t0001"),
    ("cat", "What is the name of Ana's cat?", "Miso", "t0007"),
    ("router", "How do I reset the Zephyr router?", "hold the button", "t0001"),
]
DOCUMENT = "Zephyr router manual. To reset the Zephyr router, hold the button for ten seconds.\n"


def write_campaign(root: Path, conditions: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, (session, role, text) in enumerate(TURNS, start=1):
        lines.append(json.dumps({"turn_id": f"t{n:04d}", "session_id": session, "role": role,
                                 "speaker": "Ana" if role == "user" else "Bot",
                                 "timestamp": f"2026-03-0{1 + (session == 's02')}T09:{n:02d}:00+00:00",
                                 "content": text}))
    (root / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    probes = [json.dumps({"probe_id": pid, "question": q, "kind": "current", "category": "single-hop",
                          "references": [{"answer": a, "valid_from": ev, "evidence": [ev]}]})
              for pid, q, a, ev in PROBES]
    (root / "probes.jsonl").write_text("\n".join(probes) + "\n")
    (root / "manual.txt").write_text(DOCUMENT)
    (root / "campaign.toml").write_text(f'''
name = "fidelity-cli"
seed = 1
store = "runs.sqlite"

[schedule]
name = "session-end"
[schedule.checkpoints]
at = ["session_end"]

[[trajectories]]
id = "ana"
trajectory = "trajectory.jsonl"
probes = "probes.jsonl"

{conditions}
''')
    return root / "campaign.toml"


def run_and_audit(campaign: Path) -> dict[tuple[str, str], dict]:
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "lsrep.cli", *args], capture_output=True, text=True,
                              cwd=REPO)

    res = cli("run", str(campaign), "--quiet", "--executor", "in-process")
    assert res.returncode == 0, res.stderr
    out = campaign.parent / "report.json"
    res = cli("report", "latest", "--store", str(campaign.parent / "runs.sqlite"), "--format", "json",
              "-o", str(out))
    assert res.returncode == 0, res.stderr
    records = json.loads(out.read_text())["fidelity"]
    for r in records:
        assert {"condition", "system", "mechanism", "stages", "verdict", "evidence"} <= set(r)
    return {(r["condition"], r["mechanism"]): r for r in records}


def verdicts(audit: dict, condition: str, *, contrast: bool = True) -> dict[str, str]:
    """Verdicts of one condition; `contrast=False` folds the ablation refinements into `exercised`."""
    fold = {} if contrast else {"contributing": "exercised", "exercised_no_effect": "exercised"}
    return {m: fold.get(r["verdict"], r["verdict"]) for (c, m), r in audit.items() if c == condition}


def test_planted_defects_are_caught_and_honest_neighbours_are_not(tmp_path):
    campaign = write_campaign(tmp_path / "planted", '''
[[conditions]]
name = "planted"
system = "tests.fidelity.planted:PlantedAdapter"

[[conditions]]
name = "planted-no-retrieve"
system = "tests.fidelity.planted:PlantedAdapter"
disable = ["planted.retrieve"]
''')
    audit = run_and_audit(campaign)
    got = verdicts(audit, "planted")
    # This adapter ignores `disable`: switched off by the condition yet running is positive evidence.
    assert audit[("planted-no-retrieve", "planted.retrieve")]["verdict"] == "defective"
    assert "switched off" in audit[("planted-no-retrieve", "planted.retrieve")]["evidence"]
    assert got == {
        # Its "ablation" changed nothing (the adapter ignores `disable`): no detected effect.
        "planted.retrieve": "exercised_no_effect", "planted.rerank": "exercised", "planted.cap": "idle",
        "planted.fallback": "never_exercised", "planted.expand": "disabled", "planted.quiet": "exercised",
        "planted.never_runs": "defective", "planted.hollow": "defective",
    }
    assert "never ran, no reason" in audit[("planted", "planted.never_runs")]["evidence"]
    assert "never produced output" in audit[("planted", "planted.hollow")]["evidence"]
    # One source of in_prompt: the harness credits the producer, not the pass-through beside it.
    assert audit[("planted", "planted.retrieve")]["stages"]["in_prompt"] > 0
    assert "in_prompt" not in audit[("planted", "planted.rerank")]["stages"]
    assert audit[("planted", "planted.rerank")]["stages"]["reported_in_prompt"] > 0


ICE_CONDITIONS = '''
[[conditions]]
name = "ice"
system = "ice"

[[conditions]]
name = "ice-no-lexical"
system = "ice"
disable = ["ice.leg.episodic_lexical"]

[[conditions]]
name = "ice-procedural-defect"
system = "ice"
options = {{ seed_defects = {{ procedural_leg = true }} }}

[[conditions]]
name = "ice-docs"
system = "ice"
options = {{ documents = ["{doc}"] }}

[[conditions]]
name = "ice-docs-defect"
system = "ice"
options = {{ documents = ["{doc}"], seed_defects = {{ document_leg = true }} }}
'''


def test_ice_seed_defect_flags_flip_exactly_their_legs(tmp_path):
    root = tmp_path / "ice"
    campaign = write_campaign(root, ICE_CONDITIONS.format(doc=root / "manual.txt"))
    audit = run_and_audit(campaign)
    base, proc = verdicts(audit, "ice", contrast=False), verdicts(audit, "ice-procedural-defect")
    docs, docs_bad = verdicts(audit, "ice-docs"), verdicts(audit, "ice-docs-defect")
    # Off: the legs work and reach the prompt. On: the seed's audit ("defective").
    assert base["ice.leg.procedural"] == "exercised" and proc["ice.leg.procedural"] == "defective"
    assert docs["ice.leg.document"] == "exercised" and docs_bad["ice.leg.document"] == "defective"
    assert base["ice.leg.document"] == "never_exercised"  # no documents: seed-systems I-2
    flipped = {m for m in base if base[m] != proc[m]}
    assert flipped == {"ice.leg.procedural"}
    flipped = {m for m in docs if docs[m] != docs_bad[m]}
    assert flipped == {"ice.leg.document"}
    assert not [m for m, v in base.items() if v == "defective"]
    assert not [m for m, v in docs.items() if v == "defective"]
    # The ablation pair: the switched-off leg is disabled there, and its record in the base condition
    # carries the paired change shares with cluster intervals and the accuracy effect.
    assert audit[("ice-no-lexical", "ice.leg.episodic_lexical")]["verdict"] == "disabled"
    lex = audit[("ice", "ice.leg.episodic_lexical")]
    assert lex["ablation"] == "ice-no-lexical"
    for key in ("contexts_changed", "answers_changed", "accuracy_effect"):
        est = lex[key]
        assert est["clusters"] == len(PROBES) and est["n"] >= est["clusters"], key  # pairs, clustered by probe
        assert len(est["interval"]) == 2 and est["unit"], key
        assert est["interval"][0] <= est["value"] <= est["interval"][1], key
    beyond = all(lex[k]["value"] >= lex["contribution_threshold"] and lex[k]["interval"][0] > 0
                 for k in ("contexts_changed", "answers_changed"))
    assert lex["verdict"] == ("contributing" if beyond else "exercised_no_effect")
    assert isinstance(lex["significant_accuracy_effect"], bool)


EXIA_FIXES = ("primary_only_notes", "phase2_ceiling", "trail_date_filter", "search_expiry_filter",
              "strict_citations", "journal_only_admitted", "cache_key_pages", "queue_when_busy",
              "enforce_privacy", "summary_lock")


@pytest.mark.slow
def test_exia_fix_flags_and_ice_extraction_duplicates_flip_no_verdict(tmp_path):
    # EXIA SEED's defects (E-1..E-16) and ICE's non-idempotent extraction are behaviours, not
    # mechanisms that fail to run: the seeds' audits list no verdict for them, so neither the seed
    # code path nor its repair may turn any mechanism defective, never exercised or disabled.
    conditions = ['[[conditions]]\nname = "exia"\nsystem = "exia-seed"\noptions = { phase = 2 }\n']
    conditions += [f'[[conditions]]\nname = "exia-{flag}"\nsystem = "exia-seed"\n'
                   f'options = {{ phase = 2, fix_{flag} = true }}\n' for flag in EXIA_FIXES]
    conditions += ['[[conditions]]\nname = "ice"\nsystem = "ice"\n',
                   '[[conditions]]\nname = "ice-dup"\nsystem = "ice"\n'
                   'options = { seed_defects = { extraction_duplicates = true } }\n']
    audit = run_and_audit(write_campaign(tmp_path / "flags", "\n".join(conditions)))
    base = verdicts(audit, "exia")
    assert base and "defective" not in base.values()
    for flag in EXIA_FIXES:
        assert verdicts(audit, f"exia-{flag}") == base, flag
    assert verdicts(audit, "ice-dup") == verdicts(audit, "ice")
