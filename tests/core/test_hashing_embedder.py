"""The vectorised hashing embedder gives exactly the vectors of the per-trigram definition."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np

from lsrep.embed.hashing import HashingEmbedder, _bucket


def reference(text: str, dim: int) -> np.ndarray:
    """Seed-systems 3.3.5 as written: signed SHA-1 buckets of character trigrams, L2-normalised."""
    norm = " ".join(text.lower().split())
    if not norm:
        return np.zeros(dim)
    padded = f"  {norm}  "
    vec = np.zeros(dim)
    for trigram, n in Counter(padded[i : i + 3] for i in range(len(padded) - 2)).items():
        bucket, sign = _bucket(trigram, dim)
        vec[bucket] += sign * n
    length = float(np.linalg.norm(vec))
    return vec / length if length > 0 else vec


def test_vectors_equal_the_per_trigram_definition_across_scripts_and_sizes():
    rng = random.Random(5)
    alphabet = "abc DEF xyz\u00e9\u00df\u4e2d\u0130\U0001F600\U00010348 \t\n.,"
    embedders = [HashingEmbedder(16), HashingEmbedder(512)]
    ascii_only = "abcdefXYZ 0123~\t\n.,;!?'\"{}"
    texts = ["", "   ", "a", "ab", "Hello, World", "\x7f\x01~ z"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(1500)] + [
        "".join(rng.choice(ascii_only) for _ in range(rng.randint(0, 300))) for _ in range(1500)]
    assert sum(t.isascii() for t in texts) > 1500 and sum(not t.isascii() for t in texts) > 1000
    for embedder in embedders:
        got = embedder.embed(texts)
        for row, text in zip(got, texts, strict=True):
            assert np.array_equal(row, reference(text, embedder.dim)), repr(text)


def _random_texts(rng: random.Random, n: int) -> list[str]:
    alphabet = "abc DEF xyz\u00e9\u00df\u4e2d\u0130\u03a3\u212a\U0001F600\U00010348 \t\n\u00a0\u2028.,"
    ascii_only = "abcdefXYZ 0123~\t\n.,;!?'\"{}"
    return [("".join(rng.choice(alphabet if i % 2 else ascii_only) for _ in range(rng.randint(0, 200))))
            for i in range(n)]


def test_batched_and_primed_vectors_are_bit_for_bit_the_one_text_vectors():
    """Texts embedded together (one call, several chunks, or primed then looked up) get exactly
    the bytes each gets alone, so a system's rankings cannot change with the batching."""
    from lsrep.embed import hashing

    rng = random.Random(11)
    texts = _random_texts(rng, 2000) + ["", "  ", "x", "\u0130stanbul \u03a3\u03a3", "AB  cd\t\tE"]
    alone = HashingEmbedder(64)
    singles = np.array([alone.embed([t])[0] for t in texts])
    for text, row in zip(texts[:300], singles[:300], strict=True):
        assert np.array_equal(row, reference(text, 64)), repr(text)
    together = HashingEmbedder(64).embed(texts)
    assert together.tobytes() == singles.tobytes()
    chunked = HashingEmbedder(64)
    original = hashing.BATCH_CHARS
    hashing.BATCH_CHARS = 97  # many chunk boundaries
    try:
        assert chunked.embed(texts).tobytes() == singles.tobytes()
        primed = HashingEmbedder(64)
        primed.prime(texts)
        assert primed._pending, "nothing primed"
        # a system embeds `embedding_text(turn, "content")`: the whitespace-collapsed content
        looked_up = np.array([primed.embed([" ".join(t.split())])[0] for t in texts])
    finally:
        hashing.BATCH_CHARS = original
    assert looked_up.tobytes() == singles.tobytes()
    assert not primed._primed and not primed._pending_set, "primed vectors are handed out once"


def test_a_primed_embedder_still_embeds_texts_it_was_not_primed_with():
    embedder = HashingEmbedder(32)
    embedder.prime(["alpha beta", "gamma"])
    got = embedder.embed(["delta", "alpha beta", "Alpha  Beta"])
    for row, text in zip(got, ["delta", "alpha beta", "Alpha  Beta"], strict=True):
        assert np.array_equal(row, reference(text, 32))
    embedder.prime(["other"])
    assert embedder._pending == ["other"] and not embedder._primed, "a new batch replaces the last"
