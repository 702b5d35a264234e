"""A small synthetic run written straight into a real store: an ablation pair, two judges,
a defective and a never-exercised mechanism, failures and maintenance."""

from __future__ import annotations

import json
from pathlib import Path

from lsrep.store import RunStore

RUN_ID = "20260101T000000000000-synth1"
PROBES = 16
CHECKPOINTS = 3
SCHEDULE = {"name": "session-end", "version": 1, "access": "isolated", "clock": "timestamps"}
BASE = {"system": "toy", "adapter": "adapters.toy:ToyAdapter", "adapter_version": "1", "options": {"k": 3},
        "disable": [], "answer_mode": "context", "schedule": SCHEDULE,
        "mechanisms": ["toy.lex", "toy.graph", "toy.broken", "toy.idle"],
        "mechanism_stages": {"toy.broken": ["eligible", "executed", "output"]}, "maintenance_operations": ["consolidate"]}
CONDITIONS = {"toy": BASE, "toy-no-graph": {**BASE, "disable": ["toy.graph"]}}


def manifest() -> dict:
    return {
        "answerer": {"name": "context-llm", "version": "1", "kind": "llm", "offline": False,
                     "template_digest": "ab" * 32, "endpoint": {"model": "tiny-model"}},
        "campaign": {"name": "synthetic", "description": "Synthetic ablation run", "seed": 7, "repetitions": 1,
                     "answer_mode": "context", "compare": [["toy", "toy-no-graph"]],
                     "conditions": [{"name": n, **{k: c[k] for k in ("system", "options", "disable")}}
                                    for n, c in CONDITIONS.items()]},
        "conditions": CONDITIONS,
        "judges": [{"name": "deterministic", "kind": "deterministic", "version": "1"},
                   {"name": "evolving", "kind": "evolving", "passes": 3, "endpoint": {"model": "judge-model"}}],
        "inputs": {"campaign": {"path": "synthetic.toml", "sha256": "cd" * 32}},
        "plans": {f"{c}/traj": "ef" * 32 for c in CONDITIONS},
        "packages": {"lsrep": "0.1.0"}, "lsrep_version": "0.1.0", "python": "3.11", "platform": "test",
        "embedder": "hashing", "git_revision": None,
    }


def credited(condition: str, i: int) -> bool:
    return i % 4 != 0 if condition == "toy" else i % 4 == 1


def unit_rows(condition: str) -> dict[str, list[dict]]:
    unit = f"{condition}/traj/r0"
    obs, frags, judgements, events = [], [], [], []
    for cp in range(CHECKPOINTS):
        for i in range(PROBES):
            oid = f"{RUN_ID}:{unit}:{cp}:p{i:02d}"
            ok = credited(condition, i)
            error = condition == "toy-no-graph" and i == 3 and cp == 2
            obs.append({
                "obs_id": oid, "run_id": RUN_ID, "unit_id": unit, "condition": condition, "trajectory": "traj",
                "repetition": 0, "checkpoint": cp, "prefix_len": 10 * (cp + 1), "sim_time": f"2026-01-0{cp + 1}T10:00:00+00:00",
                "probe_id": f"p{i:02d}", "kind": "current" if i % 3 else "historical",
                "category": ["single-hop", "temporal", "knowledge-update"][i % 3],
                "question": f"Question {i}?",
                "expected": json.dumps({"ask": True, "expect_abstain": False, "in_force": [
                    {"answer": f"A{i}", "aliases": [], "valid_from": "t1", "valid_until": None, "evidence": ["t1"]}],
                    "superseded": [], "later": [], "reason": ""}),
                "answer_mode": "context", "answer": None if error else (f"A{i}" if ok else "no idea <b>bold</b>"),
                "system_answer": None, "status": "error" if error else "ok",
                "error": "adapter blew up: <script>alert(1)</script>" if error else None,
                "n_fragments": 2, "context_tokens": 40 if condition == "toy" else 25, "prompt_tokens": 120,
                "usage_prompt_tokens": 118, "usage_completion_tokens": 5, "within_limit": 1,
                "truncated_tokens": 0, "budget_exceeded": 0, "evidence_ids": '["t1"]',
                "evidence_recall": 1.0 if ok else 0.0, "proven_leak": 1 if (condition == "toy" and i == 5 and cp == 0) else 0,
                "unattributed": 1 if condition == "toy-no-graph" else 0, "query_ms": 1.0, "answer_ms": 2.0,
            })
            frags += [{"obs_id": oid, "rank": r, "text": f"fragment {r}", "source_turn_ids": '["t1"]' if r == 0 or condition == "toy" else "[]",
                       "tokens": 20, "mechanisms": '["toy.lex"]', "kind": "turn", "score": 1.0, "leak": 0,
                       "unknown_source": 0} for r in range(2)]
            outcome = "error" if error else ("correct" if ok else "wrong")
            judgements.append({"obs_id": oid, "judge": "deterministic", "run_id": RUN_ID, "judge_version": "1",
                               "prompt_digest": None, "outcome": outcome, "correct": int(ok and not error),
                               "rubric": None, "exact": int(ok), "f1": 1.0 if ok else 0.0, "passes": None,
                               "agreement": None, "status": "ok", "error": None, "rationale": None})
            # The model judge disagrees on a few observations and fails on one.
            flip = i == 2
            m_outcome = ("wrong" if ok else "correct") if flip else outcome
            judgements.append({"obs_id": oid, "judge": "evolving", "run_id": RUN_ID, "judge_version": "1",
                               "prompt_digest": "12" * 32, "outcome": m_outcome,
                               "correct": int(m_outcome == "correct"), "rubric": 5 if m_outcome == "correct" else 2,
                               "exact": None, "f1": None, "passes": None, "agreement": 1.0,
                               "status": "failed" if (i == 7 and cp == 1) else "ok", "error": None,
                               "rationale": None})
            stages = {"toy.lex": ("eligible", "executed", "output", "selected", "in_prompt"),
                      "toy.broken": ("eligible", "executed"), "toy.idle": ("ineligible",)}
            if condition == "toy":
                stages["toy.graph"] = ("eligible", "executed", "output", "selected", "in_prompt")
            for mech, seq in stages.items():
                for stage in seq:
                    events.append({"run_id": RUN_ID, "unit_id": unit, "seq": len(events), "step": "query",
                                   "checkpoint": cp, "probe_id": f"p{i:02d}", "mechanism": mech, "stage": stage,
                                   "reason": None, "count": 1, "ids": "[]", "source_turn_ids": "[]", "params": "{}"})
        events.append({"run_id": RUN_ID, "unit_id": unit, "seq": len(events), "step": "maintenance:consolidate",
                       "checkpoint": None, "probe_id": None, "mechanism": "toy.consolidate", "stage": "executed",
                       "reason": None, "count": 1, "ids": "[]", "source_turn_ids": "[]", "params": "{}"})
    maintenance = [{"run_id": RUN_ID, "unit_id": unit, "seq": cp, "operation": "consolidate", "trigger": "session_end",
                    "sim_time": f"2026-01-0{cp + 1}T10:00:00+00:00",
                    "status": "ok" if condition == "toy" else "unsupported", "error": None, "elapsed_ms": 3.0}
                   for cp in range(CHECKPOINTS)]
    failures = [] if condition == "toy" else [{
        "run_id": RUN_ID, "unit_id": unit, "seq": 0, "phase": "query", "checkpoint": 2, "probe_id": "p03",
        "error_type": "RuntimeError", "message": "adapter blew up: <script>alert(1)</script>"}]
    return {"observations": obs, "fragments": frags, "judgements": judgements, "events": events,
            "maintenance": maintenance, "failures": failures, "checkpoints": [
                {"run_id": RUN_ID, "unit_id": unit, "ordinal": cp, "prefix_len": 10 * (cp + 1), "last_turn_id": f"t{10 * (cp + 1)}",
                 "sim_time": f"2026-01-0{cp + 1}T10:00:00+00:00", "triggers": "session_end", "prefix_sha256": "",
                 "ingested_sha256": "", "state_digest": None} for cp in range(CHECKPOINTS)]}


def write_synthetic_run(path: Path) -> RunStore:
    store = RunStore(path)
    store.create_run(RUN_ID, "synthetic", "synthetic.toml", "cd" * 32, "ef" * 32, manifest())
    store.write_turns(RUN_ID, "traj", [{
        "run_id": RUN_ID, "trajectory": "traj", "idx": 0, "turn_id": "t1", "session_id": "s1",
        "timestamp": "2026-01-01T09:00:00+00:00", "sim_time": "2026-01-01T09:00:00+00:00", "role": "user",
        "speaker": "Ana", "content": "The answer is <i>A</i>.", "prefix_sha256": ""}])
    for condition in CONDITIONS:
        store.write_unit({"run_id": RUN_ID, "unit_id": f"{condition}/traj/r0", "condition": condition,
                          "trajectory": "traj", "repetition": 0, "seed": 1, "plan_digest": "ef" * 32,
                          "status": "finished", "error": None, "elapsed_s": 0.1}, unit_rows(condition))
    store.finish_run(RUN_ID)
    return store
