"""List questions for the offline answerer: which questions gather items, and how they are gathered.

"What activities has Melanie done?", "Which cities has Jon visited?", "Where has X camped?": the
answer is spread over several turns, one item in each, so the answerer takes one span from the
best sentence of every line that matches well enough instead of the single best sentence.
"""

from __future__ import annotations

import re

LIST_SHARE = 0.34
"""A list question gathers the best sentence of every line scoring at least this share of the best."""
LIST_MAX = 6


def asks_for_list(question: str) -> bool:
    """"What activities...", "Which cities...", "Where has X camped?", "What has X painted?": the answer
    gathers items from several lines."""
    q = question.strip()
    if re.match(r"^\W*(?:where|what|who)\s+(?:has|have)\b", q, re.I):
        return True
    m = re.match(r"^\W*(?:what|which)\s+((?:[\w'’+-]+\s+){0,3}?)(?:do|does|did|has|have|had|are|were|is|was|can|"
                 r"could|would|will)\b", q, re.I)
    if not m:
        return False
    head = m.group(1).split()
    return any(w.lower().endswith("s") and not w.lower().endswith(("ss", "'s", "’s", "us", "is"))
               for w in head) and not any(w.lower() in ("kind", "type", "sort") for w in head)


def list_of(scored: list, best_score: float, piece) -> str:
    """One piece (`piece(sentence, shared)`) from the best sentence of each line scoring at least
    LIST_SHARE of the best, at most LIST_MAX, joined by "; "."""
    parts: list[str] = []
    lines: set[str] = set()
    for score, _, s, sh in scored:
        if score < best_score * LIST_SHARE or len(parts) == LIST_MAX:
            break
        if s.line in lines:
            continue
        lines.add(s.line)
        text = piece(s, sh)
        if text and text.lower() not in (p.lower() for p in parts):
            parts.append(text)
    return "; ".join(parts)
