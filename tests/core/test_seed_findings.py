"""Seed findings reproduced from the CLI (campaigns/seed-findings/, docs/seed-findings.md)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from lsrep.cli import main

REPO = Path(__file__).resolve().parents[2]
FINDINGS = REPO / "campaigns" / "seed-findings"


def _maker():
    spec = importlib.util.spec_from_file_location("make_t1_haystack", REPO / "scripts" / "make_t1_haystack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundled_t1_haystack_is_what_the_script_writes(tmp_path):
    _maker().write(tmp_path)
    for name in ("trajectory.jsonl", "probes.jsonl"):
        assert (tmp_path / name).read_bytes() == (FINDINGS / "t1-haystack" / name).read_bytes()


def test_every_seed_finding_campaign_validates():
    for path in sorted(FINDINGS.glob("*.toml")):
        if "shared/datasets" in path.read_text() and not (REPO.parent / "shared").exists():
            continue
        assert main(["validate", str(path)]) == 0, path.name


def _panel_rows(report: dict, title: str) -> list[dict]:
    for section in report["report"]["sections"]:
        for block in section.get("blocks", []):
            if block.get("type") == "table" and block.get("caption") == title:
                return block["rows"]
    raise AssertionError(f"no table {title!r} in the report")


def test_thalia_inspector_bottleneck_shows_in_the_report(tmp_path):
    # The seed haystack only (the LoCoMo half of the campaign is the slow test's).
    dest = tmp_path / "campaigns" / "seed-findings"
    shutil.copytree(FINDINGS / "t1-haystack", dest / "t1-haystack")
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    text = (FINDINGS / "thalia-inspector.toml").read_text()
    head, _, rest = text.partition("[[trajectories]]\nid = \"conv-26\"")
    rest = rest[rest.index("[[conditions]]"):]
    (dest / "c.toml").write_text((head + rest).replace("../../runs/seed-findings.sqlite", "s.sqlite"))
    assert main(["run", str(dest / "c.toml")]) == 0
    out = tmp_path / "r.json"
    assert main(["report", "latest", "--store", str(dest / "s.sqlite"), "--format", "json", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    default = _panel_rows(report, "THALIA (thalia): where evidence is lost")
    adaptive = _panel_rows(report, "THALIA (thalia-adaptive): where evidence is lost")
    last = default[-1]
    assert last["probes"] == 5
    assert last["haystack"] == 1.0 and last["inspector"] == 0.0  # ranking would find it; the Inspector drops it
    assert adaptive[-1]["inspector"] == 1.0 and adaptive[-1]["prompt"] == 1.0  # the adaptive policy closes the gap
    assert all(r["inspector"] in (None, 0.0) for r in default)


@pytest.mark.slow
def test_density_stress_prompt_explosion_while_ice_stays_bounded(tmp_path):
    dest = tmp_path / "campaigns" / "seed-findings"
    dest.mkdir(parents=True)
    shutil.copytree(REPO / "schedules", tmp_path / "schedules")
    text = (FINDINGS / "density-stress.toml").read_text().replace("../../runs/seed-findings.sqlite", "s.sqlite")
    (dest / "c.toml").write_text(text)
    assert main(["run", str(dest / "c.toml"), "--allow-failures"]) == 0
    out = tmp_path / "r.json"
    assert main(["report", "latest", "--store", str(dest / "s.sqlite"), "--format", "json", "-o", str(out)]) == 0
    from lsrep.store import RunStore

    store = RunStore(dest / "s.sqlite")
    rows = {r["condition"]: r for r in store.rows(
        "select condition, avg(context_tokens) ctx, sum(status = 'error') errors, count(*) n from observations "
        "group by condition")}
    assert rows["vector-rag"]["ctx"] > 32000 and rows["vector-rag"]["errors"] > 0  # over the answerer's window
    # ICE packs within B_mem (at most 16,000) plus its recent-turn window (at most 4,000): the seed's ~20k.
    assert rows["ice"]["ctx"] <= 20000 and rows["ice"]["errors"] == 0
    assert rows["vector-rag"]["ctx"] > 2 * rows["ice"]["ctx"]


def test_ice_procedural_and_document_legs_are_defective_only_with_the_seed_flags(tmp_path):
    # campaigns/seed-findings/ice-legs.toml through `lsrep run` + `lsrep report` (ICE 5.11 audit, I-1).
    store, out = tmp_path / "s.sqlite", tmp_path / "r.json"
    assert main(["run", str(FINDINGS / "ice-legs.toml"), "--store", str(store), "--quiet"]) == 0
    assert main(["report", "latest", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    audit = {(r["condition"], r["mechanism"]): r for r in json.loads(out.read_text())["fidelity"]}
    legs = {"ice-procedural-defect": "ice.leg.procedural", "ice-document-defect": "ice.leg.document"}
    for leg in legs.values():
        base = audit[("ice", leg)]
        assert base["verdict"] == "exercised" and base["stages"]["in_prompt"] > 0, leg
    for condition, leg in legs.items():
        bad = audit[(condition, leg)]
        assert bad["verdict"] == "defective", condition
        # The evidence: eligible and executed on every query, yet no output at all.
        assert bad["stages"]["executed"] == bad["stages"]["eligible"] > 0
        assert not bad["stages"].get("output") and not bad["stages"].get("in_prompt")
        assert "never produced output" in bad["evidence"]
        # The flag flips its own leg and nothing else.
        flipped = {m for (c, m), r in audit.items() if c == condition and r["verdict"] != audit[("ice", m)]["verdict"]}
        assert flipped == {leg}, condition
    assert not [m for (c, m), r in audit.items() if c == "ice" and r["verdict"] == "defective"]
    # What reached the prompt: the pattern for the format question, the manual for the router one.
    from lsrep.store import RunStore

    rows = RunStore(store).rows(
        "select o.condition, o.probe_id, f.mechanisms from observations o join fragments f using (obs_id) "
        "where o.probe_id in ('format', 'router-reset')")
    shown = {(r["condition"], r["probe_id"], m) for r in rows for m in json.loads(r["mechanisms"])}
    assert ("ice", "format", "ice.leg.procedural") in shown and ("ice", "router-reset", "ice.leg.document") in shown
    assert not {m for c, _, m in shown if c == "ice-procedural-defect"} & {"ice.leg.procedural"}
    assert not {m for c, _, m in shown if c == "ice-document-defect"} & {"ice.leg.document"}
    # The manifest names the manual relative to the campaign file, never the user's directories.
    (manifest,) = RunStore(store).rows("select manifest from runs")
    manifest = json.loads(manifest["manifest"])
    named = "../../docs/seed-findings/zephyr-manual.txt"
    assert manifest["conditions"]["ice"]["options"]["documents"] == [named]
    assert {tuple(c["options"]["documents"]) for c in manifest["campaign"]["conditions"]} == {(named,)}
    assert str(REPO) not in json.dumps(manifest["conditions"])


def test_a_relative_option_path_is_read_from_the_campaign_folder(tmp_path):
    from lsrep.errors import InputError
    from lsrep.protocol.campaign import load_campaign

    loaded = load_campaign(FINDINGS / "ice-legs.toml")
    manual = REPO / "docs" / "seed-findings" / "zephyr-manual.txt"
    assert {tuple(c.options["documents"]) for c in loaded.spec.conditions} == {(str(manual),)}
    (tmp_path / "t.jsonl").write_text((FINDINGS / "ice-legs" / "trajectory.jsonl").read_text())
    (tmp_path / "p.jsonl").write_text((FINDINGS / "ice-legs" / "probes.jsonl").read_text())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.txt").write_text("a manual")
    head = ('name = "x"\nstore = "s.sqlite"\n[schedule]\nname = "e"\n[schedule.checkpoints]\nat = ["session_end"]\n'
            '[[trajectories]]\nid = "a"\ntrajectory = "t.jsonl"\nprobes = "p.jsonl"\n'
            '[[conditions]]\nname = "ice"\nsystem = "ice"\n')
    campaign = tmp_path / "c.toml"
    campaign.write_text(head + 'options = { documents = ["./sub/m.txt"], note = "sub/m.txt" }\n')
    options = load_campaign(campaign).spec.conditions[0].options
    assert options == {"documents": [str(tmp_path / "sub" / "m.txt")], "note": "sub/m.txt"}  # only ./ and ../
    campaign.write_text(head + 'options = { documents = ["./sub/gone.txt"] }\n')
    with pytest.raises(InputError, match=r"condition 'ice': option 'documents' names './sub/gone.txt'"):
        load_campaign(campaign)


def test_the_thalia_campaign_exercises_the_inspector_fallbacks(tmp_path):
    # campaigns/thalia.toml's `inspector-fallbacks` trajectory: a stop-word-only question and one
    # whose words the transcript never holds (seed-systems T-12), through `lsrep run` + `lsrep report`.
    store, out = tmp_path / "s.sqlite", tmp_path / "r.json"
    campaign = str(REPO / "campaigns" / "thalia.toml")
    assert main(["run", campaign, "--conditions", "thalia", "--trajectories", "inspector-fallbacks",
                 "--store", str(store), "--quiet"]) == 0
    assert main(["report", "latest", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    audit = {r["mechanism"]: r for r in json.loads(out.read_text())["fidelity"] if r["condition"] == "thalia"}
    for name in ("thalia.inspector.fallback_order", "thalia.inspector.fallback_overlap"):
        assert audit[name]["verdict"] == "exercised", name
        assert audit[name]["stages"]["executed"] == 2 and audit[name]["stages"]["in_prompt"] == 2, name


def _exia_defects(report: dict, condition: str) -> dict[str, dict]:
    rows = _panel_rows(report, f"EXIA SEED ({condition}): seed defects E-1…E-21")
    return {r["code"]: r for r in rows}


@pytest.fixture(scope="module")
def exia_run(tmp_path_factory):
    # campaigns/seed-findings/exia-defects.toml through `lsrep run` + `lsrep report` (EXIA §8.2).
    tmp = tmp_path_factory.mktemp("exia-defects")
    store, out = tmp / "s.sqlite", tmp / "r.json"
    assert main(["run", str(FINDINGS / "exia-defects.toml"), "--store", str(store), "--quiet"]) == 0
    assert main(["report", "latest", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    return store, json.loads(out.read_text())


def test_exia_defects_are_observed_in_the_run_and_each_repair_removes_its_own(exia_run):
    _store, report = exia_run
    seed = _exia_defects(report, "exia-seed")
    assert [r["code"] for r in seed.values()] == [f"E-{n}" for n in range(1, 22)]
    # Fix off: each defect the campaign sets up is seen in the events, with its flag and state.
    for code, flag in (("E-3", "fix_phase2_ceiling"), ("E-13", "fix_queue_when_busy"), ("E-16", "fix_summary_lock")):
        assert seed[code]["flag"] == flag and seed[code]["state"] == "reproduced (seed)", code
        assert seed[code]["observed"] > 0, code
    assert seed["E-20"]["flag"] == "none in the seed" and seed["E-20"]["observed"] > 0
    # Fix on: the repaired defect's count is 0, and only its own: the others are still seen.
    for condition, code in (("exia-fix-phase2-ceiling", "E-3"), ("exia-fix-queue-when-busy", "E-13"),
                            ("exia-fix-summary-lock", "E-16")):
        fixed = _exia_defects(report, condition)
        assert fixed[code]["state"] == "repaired (fix on)" and fixed[code]["observed"] == 0, condition
        others = {c for c in ("E-3", "E-13", "E-16") if c != code}
        assert all(fixed[c]["observed"] > 0 for c in others), condition
    # Defects without a repair, each in its own one-factor condition; absent from the seed condition.
    assert _exia_defects(report, "exia-phase1")["E-2"]["observed"] > 0 and seed["E-2"]["observed"] == 0
    assert _exia_defects(report, "exia-slow-host")["E-21"]["observed"] > 0 and seed["E-21"]["observed"] == 0
    # A defect the events do not carry is said so, never counted.
    assert seed["E-15"]["observed"] == seed["E-6"]["observed"] == "not observable from events"


def test_exia_defect_counts_are_the_stored_events(exia_run):
    # Each count recomputed from the store by hand: the panel reads events, not options.
    from lsrep.store import RunStore

    store, report = exia_run
    seed = _exia_defects(report, "exia-seed")
    db = RunStore(store)

    def events(mechanism: str, stage: str) -> list[dict]:
        return db.rows("select e.reason, e.params from events e join units u using (run_id, unit_id) "
                       "where u.condition = 'exia-seed' and e.mechanism = ? and e.stage = ? order by e.seq",
                       [mechanism, stage])

    assert seed["E-13"]["observed"] == sum(e["reason"] == "skipped_busy"
                                           for e in events("exia.consolidate.trigger", "skipped"))
    assert seed["E-16"]["observed"] == sum(json.loads(e["params"])["lost_facts"]
                                           for e in events("exia.maintenance.refresh_summaries", "error"))
    assert seed["E-20"]["observed"] == sum(json.loads(e["params"])["first_lot_overrun"]
                                           for e in events("exia.consolidate.select", "executed"))
    budgets = [json.loads(e["params"])["budget"] for e in events("exia.recall.budget", "executed")]
    blocks = [json.loads(e["params"])["estimated_tokens"] for stage in ("output", "executed")
              for e in events("exia.recall.phase2", stage)]
    assert len(set(budgets)) == 1 and seed["E-3"]["observed"] == sum(t > budgets[0] for t in blocks)


def _tools_maker():
    spec = importlib.util.spec_from_file_location("make_exia_defects_tools",
                                                  REPO / "scripts" / "make_exia_defects_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundled_exia_tools_trajectory_is_what_the_script_writes(tmp_path):
    _tools_maker().write(tmp_path)
    for name in ("trajectory.jsonl", "probes.jsonl"):
        assert (tmp_path / name).read_bytes() == (FINDINGS / "exia-defects-tools" / name).read_bytes()


TOOL_DEFECTS = (
    # (defect, repair flag, defective condition, repaired condition): each pair differs in the flag only.
    ("E-1", "fix_primary_only_notes", "exia-subagent", "exia-subagent-fix-notes"),
    ("E-4", "fix_trail_date_filter", "exia-read", "exia-read-fix-trail"),
    ("E-5", "fix_search_expiry_filter", "exia-seed", "exia-fix-search-expiry"),
    ("E-9", "fix_journal_only_admitted", "exia-seed", "exia-fix-journal"),
)


@pytest.fixture(scope="module")
def exia_tools_run(tmp_path_factory):
    # campaigns/seed-findings/exia-defects-tools.toml through `lsrep run` + `lsrep report` (EXIA §8.2).
    tmp = tmp_path_factory.mktemp("exia-defects-tools")
    store, out = tmp / "s.sqlite", tmp / "r.json"
    assert main(["run", str(FINDINGS / "exia-defects-tools.toml"), "--store", str(store), "--quiet"]) == 0
    assert main(["report", "latest", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    return store, json.loads(out.read_text())


def test_exia_tool_defect_conditions_differ_in_one_flag():
    import tomllib

    conditions = {c["name"]: c["options"] for c in tomllib.loads(
        (FINDINGS / "exia-defects-tools.toml").read_text())["conditions"]}
    for _code, flag, bad, fixed in TOOL_DEFECTS:
        assert conditions[fixed] == {**conditions[bad], flag: True} and flag not in conditions[bad], fixed
    # The defective conditions are the seed's code paths in the setting each defect needs.
    seed = conditions["exia-seed"]
    assert conditions["exia-read"] == {**seed, "tools": "auto-read"}
    assert conditions["exia-subagent"] == {**seed, "agent_context": "subagent"}
    assert not any(k.startswith("fix_") for k in seed)


def test_exia_e1_e4_e5_e9_are_observed_and_each_repair_removes_its_own(exia_tools_run):
    _store, report = exia_tools_run
    for code, flag, bad, fixed in TOOL_DEFECTS:
        seen, repaired = _exia_defects(report, bad)[code], _exia_defects(report, fixed)[code]
        assert seen["flag"] == repaired["flag"] == flag, code
        assert seen["state"] == "reproduced (seed)" and repaired["state"] == "repaired (fix on)", code
        assert seen["observed"] > 0, (code, bad)
        assert repaired["observed"] == 0, (code, fixed)
    # None of the four shows in a condition that lacks its setting: no subagent notes in a primary
    # context, no read trail without the read tool, no search when the host reads instead.
    seed = _exia_defects(report, "exia-seed")
    assert seed["E-1"]["observed"] == 0 and seed["E-4"]["observed"] == 0
    assert _exia_defects(report, "exia-read")["E-5"]["observed"] == 0


def test_exia_e1_e4_e5_e9_counts_are_the_stored_events(exia_tools_run):
    # Each count recomputed from the store by hand, and each repaired 0 shown to be the repair at
    # work (the mechanism ran on the same input and held the defect back), not an idle mechanism.
    from lsrep.store import RunStore

    store, report = exia_tools_run
    db = RunStore(store)

    def events(condition: str, mechanism: str, stage: str) -> list[dict]:
        rows = db.rows("select e.reason, e.params, e.ids, e.checkpoint, e.probe_id from events e "
                       "join units u using (run_id, unit_id) "
                       "where u.condition = ? and e.mechanism = ? and e.stage = ? order by e.seq",
                       [condition, mechanism, stage])
        return [{"reason": r["reason"], "params": json.loads(r["params"] or "{}"), "ids": json.loads(r["ids"] or "[]"),
                 "at": (r["checkpoint"], r["probe_id"])} for r in rows]

    def observed(condition: str, code: str) -> int:
        return _exia_defects(report, condition)[code]["observed"]

    # E-1: notes the register took from the subagent; the repair refuses the same notes.
    notes = events("exia-subagent", "exia.tool.note", "output")
    assert observed("exia-subagent", "E-1") == sum(e["params"]["context"] == "subagent" for e in notes) > 0
    assert not events("exia-subagent", "exia.ingest.gate", "executed")  # raw capture is off in a subagent
    refused = events("exia-subagent-fix-notes", "exia.tool.note", "skipped")
    assert len(refused) == len(notes) and {e["reason"] for e in refused} == {"contexte non primaire"}
    # E-4: future-dated facts in the read tool's trail and fallback; the repair reads the same trails.
    reads = events("exia-read", "exia.tool.read", "output")
    assert observed("exia-read", "E-4") == sum(e["params"]["future_in_trail_or_fallback"] for e in reads) > 0
    fixed_reads = events("exia-read-fix-trail", "exia.tool.read", "output")
    assert len(fixed_reads) == len(reads) and sum(e["params"]["trail"] for e in fixed_reads) > 0
    # E-5: expired plans the search tool returned; the repair filtered them out of the same searches.
    found = events("exia-seed", "exia.tool.search", "output")
    assert observed("exia-seed", "E-5") == sum(e["params"]["expired_returned"] for e in found) > 0
    dropped = {e["at"]: set(e["ids"]) for e in events("exia-seed", "exia.recall.filter_expired", "executed")}
    for e in found:  # the expired facts search returned are the ones automatic recall dropped for that probe
        assert len(set(e["ids"]) & dropped.get(e["at"], set())) == e["params"]["expired_returned"], e["at"]
    filtered = [e["params"]["filtered"]["expired"] for e in events("exia-fix-search-expiry", "exia.tool.search", "output")]
    assert sum(filtered) >= observed("exia-seed", "E-5")
    # E-9: inputs behind rejected facts journaled as integrated with no retry; the repair holds them.
    journal = events("exia-seed", "exia.consolidate.journal", "executed")
    assert observed("exia-seed", "E-9") == sum(e["params"]["rejected_integrated"] for e in journal) > 0
    rejected = [pair for e in events("exia-seed", "exia.checker", "executed") for pair in e["params"]["rejected"]]
    assert len(rejected) == observed("exia-seed", "E-9")  # each rejected fact is a one-line numeric answer
    held = [e["params"]["held"] for e in events("exia-fix-journal", "exia.consolidate.journal", "executed")]
    assert any(held)


@pytest.mark.slow
def test_thalia_bullets_ablation_is_measured_on_real_dialogue(tmp_path):
    # campaigns/seed-findings/thalia-bullets.toml through `lsrep run` + `lsrep report`, conv-26 only.
    shared = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if (p / "datasets").is_dir()), None)
    if shared is None:
        pytest.skip("shared LoCoMo data not found")
    store, out = tmp_path / "s.sqlite", tmp_path / "r.json"
    locomo = shared / "datasets" / "locomo" / "locomo-dev7.json"
    assert main(["run", str(FINDINGS / "thalia-bullets.toml"), "--trajectories", "conv-26", "--store", str(store),
                 "--quiet", "-S", f"trajectories.conv-26.locomo={locomo}"]) == 0
    assert main(["report", "latest", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    (on,) = _panel_rows(report, "THALIA (thalia): Memory Gate and MEMORY.md bullets")
    (off,) = _panel_rows(report, "THALIA (thalia-no-bullets): Memory Gate and MEMORY.md bullets")
    assert on["appended"] == 2 and on["ablated"] == 0 and on["with_bullets"] > 0 and on["share_all"] > 0.1
    assert off["appended"] == 0 and off["ablated"] == 2 and off["with_bullets"] == 0 and off["share_all"] == 0
    (contrast,) = [r for r in _panel_rows(report, "Ablation contrasts") if r["mechanism"] == "thalia.gate.consolidate"]
    assert contrast["ablation"] == "thalia-no-bullets" and contrast["contexts"]["value"] > 0.3
    assert contrast["effect"]["interval"] is not None  # the accuracy difference with its CI
