"""`fold_joined(parts)` is `fold(" ".join(parts))` (the summary check folds a page's whole text
from its facts' cached folds), on random texts built from the characters that could tell them
apart: a final sigma at a part's edge, combining marks at its start, spacing accents and
ligatures that decompose to a space or letters, odd whitespace, empty and blank parts."""

from __future__ import annotations

import random

from lsrep.systems.exia_seed.text import fold, fold_joined

POOL = ["a", "B", "Σ", "σ", "ς", "Α", "\u0301", "\u0327", "\u0345", "\u00b4", "\u00a8", "\u00a0", " ", "\t", "\n",
        "\u2028", "\u3000", "'", ".", "\u0130", "\ufb01", "\u2460", "\uac00", "É", "ß", "1", "-", "\u200d"]


def test_joined_folds_equal_the_fold_of_the_joined_text():
    rng = random.Random(11)
    for _ in range(5000):
        parts = ["".join(rng.choices(POOL, k=rng.randint(0, 6))) for _ in range(rng.randint(0, 5))]
        assert fold_joined(parts) == fold(" ".join(parts)), parts


def test_a_final_sigma_at_a_part_edge_folds_as_in_the_whole_text():
    for parts in (["ΟΔΟΣ", "ΑΣ"], ["ΑΣ.", "x"], ["Σ", "Σ"], ["", "ΑΣ", ""], ["ΑΣ\u0301", "\u0301Β"]):
        assert fold_joined(parts) == fold(" ".join(parts))
    assert fold_joined(["ΟΔΟΣ", "ΑΣ"]) == "οδος ας"
