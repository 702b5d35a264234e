"""A unit's answers are in flight together (bounded by the endpoint), stored as a sequential run stores them."""

from __future__ import annotations

import pytest

from lsrep.llm.server import OpenAITestServer
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.core.golden import campaign_rows, scripted_model


def _llm_campaign(example, original: str, base_url: str, concurrency: int) -> None:
    endpoint = (f'base_url = "{base_url}"\nmodel = "scripted"\napi_key_env = "LSREP_TEST_KEY"\n'
                f"max_retries = 0\ntimeout_s = 10.0\nconcurrency = {concurrency}\ncontext_window = 200000\n")
    text = original.replace('kind = "extractive"', 'kind = "llm"').replace(
        'overflow = "fail"', f'overflow = "fail"\n[answerer.endpoint]\n{endpoint}', 1)
    example.write_text(text.replace('schedule = "../schedules/session-end.toml"',
                                    'schedule = "../schedules/session-end-isolated.toml"'))


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("LSREP_TEST_KEY", "sk-test")


def _run(example, original: str, concurrency: int):
    with OpenAITestServer(reply=scripted_model, latency_s=0.05) as server:
        _llm_campaign(example, original, server.base_url, concurrency)
        out = run_campaign(example, fresh=True, conditions=["vector-rag"])
        store = RunStore(out.store_path)
        return server.max_in_flight, campaign_rows(store, out.run_id, server.base_url)


def test_answers_overlap_up_to_the_endpoint_bound_and_rows_match_a_sequential_run(example):
    original = example.read_text()
    sequential_peak, sequential = _run(example, original, 1)
    peak, concurrent = _run(example, original, 4)
    assert sequential_peak == 1
    # The answers of a checkpoint (10+ probes) are in flight together, never above the bound.
    assert peak == 4
    # Same rows, same order: observations, fragments, events, failures, llm_calls (timings aside).
    assert concurrent == sequential
    assert sum(len(t["llm_calls"]) for t in concurrent.values()) > 0
