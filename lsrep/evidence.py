"""Reader-free memory metrics: what the returned context holds, whoever answers from it.

Per observation, from the fragments a system returned (before any answerer truncation):

- `content_recall`: share of the evidence turns of the version(s) in force whose *content* is
  in the context (`TurnIndex.turns_in_context`) — decided by text, so citing more turns
  cannot raise it; None when the expectation names no evidence.
- `answer_in_context`: every in-force version's answer (or an alias) occurs in the context,
  normalised (lowercase, no punctuation or articles, whole words); None when abstention is
  expected.
- `stale_in_context`: a superseded version's answer occurs; None when nothing was superseded.
- `future_in_context`: a version that is not yet true has its answer in the context; None
  when no later version exists.

An answer that also occurs inside a correct answer ("Lisbon" inside "Lisbon and Porto")
cannot tell stale from current and is not counted as stale or future.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lsrep.provenance import TurnIndex
from lsrep.references import Expected
from lsrep.text import normalise_answer


@dataclass(frozen=True)
class EvidenceMetrics:
    content_recall: float | None
    answer_in_context: int | None
    stale_in_context: int | None
    future_in_context: int | None

    def row(self) -> dict[str, float | int | None]:
        return {"content_recall": self.content_recall, "answer_in_context": self.answer_in_context,
                "stale_in_context": self.stale_in_context, "future_in_context": self.future_in_context}


def _forms(version) -> list[str]:
    return [f for f in (normalise_answer(x) for x in (version.answer, *version.aliases)) if f]


def _present(forms: Sequence[str], haystack: str) -> bool:
    return any(f" {f} " in haystack for f in forms)


def evidence_metrics(expected: Expected, texts: tuple[str, ...], index: TurnIndex,
                     turn_index: Mapping[str, int]) -> EvidenceMetrics:
    """The four reader-free metrics of one observation's returned context."""
    evidence = sorted({turn_index[e] for v in expected.in_force for e in v.evidence if e in turn_index})
    recall = None
    if evidence:
        recall = len(index.turns_in_context(evidence, texts)) / len(evidence)
    if not (expected.in_force or expected.superseded or expected.later):
        return EvidenceMetrics(recall, None, None, None)
    # Normalised per fragment (cached) and joined: the same as normalising the joined text.
    haystack = index.context_view(texts)[0] if texts else " "
    current = [_forms(v) for v in expected.in_force]
    current_flat = [f for forms in current for f in forms]

    def distinct(forms: list[str]) -> list[str]:
        # Drop forms that cannot be told apart from a correct answer.
        return [f for f in forms if not any(f" {f} " in f" {c} " or f" {c} " in f" {f} " for c in current_flat)]

    answer = None
    if current and not expected.expect_abstain:
        answer = int(all(_present(forms, haystack) for forms in current))
    stale = None
    if expected.superseded:
        stale = int(any(_present(distinct(_forms(v)), haystack) for v in expected.superseded))
    future = None
    if expected.later:
        future = int(any(_present(distinct(_forms(v)), haystack) for v in expected.later))
    return EvidenceMetrics(recall, answer, stale, future)
