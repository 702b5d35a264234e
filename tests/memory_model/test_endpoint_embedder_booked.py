"""The campaign's own endpoint embedder (`[embedder] kind = "openai"`), which systems reach as
`setup.embedder`, is cached beside the store and every call is booked in `memory_calls`."""

from __future__ import annotations

from lsrep.llm.server import OpenAITestServer
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def test_endpoint_embedder_calls_are_cached_and_booked(example):
    with OpenAITestServer(embed_dim=16) as server:
        text = example.read_text().replace('[embedder]\nkind = "hashing"\ndim = 512', f'''[embedder]
kind = "openai"
[embedder.endpoint]
base_url = "{server.base_url}"
model = "embed"
api_key_env = ""''')
        assert 'kind = "openai"' in text
        example.write_text(text)
        out = run_campaign(example, conditions=["vector-rag"])
        sent = server.count("embeddings")
        assert sent > 0
        store = RunStore(out.store_path)
        rows = store.rows("select phase, sum(cached = 0) uncached, sum(attempts) attempts, count(*) n "
                          "from memory_calls where run_id = ? and role = 'embedder' group by phase", [out.run_id])
        by_phase = {r["phase"]: r for r in rows}
        assert sum(r["attempts"] for r in rows) == sent
        assert set(by_phase) >= {"ingest", "query"}
        again = run_campaign(example, conditions=["vector-rag"], fresh=True)
        assert server.count("embeddings") == sent  # every vector came from the cache
        replayed = store.rows("select count(*) n, sum(cached) cached from memory_calls where run_id = ? "
                              "and role = 'embedder'", [again.run_id])[0]
        assert replayed["n"] > 0 and replayed["n"] == replayed["cached"]
