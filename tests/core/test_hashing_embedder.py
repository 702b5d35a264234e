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
