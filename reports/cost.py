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
        "select condition, sum(turns) turns, sum(total_ms) / sum(turns) ms from unit_ingests "
        "where run_id = ? and turns > 0 group by condition",
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


def cost_section(ctx: Any) -> Any:
    """The report's "Quality against context cost" section: the cost block as a table, and headline
    against fragments and total tokens per observation."""
    from lsrep.reports.common import group
    from lsrep.reports.tree import Column, Figure, Section, Table

    from lsrep.headline import HEADLINE_METRIC

    by_cond = group(ctx.data.observations, "condition")
    rows, points = [], []
    usage = any(o["usage_prompt_tokens"] is not None for o in ctx.data.observations)
    memory = bool(ctx.data.memory_calls)
    blocks = any(o.get("system_context_tokens") is not None for o in ctx.data.observations)
    for cond in ctx.conditions:
        obs = by_cond.get(cond, [])
        ok = [o for o in obs if o["status"] == "ok"]
        acc = ctx.metrics.score(cond).headline
        frags = ctx.mean(ok, lambda o: o["n_fragments"], "fragments", cond)
        ctx_tokens = ctx.mean(ok, lambda o: o["context_tokens"], "context_tokens", cond)
        prompt = ctx.mean(ok, lambda o: o["prompt_tokens"], "prompt_tokens", cond)
        spent = cost_block(ctx.data, cond)
        per_obs = spent["total_tokens"] / len(obs) if obs else None
        row = {"condition": cond, "accuracy": acc, "fragments": frags, "context_tokens": ctx_tokens,
               "prompt_tokens": prompt, "query_ms": ctx.mean(ok, lambda o: o["query_ms"], "query_ms", cond).value,
               "memory_tokens": (spent["memory_llm_tokens"] + spent["memory_embedding_tokens"]) / len(obs) if obs
               else None, "memory_calls": spent["memory_llm_calls"] + spent["memory_embedding_calls"],
               "total_tokens": per_obs, "ingest_ms": spent["ingest_ms_per_turn"]}
        if usage:
            row["usage"] = ctx.mean(ok, lambda o: o["usage_prompt_tokens"], "usage", cond)
        if blocks:
            row["system_block"] = ctx.mean(ok, lambda o: o.get("system_context_tokens"), "system_block", cond)
        rows.append(row)
        points.append({"condition": cond, "accuracy": acc.value, "lo": acc.interval[0], "hi": acc.interval[1],
                       "fragments": frags.value, "prompt_tokens": prompt.value, "total_tokens": per_obs})
    columns = [
        Column("condition", "Condition", "condition"),
        Column("accuracy", "Headline", "rate_estimate", f"{HEADLINE_METRIC}; {ctx.settings.ci_label}"),
        Column("fragments", "Fragments / obs.", "estimate", ctx.settings.ci_label),
        Column("context_tokens", "Context tokens / obs.", "estimate"),
        Column("prompt_tokens", "Prompt tokens / obs.", "estimate", "whole answer prompt"),
        Column("memory_calls", "Memory-model calls", "int", "the system's own chat + embedding calls"),
        Column("memory_tokens", "Memory-model tokens / obs.", "number", "all memory-side tokens / observations"),
        Column("total_tokens", "Total tokens / obs.", "number", "answer + memory-side tokens / observations"),
        Column("ingest_ms", "Ingest ms / turn", "ms"),
        Column("query_ms", "Query ms (mean)", "ms"),
    ]
    if not memory:
        columns = [c for c in columns if c.key not in ("memory_calls", "memory_tokens")]
    if usage:
        columns.insert(5, Column("usage", "Endpoint prompt tokens", "estimate", "reported usage"))
    if blocks:
        columns.insert(4, Column("system_block", "System block tokens / obs.", "estimate",
                                 "its own context_text; in the prompt under context_format = system"))
    fig = Figure(
        "fig-cost", "cost", "Quality against context cost", {"points": points},
        caption=f"Headline ({HEADLINE_METRIC}, {ctx.settings.ci_label}) against mean fragments (left) and total "
                "tokens per observation (right): the answer prompt plus everything the memory system's own model "
                "spent.",
        alt="Accuracy plotted against mean fragments and total tokens per observation per condition.",
    )
    return Section(
        "cost", "Quality against context cost",
        "Quality is only half the story: what each condition spent to get it — fragments returned, tokens in "
        "the answer prompt (one common estimator for every system), and the tokens the memory system's own "
        "model used to ingest, maintain and search (every call through its gateway, recorded per phase).",
        (fig, Table(tuple(columns), tuple(rows), notes=(
            "Cost means are over observations whose query succeeded (status ok); the headline over all "
            "answerable observations. Total tokens / obs. divide a condition's whole spend (answers, memory "
            "chat and embeddings, cache hits included) by its observations; report.json has the `cost` block.",
            ctx.settings.boot_note))),
    )
