"""What each condition spent, memory included: the `cost` block of `report.json` per condition.

    answer_tokens           the answer prompts and completions (endpoint usage where reported,
                            else the harness's estimate of the prompt; 0 when the system answered)
    memory_llm_calls/tokens the system's own chat calls through its gateway (prompt + completion)
    memory_embedding_calls/tokens  embedding requests (the gateway's and the campaign endpoint
                            embedder's) and their input tokens
    total_tokens            the three token counts summed
    tokens_per_correct      total_tokens / observations judged correct (None when none is)
    ingest_ms_per_turn      mean time the system took to take one turn
    query_ms                mean time of a successful query

Token counts are what the calls consumed, whether answered by the endpoint or from LSREP's cache
(a re-run from cache costs the same tokens; `cached_calls` says how many were replayed), so the
block is the same on every run of the same campaign. The offline responder's tokens are LSREP's
estimate (`lsrep.text.estimate_tokens`), labelled by `sources`.
"""

from __future__ import annotations

from typing import Any


def load_cost_rows(store: Any, run_id: str) -> dict[str, list[dict[str, Any]]]:
    memory = store.rows(
        "select condition, role, kind, phase, source, count(*) calls, sum(cached) cached, "
        "sum(coalesce(prompt_tokens, 0)) prompt_tokens, sum(coalesce(completion_tokens, 0)) completion_tokens, "
        "sum(cost) cost, sum(status != 'ok') failed from memory_calls where run_id = ? "
        "group by condition, role, kind, phase, source order by condition, role, kind, phase, source", [run_id])
    ingests = store.rows(
        "select condition, count(*) turns, avg(elapsed_ms) ms from ingests where run_id = ? group by condition",
        [run_id])
    return {"memory_calls": memory, "ingests": ingests}


def _answer_tokens(o: dict[str, Any]) -> int:
    if o["answer_mode"] == "system":
        return 0
    if o["usage_prompt_tokens"] is not None:
        return int(o["usage_prompt_tokens"]) + int(o["usage_completion_tokens"] or 0)
    return int(o["prompt_tokens"] or 0)


def cost_block(data: Any, condition: str) -> dict[str, Any]:
    """The `cost` block for one condition (see the module docstring)."""
    obs = [o for o in data.observations if o["condition"] == condition]
    calls = [r for r in data.memory_calls if r["condition"] == condition]
    chat = [r for r in calls if r["kind"] == "chat"]
    embed = [r for r in calls if r["kind"] == "embedding"]
    answer = sum(_answer_tokens(o) for o in obs)
    llm_tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in chat)
    embed_tokens = sum(r["prompt_tokens"] for r in embed)
    total = answer + llm_tokens + embed_tokens
    correct = sum(1 for o in obs if o["correct"] == 1)
    queries = [o["query_ms"] for o in obs if o["status"] == "ok" and o["query_ms"] is not None]
    ingest = next((r for r in data.ingests if r["condition"] == condition), None)
    phases: dict[str, dict[str, int]] = {}
    for r in calls:
        p = phases.setdefault(r["phase"], {"chat_calls": 0, "embedding_calls": 0, "tokens": 0})
        p[f"{r['kind']}_calls"] += r["calls"]
        p["tokens"] += r["prompt_tokens"] + r["completion_tokens"]
    spent = [r["cost"] for r in calls if r["cost"] is not None]
    return {
        "answer_tokens": answer,
        "memory_llm_calls": sum(r["calls"] for r in chat), "memory_llm_tokens": llm_tokens,
        "memory_embedding_calls": sum(r["calls"] for r in embed), "memory_embedding_tokens": embed_tokens,
        "total_tokens": total, "tokens_per_correct": round(total / correct, 3) if correct else None,
        "ingest_ms_per_turn": round(ingest["ms"], 3) if ingest and ingest["ms"] is not None else None,
        "query_ms": round(sum(queries) / len(queries), 3) if queries else None,
        "observations": len(obs), "correct": correct, "cached_calls": sum(r["cached"] or 0 for r in calls),
        "failed_calls": sum(r["failed"] or 0 for r in calls),
        "memory_cost_usd": round(sum(spent), 6) if spent else None,
        "sources": sorted({r["source"] for r in calls}), "by_phase": phases,
    }
