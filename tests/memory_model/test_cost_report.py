"""`lsrep report --format json` carries a `cost` block per condition that counts the memory
system's own model: a condition whose system spends tokens ingesting is not reported cheaper than
one that only answers."""

from __future__ import annotations

import json

from lsrep.cli import main
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.memory_model.campaign_util import write_campaign

TABLES = '[memory_llm]\nkind = "offline"\n[memory_embedder]\nkind = "offline"\ndimensions = 32\n'
VECTOR_RAG = '\n[[conditions]]\nname = "vector-rag"\nsystem = "vector-rag"\n'


def test_the_cost_block_counts_memory_calls_and_the_views_use_total_tokens(tmp_path):
    out = run_campaign(write_campaign(tmp_path, TABLES, extra_conditions=VECTOR_RAG))
    store = RunStore(out.store_path)
    target = tmp_path / "report"
    assert main(["report", out.run_id, "--store", str(out.store_path), "--format", "all", "-o", str(target)]) == 0
    doc = json.loads((target / "report.json").read_text()) if target.is_dir() else None
    assert doc is not None, sorted(p.name for p in tmp_path.iterdir())
    cost = {c["name"]: c["cost"] for c in doc["conditions"]}
    calls = store.rows("select kind, count(*) n, sum(prompt_tokens) p, sum(coalesce(completion_tokens, 0)) c "
                       "from memory_calls where run_id = ? and condition = 'gw' group by kind", [out.run_id])
    by_kind = {r["kind"]: r for r in calls}
    gw = cost["gw"]
    assert gw["memory_llm_calls"] == by_kind["chat"]["n"]
    assert gw["memory_llm_tokens"] == by_kind["chat"]["p"] + by_kind["chat"]["c"]
    assert gw["memory_embedding_calls"] == by_kind["embedding"]["n"]
    assert gw["memory_embedding_tokens"] == by_kind["embedding"]["p"]
    answer = sum(r["prompt_tokens"] for r in store.rows(
        "select prompt_tokens from observations where run_id = ? and condition = 'gw'", [out.run_id]))
    assert gw["answer_tokens"] == answer
    assert gw["total_tokens"] == answer + gw["memory_llm_tokens"] + gw["memory_embedding_tokens"]
    assert gw["correct"] > 0 and gw["tokens_per_correct"] == round(gw["total_tokens"] / gw["correct"], 3)
    assert gw["ingest_ms_per_turn"] > 0 and gw["query_ms"] > 0
    assert set(gw["by_phase"]) == {"ingest", "query"} and gw["sources"] == ["offline"]
    rag = cost["vector-rag"]
    assert rag["memory_llm_calls"] == 0 and rag["total_tokens"] == rag["answer_tokens"]
    # The quality-vs-cost view plots total tokens, which include the memory side.
    (figure,) = [f for f in _figures(doc["report"]) if f.get("key") == "fig-cost"]
    points = {p["condition"]: p for p in figure["data"]["points"]}
    assert points["gw"]["total_tokens"] == gw["total_tokens"] / gw["observations"]
    assert points["gw"]["total_tokens"] > points["gw"]["prompt_tokens"]
    markdown = (target / "report.md").read_text()
    assert "Total tokens / obs." in markdown and "Memory-model calls" in markdown


def _figures(tree):
    if isinstance(tree, dict):
        if tree.get("type") == "figure":
            yield tree
        for value in tree.values():
            yield from _figures(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _figures(value)
