"""The OpenAI-compatible model layer: endpoint specs, the client, cache, judges, embedders.

Everything that talks to a language model or an embeddings endpoint goes through
`lsrep.llm.client.LLMClient`, which returns a `CallRecord` for every call. Import the
submodules directly: this package imports nothing eagerly, so the harness can use the
pure parts (`lsrep.llm.context`, `lsrep.judge.agreement`) without loading the openai client.
"""
