"""`collapse_whitespace` is `" ".join(text.split())` on every text, the fast path included."""

from __future__ import annotations

import random
import sys

import pytest

from lsrep.text import collapse_whitespace

SPLIT_ON = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
"""Every character `str.split()` splits on (space, the ASCII controls, NBSP, the Unicode spaces)."""


def definition(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("text", [
    "", " ", "a", "one two three", " lead", "trail ", "two  spaces", "tab\there", "line\nbreak",
    "cr\rhere", "vt\x0bhere", "ff\x0chere", "fs\x1chere", "gs\x1dhere", "rs\x1ehere", "us\x1fhere",
    "nbsp\xa0here", "ideographic\u3000space", "café au lait", "emoji 🙂 ok", "end\n", "\tstart",
])
def test_each_kind_of_whitespace(text):
    assert collapse_whitespace(text) == definition(text)


def test_every_character_split_on_in_every_place():
    for ws in SPLIT_ON:
        for text in (f"a{ws}b", f"{ws}a b", f"a b{ws}", f"a {ws}b", f"a{ws}{ws}b", ws):
            assert collapse_whitespace(text) == definition(text), repr(text)


def test_random_texts():
    rng = random.Random(20261207)
    alphabet = [*"abcxyz.,!?'0123456789", " ", " ", " ", "é", "ß", "语", *SPLIT_ON[:12], "\xa0", "\u2028"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert collapse_whitespace(text) == definition(text), repr(text)


def test_an_already_collapsed_text_is_returned_as_it_is():
    text = "Yesterday I baked banana bread. It was more relaxing than I expected."
    assert collapse_whitespace(text) is text
