"""The bridges the engine uses: campaign endpoint tables to the client, answerer, embedder, judges."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from lsrep.answer import make_answerer
from lsrep.contract import Fragment
from lsrep.embed.model import OpenAIEmbedder
from lsrep.judge.longmemeval import OfficialLongMemEvalJudge
from lsrep.judge.model import EvolvingReferenceJudge, MultiPassJudge, build_judge
from lsrep.llm.config import EndpointSpec
from lsrep.protocol.campaign import AnswererSpec, EndpointRef


@pytest.fixture
def endpoint(server, monkeypatch):
    monkeypatch.setenv("LSREP_BRIDGE_KEY", "sk-bridge")
    return EndpointRef(base_url=server.base_url, model="bridge-model",
                       api_key_env="LSREP_BRIDGE_KEY", max_retries=1)


def test_endpoint_table_becomes_a_spec(endpoint):
    spec = EndpointSpec.of(endpoint)
    assert spec.base_url == endpoint.base_url and spec.context_window == endpoint.context_window
    assert EndpointSpec.of(spec) is spec


def test_llm_answerer_answers_and_returns_records(server, endpoint):
    server.reply = "PostgreSQL"
    answerer = make_answerer(AnswererSpec(kind="llm", endpoint=endpoint))
    fragments = [Fragment(text="We moved to PostgreSQL.", source_turn_ids=("t42",))]
    outcome = answerer.answer("Which database?", datetime(2026, 4, 1, tzinfo=UTC), fragments)
    assert outcome.text == "PostgreSQL" and outcome.error is None
    assert outcome.usage_prompt_tokens and outcome.usage_completion_tokens
    (call,) = outcome.calls
    assert call["purpose"] == "answer" and call["status"] == "ok"
    assert call["prompt_digest"] == answerer.template_digest
    assert "We moved to PostgreSQL." in server.requests[0].last_user
    assert answerer.system_llm().complete([{"role": "user", "content": "x"}]) == "PostgreSQL"
    assert answerer.system_llm().drain()[0].purpose == "system"
    assert "sk-bridge" not in str(answerer.describe())


def test_llm_answerer_failure_is_an_error_not_an_answer(server, endpoint):
    from lsrep.llm.server import Fault

    server.enqueue_faults(Fault.http(500), Fault.http(500))
    answerer = make_answerer(AnswererSpec(kind="llm", endpoint=endpoint))
    outcome = answerer.answer("q?", datetime(2026, 4, 1, tzinfo=UTC), [])
    assert outcome.text is None and outcome.error.startswith("retries_exhausted")
    assert outcome.calls[0]["faults"] == ["500", "500"]


def test_embedder_from_endpoint(server, endpoint):
    rows = OpenAIEmbedder.from_endpoint(endpoint).embed(["a", "b"])
    assert rows.shape == (2, 16) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)


def test_build_judge(endpoint):
    assert isinstance(build_judge("evolving", endpoint), EvolvingReferenceJudge)
    official = build_judge("longmemeval", endpoint)
    assert isinstance(official, OfficialLongMemEvalJudge)
    assert (official.client.spec.temperature, official.client.spec.max_tokens) == (0.0, 10)
    panel = build_judge("evolving", endpoint, passes=3)
    assert isinstance(panel, MultiPassJudge) and panel.passes == 3
