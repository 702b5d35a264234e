"""A memory system's own model: campaign tables, the local gateway, the offline responder, accounting.

A condition may give its memory system a chat model (`[memory_llm]`) and an embedder
(`[memory_embedder]`), distinct from the answerer and the judge. The adapter receives them as
`setup.memory_llm` / `setup.memory_embedder`: a local OpenAI-compatible gateway on 127.0.0.1 with a
dummy key (`gateway`, `handles`), so libraries that insist on their own OpenAI client can use it.
Inside the adapter host the gateway relays every request over the host wire to the harness, where
the relay (`relay`) answers it through LSREP's client (`upstream`: cache, retries, limits,
redaction) or the deterministic offline responder (`offline`, `schema_fill`), and records it
(`accounting`) with the condition, unit, phase and turn or probe it belongs to. See
docs/memory-model.md.
"""

from __future__ import annotations

GATEWAY_KEY = "lsrep-gateway"
"""The dummy key the adapter's clients send the gateway; not a secret (the real key stays in the harness)."""
