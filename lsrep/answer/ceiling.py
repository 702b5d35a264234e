"""The answerer-and-judge ceiling: accuracy when the context is exactly each question's gold evidence.

No memory system is involved: every answerable probe is answered from its own
evidence turns (rendered as adapters render turns, in turn order, asked at the
time of the latest evidence turn) and labelled by the judge. What it measures is
the reader and the judge, so a memory comparison can say how much of the gap to
1.0 they, not memory, account for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsrep.contract import Fragment
from lsrep.judge.verdict import JudgeCase, Verdict, VersionView


@dataclass(frozen=True)
class CategoryCeiling:
    """Ceiling figures for one probe category."""

    category: str
    n: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")


@dataclass(frozen=True)
class CeilingResult:
    """Answerable accuracy with gold-evidence context, overall and per category."""

    n: int
    correct: int
    per_category: tuple[CategoryCeiling, ...]
    misses: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    """(probe id, category, question, reference, answer, outcome) for every miss."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")


def render_turn(turn: Any) -> str:
    """`[2026-03-02 09:15] Ana (user): text`, the line adapters give systems for a turn."""
    who = f"{turn.speaker} ({turn.role})" if turn.speaker else turn.role
    return f"[{turn.timestamp.strftime('%Y-%m-%d %H:%M')}] {who}: {' '.join(turn.content.split())}"


def evidence_ceiling(
    conversations: Iterable[Any],
    *,
    answer: Callable[[str, Sequence[Fragment], Any], str] | None = None,
    judge: Callable[[JudgeCase], Verdict] | None = None,
) -> CeilingResult:
    """Answer every answerable probe of each conversation (``.turns``, ``.probes``) from its evidence.

    `answer(question, fragments, now)` defaults to the offline extractive answerer,
    `judge` to the deterministic judge. Probes with no evidence turns are left out.
    """
    if answer is None:
        from lsrep.answer.extractive import ExtractiveAnswerer

        answer = ExtractiveAnswerer().answer
    if judge is None:
        from lsrep.judge.deterministic import judge_deterministic

        judge = judge_deterministic
    tally: dict[str, list[int]] = {}
    misses: list[dict[str, Any]] = []
    for conv in conversations:
        turns = {t.turn_id: (i, t) for i, t in enumerate(conv.turns)}
        for probe in conv.probes:
            if probe.kind == "abstention" or not probe.references:
                continue
            version = probe.references[-1]
            evidence = sorted((turns[e] for e in set(version.evidence) if e in turns), key=lambda p: p[0])
            if not evidence:
                continue
            fragments = [Fragment(text=render_turn(t), source_turn_ids=(t.turn_id,)) for _, t in evidence]
            now = evidence[-1][1].timestamp
            text = answer(probe.question, fragments, now)
            case = JudgeCase(question=probe.question, answer=text, kind="current", category=probe.category,
                             expect_abstain=False,
                             in_force=(VersionView(answer=version.answer, aliases=version.aliases,
                                                   valid_from=version.valid_from),),
                             now=now.isoformat())
            verdict = judge(case)
            cat = probe.category or "uncategorised"
            counts = tally.setdefault(cat, [0, 0])
            counts[0] += 1
            counts[1] += int(verdict.correct)
            if not verdict.correct:
                misses.append({"probe_id": probe.probe_id, "category": cat, "question": probe.question,
                               "reference": version.answer, "answer": text, "outcome": verdict.outcome})
    per = tuple(CategoryCeiling(c, n, k) for c, (n, k) in sorted(tally.items()))
    return CeilingResult(n=sum(c.n for c in per), correct=sum(c.correct for c in per), per_category=per,
                         misses=tuple(misses))
