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
_IRREGULAR_PLURALS = frozenset("people children men women kids".split())


def _plural(word: str) -> bool:
    w = word.lower()
    return w in _IRREGULAR_PLURALS or (w.endswith("s") and not w.endswith(("ss", "'s", "’s", "us", "is")))


def asks_for_list(question: str) -> bool:
    """"What activities...", "Which cities...", "In which cities...", "Where has X camped?", "What has X
    painted?": the answer gathers items from several lines."""
    q = question.strip()
    if re.match(r"^\W*(?:where|what|who)\s+(?:has|have)\b", q, re.I):
        return True
    if re.match(r"^\W*(?:what|which)\s+(?:are|were)\s+(?:the\s+names\b|(?:\w+(?:'s|’s|s')\s+)?(?:[\w-]+\s+)?"
                r"[\w-]+s(?:'|’)?(?:\s+names)?\W*$)", q, re.I):
        return True  # "What are the names of X's kids?", "What are X's pets' names?", "What are X's hobbies?"
    m = re.match(r"^\W*(?:what|which)\s+(?:are|were)\s+(?:the|some)\s+(?:[\w-]+\s+)??([\w-]+)\s+(?:that|which|who|"
                 r"(?:\w+\s+)?(?:has|have|had|does|do|did)\b)", q, re.I)
    if m and _plural(m.group(1)):
        return True  # "What are the skills that X has taught?", "What are some changes X has faced?"

    m = re.match(r"^\W*(?:(?:in|at|to|from|for|with|on|of|by)\s+)?(?:what|which)\s+((?:[\w'’+/.-]+\s+){0,5}?)(?:do|does|did|has|have|had|are|were|is|was|can|"
                 r"could|would|will)\b", q, re.I)
    if not m:
        return False
    head = m.group(1).split()
    head = [p for w in head for p in w.split("/")]  # "artists/bands"
    return any(w.lower() in _IRREGULAR_PLURALS or w.lower().endswith("s") and not w.lower().endswith(("ss", "'s", "’s", "us", "is"))
               for w in head) and not any(w.lower() in ("kind", "type", "sort") for w in head)


def list_of(scored: list, best_score: float, piece, share: float = LIST_SHARE, *, itemised: bool = False) -> str:
    """One piece (`piece(sentence, shared)`) from the best sentence of each line scoring at least
    `share` of the best, at most LIST_MAX, joined by "; ". `itemised` (v8: pieces that are ", "-joined
    instances, "yoga, kickboxing", "Luna, Oliver"): every instance once, the whole list joined by ", "."""
    parts: list[str] = []
    lines: set[str] = set()
    for score, _, s, sh in scored:
        if score < best_score * share or len(parts) == LIST_MAX:
            break
        if s.line in lines:
            continue
        lines.add(s.line)
        text = piece(s, sh)
        if text and text.lower() not in (p.lower() for p in parts):
            parts.append(text)
    if itemised:
        return ", ".join(dict.fromkeys(i for p in parts for i in p.split(", ") if i))
    return "; ".join(parts)
