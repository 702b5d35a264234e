"""LoCoMo's official QA metric, re-implemented from its definition so a LoCoMo run can sit beside
published numbers.

The definitions follow `task_eval/evaluation.py` in snap-research/LoCoMo:

- normalisation: commas deleted, lower-cased, ASCII punctuation deleted, the words a / an / the / and
  replaced by a space, whitespace collapsed;
- tokens: whitespace split of the normalised text, each Porter-stemmed (NLTK's `PorterStemmer`, the
  stemmer the official script uses);
- token F1 between prediction and reference (0 when no token is shared);
- category 1 (multi-hop): prediction and reference are split on `,`; for every reference part the
  best F1 of any prediction part, averaged over the reference parts;
- categories 2, 3, 4 (temporal, open-domain, single-hop): plain F1; in category 3 the reference is
  cut at its first `;`;
- category 5 (adversarial): 1 when the answer contains "no information available" or "not
  mentioned" (case-insensitive), else 0;
- evidence recall: share of the question's evidence dialogue ids present in the context (1 when the
  question lists no evidence, as the official script counts it).

This is a scorer beside LSREP's labels, not a replacement: it knows nothing of revisions.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable
from functools import cache

CATEGORY_NUMBERS: dict[str, int] = {
    "multi-hop": 1, "temporal": 2, "open-domain": 3, "single-hop": 4, "adversarial": 5,
}
"""LSREP's LoCoMo category names (lsrep.probes.locomo) → the official category numbers."""
ABSTAIN_MARKERS = ("no information available", "not mentioned")
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = frozenset(string.punctuation)


@cache
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def normalize_answer(text: str) -> str:
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    stem = _stemmer().stem
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = tokens(prediction), tokens(reference)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, reference: str) -> float:
    """Category 1: mean over reference parts of the best F1 of any prediction part (split on `,`)."""
    preds = [p.strip() for p in prediction.split(",")]
    refs = [r.strip() for r in reference.split(",")]
    return sum(max(token_f1(p, r) for p in preds) for r in refs) / len(refs)


def category_number(category: str | int | None) -> int | None:
    if isinstance(category, int):
        return category if 1 <= category <= 5 else None
    return CATEGORY_NUMBERS.get(str(category or "").lower())


def score(prediction: str | None, reference: str, category: str | int | None) -> float:
    """The official per-question score; an absent prediction scores 0 (an empty answer)."""
    number = category_number(category)
    if number is None:
        raise ValueError(f"not a LoCoMo category: {category!r}")
    output = prediction or ""
    if number == 5:
        low = output.lower()
        return 1.0 if any(marker in low for marker in ABSTAIN_MARKERS) else 0.0
    if number == 3:
        reference = reference.split(";")[0].strip()
    if number == 1:
        return multi_answer_f1(output, reference)
    return token_f1(output, reference)


def evidence_recall(evidence: Iterable[str], context_ids: Iterable[str]) -> float:
    """Share of the question's evidence dialogue ids present in the context (1 without evidence)."""
    ev = list(evidence)
    if not ev:
        return 1.0
    present = set(context_ids)
    return sum(1 for e in ev if e in present) / len(ev)
