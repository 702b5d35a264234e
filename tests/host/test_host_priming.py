"""The adapter host embeds a prefetched batch's turn contents at once, only where the adapter
embeds turn contents: the vectors its system then gets are those of one-by-one embedding."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lsrep.embed.hashing import HashingEmbedder
from lsrep.host.server import _prime_embedder


def _calls(contents: list[str]) -> list[dict]:
    calls = [{"method": "ingest", "args": [{"$turn": {"content": c}}], "kwargs": {}} for c in contents]
    return [*calls, {"method": "end_session", "args": ["s1"], "kwargs": {}}]


def _adapter(policy: str) -> SimpleNamespace:
    return SimpleNamespace(setup=SimpleNamespace(embedder=HashingEmbedder(64), embedding_text=policy))


def test_a_batch_primes_the_embedder_with_its_turn_contents_and_lookups_match_one_by_one():
    contents = ["I moved to  Lisbon\tin May.", "Café Ñandú, 25:50!", "I moved to  Lisbon\tin May."]
    adapter = _adapter("content")
    _prime_embedder(adapter, _calls(contents))
    embedder = adapter.setup.embedder
    assert embedder._pending == ["I moved to Lisbon in May.", "Café Ñandú, 25:50!"]
    for text in contents:  # what the adapter embeds: embedding_text(turn, "content")
        got = embedder.embed([" ".join(text.split())])[0]
        assert np.array_equal(got, HashingEmbedder(64).embed([text])[0])


def test_no_priming_where_the_adapter_embeds_something_else_or_cannot_batch():
    adapter = _adapter("speaker")
    _prime_embedder(adapter, _calls(["hello there"]))
    assert adapter.setup.embedder._pending == []
    plain = SimpleNamespace(setup=SimpleNamespace(embedder=SimpleNamespace(embed=None), embedding_text="content"))
    _prime_embedder(plain, _calls(["hello there"]))  # no `prime`: nothing to do, no error
    _prime_embedder(SimpleNamespace(), _calls(["hello there"]))
