"""Every adapter of the leak zoo raises the campaign alarm that names its defect; an honest
system raises none. The runs are real campaigns through the engine and the SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsrep.integrity import INTEGRITY_KEYS, evidence_records, integrity_records
from lsrep.runner import run_campaign
from lsrep.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "campaigns" / "quickstart"
ZOO = "tests.integrity.zoo"

# condition -> (adapter class, the alarm it must raise)
CASES = {
    "future-read": ("FutureReadAdapter", "proven_leaks"),
    "laundered": ("LaunderedLeakAdapter", "proven_leaks"),
    "smuggling-summary": ("SmugglingSummaryAdapter", "proven_leaks"),
    "duplicate-ingest": ("DuplicateIngestAdapter", "duplicate_citations"),
    "retry-duplicate": ("RetryDuplicateAdapter", "duplicate_citations"),
    "budget-cheat": ("BudgetCheatAdapter", "budget_violations"),
    "nondeterministic": ("NondeterministicAdapter", "nondeterministic_checkpoints"),
    "unsourced": ("UnsourcedAdapter", "unsourced"),
    "misattributed": ("MisattributedAdapter", "misattributed"),
    "paraphrasing": ("ParaphrasingLeakAdapter", "proven_leaks"),
    "reordering": ("ReorderingLeakAdapter", "proven_leaks"),
}
FILE_OPTIONS = {"FutureReadAdapter", "LaunderedLeakAdapter", "SmugglingSummaryAdapter", "ParaphrasingLeakAdapter",
                "ReorderingLeakAdapter"}


def zoo_campaign(folder: Path, cases: dict[str, tuple[str, str]], *, budget: int | None = 400,
                 enforce: bool = False, repetitions: int = 2) -> Path:
    lines = [
        'name = "zoo"', f"repetitions = {repetitions}", 'store = "zoo.sqlite"',
        # In-process: the cheats read the trajectory file, which the adapter host hides from them.
        'adapter_host = "in-process"',
        f'schedule = "{ROOT / "schedules" / "session-end.toml"}"',
    ]
    if budget is not None:
        lines.append(f"retrieval_budget = {budget}")
    if enforce:
        lines.append("enforce_budget = true")
    lines += ["[[trajectories]]", 'id = "maya"', f'trajectory = "{QUICK / "trajectory.jsonl"}"',
              f'probes = "{QUICK / "probes.jsonl"}"']
    lines += ["[[conditions]]", 'name = "honest"', 'system = "full-context"']
    for name, (cls, _) in cases.items():
        lines += ["[[conditions]]", f'name = "{name}"', f'system = "{ZOO}:{cls}"']
        if cls in FILE_OPTIONS:
            lines.append(f'options = {{ trajectory_path = "{QUICK / "trajectory.jsonl"}" }}')
    path = folder / "campaign.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def zoo_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zoo")
    outcome = run_campaign(zoo_campaign(folder, CASES))
    store = RunStore(outcome.store_path)
    return store, outcome.run_id


@pytest.mark.parametrize("condition", sorted(CASES))
def test_each_zoo_adapter_raises_its_alarm(zoo_run, condition):
    store, run_id = zoo_run
    record = integrity_records(store, run_id)[condition]
    alarm = CASES[condition][1]
    assert record[alarm] > 0, record


def test_honest_control_raises_no_alarm(zoo_run):
    store, run_id = zoo_run
    record = integrity_records(store, run_id)["honest"]
    assert record == dict.fromkeys(INTEGRITY_KEYS, 0)


def test_laundered_leak_is_caught_by_content_not_citation(zoo_run):
    # Every fragment of the laundered adapter cites a replayed turn, so the citation check alone
    # finds nothing; the leak is found from the text, and the fragment is also misattributed.
    store, run_id = zoo_run
    rows = store.rows(
        "select f.leak_turn_id, f.source_turn_ids, f.misattributed, o.prefix_len from fragments f "
        "join observations o on o.obs_id = f.obs_id where o.run_id = ? and o.condition = 'laundered' "
        "and f.content_leak = 1", [run_id])
    assert rows
    turns = {r["turn_id"]: r["idx"] for r in store.rows(
        "select turn_id, idx from turns where run_id = ?", [run_id])}
    for r in rows:
        cited = json.loads(r["source_turn_ids"])
        assert all(turns[t] < r["prefix_len"] for t in cited)
        assert turns[r["leak_turn_id"]] >= r["prefix_len"]
    # Misattributed too, wherever the copied text is long enough to judge (a full-length shingle).
    assert sum(r["misattributed"] for r in rows) > len(rows) // 2


@pytest.mark.parametrize("condition", ["paraphrasing", "reordering"])
def test_reworded_leaks_are_proven_by_distinctive_tokens(zoo_run, condition):
    # No copied word triple survives rewording or reordering: the leak is proven by the later
    # turn's distinctive words, and that turn is not yet replayed.
    store, run_id = zoo_run
    rows = store.rows(
        "select f.leak_turn_id, o.prefix_len from fragments f join observations o on o.obs_id = f.obs_id "
        "where o.run_id = ? and o.condition = ? and f.content_leak = 1", [run_id, condition])
    turns = {r["turn_id"]: r["idx"] for r in store.rows("select turn_id, idx from turns where run_id = ?", [run_id])}
    assert rows and all(turns[r["leak_turn_id"]] >= r["prefix_len"] for r in rows)


def test_smuggled_summary_is_not_excused_as_derived(zoo_run):
    store, run_id = zoo_run
    rows = store.rows(
        "select f.kind, f.unsourced, f.content_leak from fragments f join observations o on o.obs_id = f.obs_id "
        "where o.run_id = ? and o.condition = 'smuggling-summary'", [run_id])
    assert {r["kind"] for r in rows} == {"summary"}
    assert not any(r["unsourced"] for r in rows)  # derived text is not "unsourced"...
    assert any(r["content_leak"] for r in rows)    # ...but its future n-grams still count


def test_the_only_alarms_are_the_named_ones(zoo_run):
    # A check that fires everywhere would pass the test above; each zoo adapter must raise
    # nothing beyond its own defect (copied future text matches no cited
    # turn, so a laundered or smuggled leak is misattributed too).
    store, run_id = zoo_run
    records = integrity_records(store, run_id)
    # A copied future turn too short to prove a leak still matches no replayed turn: unsourced.
    allowed = {"laundered": {"misattributed", "unsourced"}, "smuggling-summary": {"misattributed"},
               "future-read": {"unsourced"}, "reordering": {"unsourced"}}
    for name, (_, alarm) in CASES.items():
        extra = {k for k, v in records[name].items() if v and k != alarm} - allowed.get(name, set())
        assert not extra, (name, records[name])


def test_content_recall_cannot_be_raised_by_over_citing(tmp_path):
    # A system citing every evidence turn while returning unrelated text gets no evidence recall:
    # neither by content nor by citation (a citation counts only where the text carries the turn),
    # and its citation precision is 0.
    cases = {"over-citer": ("OverCitingAdapter", "misattributed")}
    outcome = run_campaign(zoo_campaign(tmp_path, cases, budget=None, repetitions=1))
    store = RunStore(outcome.store_path)
    obs = store.rows("select evidence_recall, content_recall, citation_precision from observations where "
                     "run_id = ? and condition = 'over-citer' and content_recall is not null", [outcome.run_id])
    assert obs and all(o["evidence_recall"] == 0.0 for o in obs)
    assert all(o["content_recall"] == 0.0 for o in obs)
    assert all(o["citation_precision"] == 0.0 for o in obs)
    assert evidence_records(store, outcome.run_id)["honest"]["recall"] == 1.0


def test_enforced_budget_truncates_and_records(tmp_path):
    outcome = run_campaign(zoo_campaign(tmp_path, {"budget-cheat": CASES["budget-cheat"]}, budget=120,
                                        enforce=True, repetitions=1))
    store = RunStore(outcome.store_path)
    rows = store.rows("select condition, context_tokens, budget_truncated_tokens, budget_violation, "
                      "budget_exceeded from observations where run_id = ?", [outcome.run_id])
    cheat = [r for r in rows if r["condition"] == "budget-cheat"]
    assert all(r["context_tokens"] <= 120 for r in rows)
    assert any(r["budget_truncated_tokens"] > 0 for r in cheat)
    # The violation is judged on what the system returned, not on what the harness cut it to.
    assert any(r["budget_violation"] for r in cheat)
    assert not any(r["budget_violation"] for r in rows if r["condition"] == "honest")
    manifest = store.run(outcome.run_id)["manifest"]
    assert manifest["conditions"]["budget-cheat"]["honours_budget"] is True
    assert manifest["conditions"]["honest"]["honours_budget"] is False


def test_report_json_and_show_carry_the_alarms(zoo_run, capsys):
    from lsrep.reports.build import render
    from lsrep.reports.model import build_report

    from lsrep.summary import print_summary

    store, run_id = zoo_run
    report = json.loads(render(build_report(store, run_id, boot=50), "json"))
    metrics = {c["name"]: c for c in report["conditions"]}
    assert set(metrics["honest"]["integrity"]) == set(INTEGRITY_KEYS)
    assert metrics["future-read"]["integrity"]["proven_leaks"] > 0
    assert metrics["honest"]["integrity"] == dict.fromkeys(INTEGRITY_KEYS, 0)
    assert set(metrics["honest"]["evidence"]) >= {"recall", "answer_in_context", "stale_in_context",
                                                  "future_in_context"}
    assert metrics["honest"]["evidence"]["recall"] == 1.0
    fidelity = next(s for s in report["report"]["sections"] if s["id"] == "fidelity")
    assert any(b["type"] == "callout" and "integrity alarm" in b["title"] for b in fidelity["blocks"])
    print_summary(store, run_id)
    out = capsys.readouterr().out
    assert "integrity alarm: future-read: proven_leaks" in out
    assert "integrity alarm: honest" not in out


def test_enforce_budget_without_a_budget_is_refused(tmp_path):
    from lsrep.errors import LsrepError

    path = zoo_campaign(tmp_path, {}, budget=None, enforce=True, repetitions=1)
    with pytest.raises(LsrepError, match="enforce_budget"):
        run_campaign(path)
    assert not (tmp_path / "zoo.sqlite").exists()
