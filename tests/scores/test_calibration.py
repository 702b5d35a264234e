"""Calibration oracles: ceiling, floor, stale and future detection, judge agreement, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from lsrep import calibration
from lsrep.answer import make_answerer
from lsrep.calibration import calibrate, calibration_json, cases_from_campaign, evidence_for
from lsrep.protocol.campaign import load_campaign
from lsrep.runner import load_inputs


@pytest.fixture
def quickstart_calibration(example):
    campaign = load_campaign(example)
    cases, turns = cases_from_campaign(campaign, load_inputs(campaign))
    return cases, turns, make_answerer(campaign.spec.answerer)


def test_oracles_read_evidence_ids_only():
    expected = {"expect_abstain": False,
                "in_force": [{"answer": "Lisbon", "valid_from": "t3", "evidence": ["t3", "t1"]}],
                "superseded": [{"answer": "Porto", "valid_from": "t1", "evidence": ["t1"]}],
                "later": [{"answer": "Faro", "valid_from": "t9", "evidence": ["t9"]}]}
    assert evidence_for("oracle", expected) == ["t3", "t1"]
    assert evidence_for("oracle-stale", expected) == ["t1"]
    assert evidence_for("oracle-future", expected) == ["t9"]
    assert evidence_for("null", expected) == []
    assert evidence_for("oracle", {**expected, "expect_abstain": True}) == []


def test_quickstart_ceiling_floor_and_detection(quickstart_calibration):
    cases, turns, answerer = quickstart_calibration
    cal = calibrate(cases, turns, answerer, seed=1, boot=200)
    doc = calibration_json(cal)
    assert doc["floor"] == 0.0
    assert doc["ceiling"] > 0.6 and not doc["low_ceiling"]
    # Every case with a superseded version: oracle-stale's answer is labelled stale.
    assert doc["stale_detection"]["n"] == 15 and doc["stale_detection"]["rate"] == 1.0
    # Every case with a version not yet said: oracle-future's answer is labelled future or leaks provably.
    fut = doc["future_detection"]
    assert fut["n"] == 20 and fut["rate"] == 1.0 and fut["proven_leak"] == 20
    assert all(s["calibration"] for s in doc["systems"].values())
    assert set(doc["systems"]) == {"oracle", "oracle-stale", "oracle-future", "null"}
    assert doc["systems"]["oracle"]["abstention"]["accuracy"] == 1.0
    assert cal.headroom(cal.ceiling.headline.value) == pytest.approx(1.0)
    assert cal.headroom(cal.floor.headline.value) == pytest.approx(0.0)


def test_stale_detection_fails_when_the_stale_oracle_gets_current_evidence(quickstart_calibration, monkeypatch):
    cases, turns, answerer = quickstart_calibration
    real = calibration.evidence_for

    def wrong(system, expected):
        return real("oracle" if system == "oracle-stale" else system, expected)

    monkeypatch.setattr(calibration, "evidence_for", wrong)
    cal = calibrate(cases, turns, answerer, seed=1, boot=50)
    assert cal.stale.n == 15 and cal.stale.rate < 0.5


def test_judge_agreement_absent_and_present(monkeypatch):
    monkeypatch.setitem(sys.modules, "lsrep.judge.agreement_set", None)
    agreement, reason = calibration.judge_agreement()
    assert agreement is None and "agreement set" in reason

    module = types.ModuleType("lsrep.judge.agreement_set")
    result = types.SimpleNamespace(n=300, agreed=294, rate=0.98, disagreements=[("a", "b", "c")] * 6)
    module.measure = lambda: result
    monkeypatch.setitem(sys.modules, "lsrep.judge.agreement_set", module)
    agreement, reason = calibration.judge_agreement()
    assert agreement == {"n": 300, "agreed": 294, "rate": 0.98, "disagreements": 6} and reason is None


def test_calibrate_cli_json_is_deterministic(example):
    cmd = [sys.executable, "-m", "lsrep.cli", "calibrate", str(example), "--json", "--boot", "200"]
    first = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    second = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert first == second
    doc = json.loads(first)
    assert {"ceiling", "floor", "judge_agreement", "stale_detection", "future_detection"} <= set(doc)
    text = subprocess.run(cmd[:-3], capture_output=True, text=True, check=True).stdout
    assert "ceiling (oracle answerable accuracy)" in text and "stale detection" in text
    assert not (example.parent.parent / "runs").exists()  # nothing written


def test_show_prints_rank_headline_and_headroom(example, capsys):
    from lsrep.cli import main

    assert main(["run", str(example), "--quiet", "--summary"]) == 0
    out = capsys.readouterr().out
    table = {line.split()[0]: line.split() for line in out.splitlines()
             if line.split() and line.split()[0] in ("null", "full-context", "vector-rag")}
    assert table["null"][1] == "3" and table["full-context"][1] == "1" and table["null"][2] == "0.00"
    # 0.94 since answerer v6 (0.86 before): "In which cities has Maya lived, in order?" is answered as a list.
    assert "ceiling 0.94 answerable" in out and "floor 0.00" in out
    assert "instrument headroom" in out and "null 0.00" in out
    assert "WARNING: the ceiling is below" not in out


def _grading_reply(label_for):
    """A scripted model judge over real HTTP: labels every grading request with `label_for(user)`."""
    def reply(request) -> str:
        system = request.messages[0]["content"] if request.messages[0]["role"] == "system" else ""
        if system.startswith("You grade answers"):
            return json.dumps({"label": label_for(request.last_user), "rubric": 3, "rationale": "scripted"})
        return "Reply with the JSON object."
    return reply


def test_calibrate_runs_under_the_campaigns_model_judge(example, monkeypatch, capsys):
    """Ceiling, floor, detection and agreement come from the campaign's LLM judge, not the deterministic one."""
    from lsrep.cli import main
    from lsrep.llm.server import OpenAITestServer

    monkeypatch.setenv("LSREP_TEST_KEY", "sk-test")
    # This judge calls every answer `stale`: the oracle's ceiling falls to 0 and stale detection is total,
    # the opposite of what the deterministic judge says on the same answers.
    with OpenAITestServer(reply=_grading_reply(lambda user: "stale")) as server:
        text = example.read_text().replace("[[trajectories]]", 'judge_of_record = "llm"\n[[trajectories]]', 1)
        example.write_text(text + f'''
[[judges]]
name = "llm"
kind = "evolving"
[judges.endpoint]
base_url = "{server.base_url}"
model = "scripted"
api_key_env = "LSREP_TEST_KEY"
concurrency = 2
context_window = 200000
''')
        assert main(["calibrate", str(example), "--json", "--boot", "50"]) == 0
        assert server.request_count > 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["judge"].startswith("llm ")
    assert doc["ceiling"] == 0.0
    assert doc["stale_detection"]["rate"] == 1.0
    assert doc["systems"]["null"]["abstention"]["accuracy"] == 0.0
    # The agreement set was graded by the same judge: only its `stale` items agree.
    assert doc["judge_agreement"]["rate"] < 0.5
