"""Condition colours: fixed per name, so a system looks the same in every report.

The palette was chosen from the Okabe-Ito, Paul Tol and ColorBrewer sets: every colour has at
least 3:1 contrast against the white page (WCAG 2.1, graphical objects), and every pair stays at
least 19 CIELAB units apart (ΔE76) for normal vision and under simulated protanopia,
deuteranopia and tritanopia (Machado et al. 2009, severity 1). `tests/reports/test_palette.py`
checks both. The bundled systems keep their own colour; any other condition name gets a colour
from a hash of the name, moved to the next free colour when a condition of the same report
already has it, so two reports of the same conditions always agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

PALETTE: tuple[str, ...] = ("#882255", "#999933", "#332288", "#000000", "#CC79A7", "#117733", "#EE6677",
                            "#7570B3")
"""Wine, olive, indigo, black, pink, green, rose, violet."""

FIXED: dict[str, str] = {
    "null": "#999933", "full-context": "#332288", "vector-rag": "#117733", "thalia": "#882255",
    "ice": "#EE6677", "exia-seed": "#CC79A7",
}
"""The bundled systems' conditions, by name."""


def _slot(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") % len(PALETTE)


def condition_colors(conditions: Sequence[str]) -> dict[str, str]:
    """A colour per condition name: fixed names first, the rest by hash, distinct while colours last."""
    names = list(dict.fromkeys(str(c) for c in conditions))
    out = {n: FIXED[n] for n in names if n in FIXED}
    used = set(out.values())
    for name in sorted(n for n in names if n not in out):
        start = _slot(name)
        free = [PALETTE[(start + k) % len(PALETTE)] for k in range(len(PALETTE))
                if PALETTE[(start + k) % len(PALETTE)] not in used]
        colour = free[0] if free else PALETTE[start]
        out[name] = colour
        used.add(colour)
    return {n: out[n] for n in names}
