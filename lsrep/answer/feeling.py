"""Feeling and description questions for the offline answerer.

"How did X feel when ...?", "What emotions did X feel ...?", "How does X describe the trip?": the
sentence that matches the question best usually says what happened ("We had a great time throwing a
small party"); how it felt is said by a neighbouring sentence of the same turn ("All the smiles made
it really heartwarming", "It was a really peaceful and awesome experience"). When the best sentence
holds no word of feeling or appraisal, the nearest sentence of its line that does (the following ones
first) answers instead. The word list is plain English, of no particular conversation; everyday praise ("great", "awesome",
"fun") is left out, as every line holds some.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_ASKS = re.compile(
    r"^\W*how\s+(?:did|does|do|is|was|were|has|have|had|would)\b.*\b(?:feel|felt|feeling|describe|described|"
    r"react|reacted|find|found)\b|\bwhat\s+(?:emotions?|feelings?)\b|\bhow\b.*\b(?:make|made|makes)\s+\w+\s+feel\b",
    re.I)
FEELING_WORDS = frozenset("""
happy glad thrilled excited stoked pumped ecstatic elated overjoyed delighted joyful cheerful content proud
grateful thankful blessed lucky touched moved honored honoured humbled relieved calm peaceful relaxed serene
surreal magical incredible wonderful fantastic enjoyable exciting thrilling rewarding awe
fulfilling satisfying heartwarming heartening inspiring inspired motivated empowering empowered uplifting
refreshing meaningful powerful emotional bittersweet nostalgic nervous anxious scared afraid terrified
worried stressed stressful overwhelmed overwhelming frustrated frustrating disappointed disappointing sad upset
heartbroken devastated lonely hurt angry annoyed intense gripping captivating beautiful
breathtaking stunning cozy comfortable welcoming safe confident hopeful optimistic determined
""".split())
PRAISE_WORDS = frozenset("great awesome amazing fun cool nice good lovely special tough hard".split())
"""Everyday appraisal: a best sentence holding one already says how it was; no other sentence is taken for it."""
_WORD = re.compile(r"[a-z]+")


def asks_feeling(question: str) -> bool:
    """The question asks how something felt or how it is described."""
    return bool(_ASKS.search(question))


def feeling_words(text: str) -> list[str]:
    """The words of feeling of a text, as written ("touched", "peaceful")."""
    return [w for w in _WORD.findall(text.lower()) if w in FEELING_WORDS]


_DESCRIBE = re.compile(r"\bdescribe[sd]?\b", re.I)


def feeling_sentence(best: Any, sentences: Sequence[Any], question: str) -> Any | None:
    """The nearest sentence of `best`'s line holding a feeling word (following ones first), when `best`
    holds none beyond the question's own words (for "describe", no everyday praise either); else None."""
    asked = frozenset(w.lower() for w in re.findall(r"[A-Za-z]+", question))
    enough = FEELING_WORDS | PRAISE_WORDS if _DESCRIBE.search(question) else FEELING_WORDS
    if any(w in enough and w not in asked for w in _WORD.findall(best.text.lower())):
        return None
    same = [s for s in sentences if s.line == best.line and s.order != best.order
            and not s.text.lstrip().lower().startswith("shares an image") and not s.text.rstrip().endswith("?")]
    found = [s for s in same if any(w in FEELING_WORDS and w not in asked for w in _WORD.findall(s.text.lower()))]
    if not found:
        return None
    return min(found, key=lambda s: (s.order < best.order, abs(s.order - best.order)))
