"""The campaign's `[memory_llm]` / `[memory_embedder]` tables resolved for one condition.

A condition's own table (`[conditions.X.memory_llm]`, i.e. `memory_llm` inside a
`[[conditions]]` entry) replaces the campaign's; `kind = "offline"` is the built-in responder.
The manifest records each condition's resolved tables without the key (only the name of the
variable that holds it).
"""

from __future__ import annotations

from typing import Any

from lsrep.llm.config import EndpointSpec

ROLES = ("memory_llm", "memory_embedder")


def resolved(campaign_spec: Any, condition: Any) -> dict[str, Any]:
    """`{"memory_llm": spec | None, "memory_embedder": spec | None}` for one condition."""
    return {role: getattr(condition, role, None) or getattr(campaign_spec, role, None) for role in ROLES}


def endpoint_spec(spec: Any) -> EndpointSpec:
    """The client settings of an endpoint-kind table (an empty `api_key_env` sends no key)."""
    window = spec.context_window
    if window is not None and window <= spec.max_tokens:
        window = None  # recorded, not enforced: the library builds its own prompts
    return EndpointSpec(
        base_url=spec.base_url, model=spec.model, api_key_env=spec.api_key_env or None,
        temperature=spec.temperature or 0.0, max_tokens=spec.max_tokens, seed=spec.seed, timeout_s=spec.timeout_s,
        max_retries=spec.max_retries, concurrency=spec.concurrency, context_window=window,
        price_prompt_per_1k=spec.price_prompt_per_1k, price_completion_per_1k=spec.price_completion_per_1k,
    )


def public_spec(spec: Any) -> dict[str, Any] | None:
    """What the adapter host is told: the model name and vector size, nothing about the upstream."""
    if spec is None:
        return None
    from lsrep.memory_model.offline import OFFLINE_MODEL

    return {"model": spec.model or OFFLINE_MODEL, "dimensions": spec.dimensions}


def describe(campaign_spec: Any) -> dict[str, Any]:
    """The manifest's `memory_models`: per condition, each role's table (keys never; variable names only)."""
    out: dict[str, Any] = {}
    for cond in campaign_spec.conditions:
        roles = resolved(campaign_spec, cond)
        out[cond.name] = {role: None if spec is None else spec.model_dump(mode="json", exclude_none=True)
                          for role, spec in roles.items()}
    return out


def table_problems(campaign_spec: Any, environ: Any):
    """(where, problem or None, key) for every memory-side table of a campaign, in file order.

    `where` names the table as written (`[memory_llm]`, `[[conditions]] "X" memory_embedder`) and
    the key; a table without problems yields its key (to register with the redactor)."""
    tables = [(f"[{role}]", role, getattr(campaign_spec, role, None)) for role in ROLES]
    tables += [(f"[[conditions]] {c.name!r} {role}", role, getattr(c, role, None))
               for c in campaign_spec.conditions for role in ROLES]
    for where, role, spec in tables:
        if spec is None:
            continue
        if role == "memory_llm" and spec.dimensions is not None:
            yield f"{where} dimensions", "dimensions is a [memory_embedder] key (the vector size); remove it", None
            continue
        if spec.kind != "endpoint" or not spec.api_key_env:
            continue
        key = environ.get(spec.api_key_env, "")
        if not key:
            yield (f"{where} api_key_env", f"environment variable {spec.api_key_env} is not set; export it (keys "
                   "are read from the environment, never from the file), or set api_key_env = \"\" for a "
                   "server without auth", None)
            continue
        yield where, None, key
