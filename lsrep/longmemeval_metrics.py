"""LongMemEval's own metrics, re-implemented from the official definitions.

The official evaluation (xiaowu0162/LongMemEval: ``src/evaluation/print_qa_metrics.py``,
``src/retrieval/run_retrieval.py`` and ``src/retrieval/eval_utils.py``) defines:

- **Corpus ids** (``process_item_flat_index``, turn granularity): one item per *user*
  turn, id ``<session id>_<turn index from 1 over all turns>``; in a session whose id
  contains ``answer``, a user turn without ``has_answer`` gets ``answer`` replaced by
  ``noans`` in its id (every occurrence, as ``str.replace`` does). The correct items
  are the corpus ids that still contain ``answer``.
- **Retrieval metrics** per question at k in 1, 3, 5, 10, 30, 50: ``recall_any@k``
  (some correct item in the top k), ``recall_all@k`` (every correct item; 1.0 when
  there is none), ``ndcg_any@k`` (binary relevance, the ideal over the whole corpus).
  Session level is derived from the turn ranking: ids lose their last ``_<n>``, and k
  grows until the top k' turns span k distinct sessions (``evaluate_retrieval_turn2session``).
  Averages leave out questions whose id contains ``_abs``.
- **QA metrics**: accuracy per question type over the six official types (``_abs``
  questions included in their type), task-averaged accuracy (mean of the six),
  overall accuracy (mean over all questions), abstention accuracy (questions whose
  id contains ``_abs``). A type with no question has no accuracy, and then neither
  has the task average (the official script prints ``nan``).

LSREP's ranking is the order in which a system returned its context: each
fragment's source turns, in rank order, first mention wins; turns the system did
not return are not ranked (they count in the ideal DCG, as in the official code).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
"""The cut-offs the official retrieval code records."""
OFFICIAL_TYPES: tuple[str, ...] = (
    "single-session-user", "single-session-preference", "single-session-assistant",
    "multi-session", "temporal-reasoning", "knowledge-update",
)
"""The question types `print_qa_metrics.py` reports, in its order."""
SESSION_SHOWN: tuple[str, ...] = ("recall_all@5", "ndcg_any@5", "recall_all@10", "ndcg_any@10")
"""Session-level metrics `print_retrieval_metrics.py` prints."""
TURN_SHOWN: tuple[str, ...] = (*SESSION_SHOWN, "recall_all@50", "ndcg_any@50")
"""Turn-level metrics `print_retrieval_metrics.py` prints."""


def is_abstention(question_id: str) -> bool:
    """The official test for an abstention question."""
    return "_abs" in question_id


def turn_corpus_id(session_id: str, index: int, has_answer: bool) -> str:
    """Corpus id of the user turn at 0-based ``index`` (over all turns) of a session."""
    item = f"{session_id}_{index + 1}"
    if "answer" in session_id and not has_answer:
        item = item.replace("answer", "noans")
    return item


def session_of(corpus_id: str) -> str:
    """A turn's corpus id without its last ``_<n>`` (the official ``strip_turn_id``)."""
    return "_".join(corpus_id.split("_")[:-1])


def _dcg(relevances: Sequence[float], k: int) -> float:
    rel = np.asarray(relevances, dtype=float)[:k]
    if rel.size:
        return float(rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1))))
    return 0.0


def _evaluate(rankings: Sequence[int], correct: Sequence[str], corpus_ids: Sequence[str],
              k: int) -> tuple[float, float, float]:
    recalled = {corpus_ids[i] for i in rankings[:k]}
    recall_any = float(any(doc in recalled for doc in correct))
    recall_all = float(all(doc in recalled for doc in correct))
    wanted = set(correct)
    relevances = [1 if doc in wanted else 0 for doc in corpus_ids]
    ideal = _dcg(sorted(relevances, reverse=True), k)
    actual = _dcg([relevances[i] for i in rankings[:k]], k)
    return recall_any, recall_all, (actual / ideal if ideal else 0.0)


def _session_k(rankings: Sequence[int], sessions: Sequence[str], k: int) -> int:
    """The official effective k: the first k' >= k whose top k' span k sessions (else corpus + 1)."""
    n = len(sessions)
    seen: set[str] = set()
    for position, i in enumerate(rankings, start=1):
        seen.add(sessions[i])
        if position >= k and len(seen) >= k:
            return position
    # Past the ranked list the distinct count no longer grows, so the official loop runs out.
    return k if k > n else n + 1


def retrieval_metrics(rankings: Sequence[int], corpus_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per-question ``{"session": {...}, "turn": {...}}`` as the official turn-granularity run records."""
    correct = sorted({c for c in corpus_ids if "answer" in c})
    sessions = [session_of(c) for c in corpus_ids]
    correct_sessions = sorted({session_of(c) for c in correct})
    out: dict[str, dict[str, float]] = {"session": {}, "turn": {}}
    for k in KS:
        for level, ids, wanted, cut in (
            ("turn", corpus_ids, correct, k),
            ("session", sessions, correct_sessions, _session_k(rankings, sessions, k)),
        ):
            any_, all_, ndcg = _evaluate(rankings, wanted, ids, cut)
            out[level].update({f"recall_any@{k}": any_, f"recall_all@{k}": all_, f"ndcg_any@{k}": ndcg})
    return out


def rank_corpus(context_turns: Iterable[Sequence[str]], position: Mapping[str, int]) -> list[int]:
    """Corpus indices in the order a context cites them (first mention wins; non-corpus turns skipped)."""
    ranked: list[int] = []
    seen: set[int] = set()
    for fragment in context_turns:
        for turn in fragment:
            i = position.get(turn)
            if i is not None and i not in seen:
                seen.add(i)
                ranked.append(i)
    return ranked


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def qa_metrics(labels: Iterable[tuple[str, str, bool]]) -> dict[str, Any]:
    """Official QA metrics from ``(question_id, question_type, label)`` triples."""
    by_type: dict[str, list[int]] = {t: [] for t in OFFICIAL_TYPES}
    every: list[int] = []
    abstention: list[int] = []
    for question_id, question_type, label in labels:
        value = 1 if label else 0
        by_type.setdefault(question_type, []).append(value)
        every.append(value)
        if is_abstention(question_id):
            abstention.append(value)
    per_type = {t: {"accuracy": _mean(v), "n": len(v)} for t, v in by_type.items()}
    type_means = [per_type[t]["accuracy"] for t in OFFICIAL_TYPES]
    task = None if any(m is None for m in type_means) else float(np.mean(type_means))
    return {
        "per_type": per_type,
        "task_averaged": task,
        "overall": _mean(every),
        "n": len(every),
        "abstention": {"accuracy": _mean(abstention), "n": len(abstention)},
    }


def average_retrieval(entries: Iterable[tuple[str, Mapping[str, Mapping[str, float]]]]) -> dict[str, Any]:
    """Mean per-question metrics over non-``_abs`` questions: ``{"session", "turn", "n"}``."""
    kept = [m for qid, m in entries if not is_abstention(qid)]
    out: dict[str, Any] = {"n": len(kept)}
    for level in ("session", "turn"):
        names = list(kept[0][level]) if kept else []
        out[level] = {name: float(np.mean([m[level][name] for m in kept])) for name in names}
    return out


def fmt(value: float | None, digits: int = 4) -> str:
    """A metric as the official scripts round it (``n/a`` where it is undefined)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return str(round(value, digits))
