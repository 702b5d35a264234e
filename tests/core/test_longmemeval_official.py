"""LongMemEval parity: the official scripts, run on LSREP's exports, agree with LSREP.

The reference copies in ../shared/reference/longmemeval-eval/ are run unchanged as
subprocesses (evaluate_qa.py against a real local OpenAI-compatible server with a
deterministic judge; print_qa_metrics.py; print_retrieval_metrics.py), and the
official eval_utils.py recomputes every per-question retrieval metric. Nothing of
the official code is imported into LSREP itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lsrep.probes.generator import generate_longmemeval_file

from lsrep.llm.server import OpenAITestServer, ReceivedRequest
from lsrep.longmemeval import LongMemEvalSpec, run_longmemeval
from lsrep.longmemeval_export import export_longmemeval, metrics_by_condition
from lsrep.longmemeval_metrics import OFFICIAL_TYPES, SESSION_SHOWN, TURN_SHOWN
from lsrep.protocol.campaign import ConditionSpec, EndpointRef, JudgeSpec
from lsrep.store import RunStore

MODEL = "gpt-4o-2024-08-06"  # what evaluate_qa.py sends for `gpt-4o`, and what print_qa_metrics.py asserts
KEY_ENV = "LSREP_LME_PARITY_KEY"


def _reference(shared: Path) -> Path:
    ref = shared / "reference" / "longmemeval-eval"
    if not (ref / "evaluate_qa.py").exists():
        pytest.skip("official LongMemEval scripts not found")
    for module in ("backoff", "tqdm", "openai"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the official evaluate_qa.py needs the {module!r} package (pip install {module})")
    return ref


def _norm(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9:]+", " ", text.lower()).split()) + " "


def judge_reply(request: ReceivedRequest) -> str:
    """A deterministic judge model: reads the official prompt layout and answers like a model would."""
    prompt = request.last_user
    response = prompt.split("Model Response: ", 1)[1].rsplit("\n\n", 1)[0]
    if "\n\nExplanation: " in prompt:  # abstention
        return "Yes." if "know" in response.lower() else "No."
    slot = "Rubric: " if "\n\nRubric: " in prompt else "Correct Answer: "
    answer = prompt.split(slot, 1)[1].split("\n\nModel Response: ", 1)[0]
    words = [w for w in _norm(answer).split() if len(w) > 2] or _norm(answer).split()
    hit = sum(f" {w} " in _norm(response) for w in words)
    # Replies worded as models word them: the official rule reads "yes" anywhere in the reply.
    yes = ("yes", "Yes.", "The model response is correct, so: yes")
    return yes[len(prompt) % 3] if words and hit * 2 >= len(words) else ("No.", "no")[len(prompt) % 2]


def _official_corpus(record: dict) -> list[str]:
    """process_item_flat_index (turn granularity), restated for the check."""
    ids = []
    for sid, session in zip(record["haystack_session_ids"], record["haystack_sessions"], strict=True):
        for i, turn in enumerate(session):
            if turn["role"] != "user":
                continue
            item = f"{sid}_{i + 1}"
            ids.append(item if "answer" not in sid or turn["has_answer"] else item.replace("answer", "noans"))
    return ids


def _eval_utils(ref: Path):
    if not hasattr(np, "asfarray"):  # removed in numpy 2; the official code still calls it
        np.asfarray = lambda a: np.asarray(a, dtype=float)
    spec = importlib.util.spec_from_file_location("official_eval_utils", ref / "eval_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _floats(text: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"([a-z_]+@\d+) = ([0-9.]+)", text)}


def test_official_scripts_agree_with_lsrep_on_its_exports(shared, tmp_path, monkeypatch):
    ref = _reference(shared)
    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=60, sessions_per_question=5, seed=3,
                                     turns_per_session=6, turn_tokens=60)
    records = json.loads(data.read_text())
    assert {r["question_type"] for r in records} == set(OFFICIAL_TYPES)
    assert any("_abs" in r["question_id"] for r in records)
    monkeypatch.setenv(KEY_ENV, "test-key")
    with OpenAITestServer(reply=judge_reply, models=(MODEL,)) as server:
        endpoint = EndpointRef(base_url=server.base_url, model=MODEL, api_key_env=KEY_ENV, max_retries=0)
        spec = LongMemEvalSpec(
            data=data, store=tmp_path / "run" / "lme.sqlite",
            conditions=(ConditionSpec(name="vector-rag", system="vector-rag"),
                        ConditionSpec(name="full-context", system="full-context")),
            judges=(JudgeSpec(name="gpt-4o", kind="longmemeval", endpoint=endpoint),))
        outcome = run_longmemeval(spec)
        assert outcome.failed_units == 0
        lsrep_requests = list(server.requests)
        server.reset_counters()
        store = RunStore(outcome.store_path)
        out = tmp_path / "export"
        export_longmemeval(store, outcome.run_id, out)
        metrics = metrics_by_condition(store, outcome.run_id)

        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"}
        for cond in ("vector-rag", "full-context"):
            mine = out / cond
            official = tmp_path / "official" / cond
            official.mkdir(parents=True)
            shutil.copy(mine / "hypotheses.jsonl", official / "hypotheses.jsonl")
            subprocess.run([sys.executable, str(ref / "evaluate_qa.py"), "gpt-4o",
                            str(official / "hypotheses.jsonl"), str(data)],
                           check=True, capture_output=True, text=True, env=env, cwd=tmp_path)
            # Labels identical per question: the whole file, byte for byte.
            theirs = (official / "hypotheses.jsonl.eval-results-gpt-4o").read_text()
            assert (mine / "hypotheses.jsonl.eval-results-gpt-4o").read_text() == theirs
            assert len(theirs.splitlines()) == len(records)
            labels = [json.loads(line)["autoeval_label"]["label"] for line in theirs.splitlines()]
            assert 0 < sum(labels) < len(labels)  # the check is not vacuous

            qa = subprocess.run([sys.executable, str(ref / "print_qa_metrics.py"),
                                 str(official / "hypotheses.jsonl.eval-results-gpt-4o"), str(data)],
                                check=True, capture_output=True, text=True).stdout
            m = metrics[cond]
            assert m["qa_judge"] == "gpt-4o" and m["official_judge"]
            for qtype in OFFICIAL_TYPES:
                got = re.search(rf"{qtype}: ([0-9.]+) \((\d+)\)", qa)
                assert float(got[1]) == round(m["per_type"][qtype]["accuracy"], 4)
                assert int(got[2]) == m["per_type"][qtype]["n"]
            assert float(re.search(r"Task-averaged Accuracy: ([0-9.]+)", qa)[1]) == round(m["task_averaged"], 4)
            assert float(re.search(r"Overall Accuracy: ([0-9.]+)", qa)[1]) == round(m["overall"], 4)
            ab = re.search(r"Abstention Accuracy: ([0-9.]+) \((\d+)\)", qa)
            assert (float(ab[1]), int(ab[2])) == (round(m["abstention"]["accuracy"], 4), m["abstention"]["n"])

            rt = subprocess.run([sys.executable, str(ref / "print_retrieval_metrics.py"),
                                 str(mine / "retrieval.jsonl")], check=True, capture_output=True, text=True).stdout
            session_text, turn_text = rt.split("Turn-level metrics:")
            session, turn = _floats(session_text), _floats(turn_text)
            assert set(session) == set(SESSION_SHOWN) and set(turn) == set(TURN_SHOWN)
            for name in SESSION_SHOWN:
                assert session[name] == round(m["retrieval"]["session"][name], 4)
            for name in TURN_SHOWN:
                assert turn[name] == round(m["retrieval"]["turn"][name], 4)
            assert json.loads((mine / "metrics.json").read_text()) == json.loads(json.dumps(m))

        official_requests = list(server.requests)

    # The prompts the server received from the two are identical (LSREP's cache answers repeats).
    def seen(requests):
        return {(r.body["model"], r.body["temperature"], r.body["max_tokens"], json.dumps(r.messages))
                for r in requests if r.path == "/v1/chat/completions"}

    assert seen(lsrep_requests) == seen(official_requests)
    assert all(r.body["temperature"] == 0 and r.body["max_tokens"] == 10 for r in lsrep_requests)

    # Every per-question retrieval metric as the official eval_utils computes it from the ranking.
    utils = _eval_utils(ref)
    by_id = {r["question_id"]: r for r in records}
    for cond in ("vector-rag", "full-context"):
        entries = [json.loads(line) for line in (out / cond / "retrieval.jsonl").read_text().splitlines()]
        assert [e["question_id"] for e in entries] == [r["question_id"] for r in records]
        for entry in entries:
            corpus = _official_corpus(by_id[entry["question_id"]])
            ranked = [item["corpus_id"] for item in entry["retrieval_results"]["ranked_items"]]
            rankings = [corpus.index(c) for c in ranked]
            correct = list({c for c in corpus if "answer" in c})
            got = entry["retrieval_results"]["metrics"]
            for k in (1, 3, 5, 10, 30, 50):
                turn = utils.evaluate_retrieval(rankings, correct, corpus, k=k)
                session = utils.evaluate_retrieval_turn2session(rankings, correct, corpus, k=k)
                for level, values in (("turn", turn), ("session", session)):
                    expected = dict(zip((f"recall_any@{k}", f"recall_all@{k}", f"ndcg_any@{k}"), values, strict=True))
                    for name, value in expected.items():
                        assert got[level][name] == pytest.approx(float(value), abs=1e-12), (entry["question_id"], name)
