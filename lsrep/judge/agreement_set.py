"""The judge agreement set: hand-labelled (question, reference versions, answer, label) items.

`agreement_set.jsonl` (package data beside this module) holds items written and
labelled by a person, each with the outcome label a careful human gives
(`correct`, `stale`, `future`, `abstained`, `wrong`), in families: date formats
and partial dates, numbers, durations, "X or Y" alternatives, lists in any order,
abstention phrasings, revisions (stale, future, hedges holding the old and the new
value), people, free text, yes/no and plain spans, with hard negatives in each
(near-miss dates, the wrong person, the stale value, a coarser date); judge v7 adds
`negation` (`neg7-*`): denials of one item, of a list, of a dated event, hedged
denials and hedged assertions, and what a negation must leave credited ("not only",
"nothing but", "not X but Y", "never missed", a value marked past).

`measure()` runs a judge over every item and reports how often its label equals
the human one. `lsrep calibrate` reports it as the judge agreement.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from lsrep.errors import InputError
from lsrep.judge.verdict import OUTCOMES, JudgeCase, Verdict, VersionView

AGREEMENT_SET = "agreement_set.jsonl"
_FIELDS = {"id", "family", "question", "kind", "expect_abstain", "in_force", "superseded", "later", "answer", "label"}


@dataclass(frozen=True)
class AgreementItem:
    """One labelled item: the case a judge sees and the human label."""

    item_id: str
    family: str
    case: JudgeCase
    label: str


@dataclass(frozen=True)
class Disagreement:
    """An item where the judge's label differs from the human one."""

    item_id: str
    family: str
    question: str
    references: tuple[str, ...]
    answer: str
    human: str
    judge: str


@dataclass(frozen=True)
class AgreementResult:
    """How often a judge's outcome label equals the human label over the set."""

    n: int
    """Items judged."""
    agreed: int
    """Items where the judge's outcome label equals the human one."""
    rate: float
    """agreed / n (NaN for an empty set)."""
    disagreements: list[Disagreement] = field(default_factory=list)
    """Every item where the labels differ, in set order."""
    per_family: dict[str, tuple[int, int]] = field(default_factory=dict)
    """family -> (n, agreed)."""


def _versions(raw: Any, name: str, line: int) -> tuple[VersionView, ...]:
    if not isinstance(raw, list) or not all(isinstance(v, dict) and "answer" in v for v in raw):
        raise InputError(name, "expected a list of versions, each with an 'answer'", line)
    return tuple(VersionView(answer=v["answer"], aliases=tuple(v.get("aliases", ())),
                             valid_from=v.get("valid_from", "t0"), valid_until=v.get("valid_until"))
                 for v in raw)


def load_items(path: Path | str | None = None) -> list[AgreementItem]:
    """The items of the bundled set (or of a JSONL file in the same format)."""
    if path is None:
        text = resources.files("lsrep.judge").joinpath(AGREEMENT_SET).read_text(encoding="utf-8")
        name = AGREEMENT_SET
    else:
        text, name = Path(path).read_text(encoding="utf-8"), str(path)
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(name, f"not JSON ({exc.msg})", number) from exc
        missing = _FIELDS - row.keys() if isinstance(row, dict) else _FIELDS
        if missing:
            raise InputError(name, f"missing keys {sorted(missing)}", number)
        if row["label"] not in OUTCOMES:
            raise InputError(name, f"label {row['label']!r} is not one of {list(OUTCOMES)}", number)
        try:
            case = JudgeCase(question=row["question"], answer=row["answer"], kind=row["kind"],
                             expect_abstain=bool(row["expect_abstain"]),
                             in_force=_versions(row["in_force"], name, number),
                             superseded=_versions(row["superseded"], name, number),
                             later=_versions(row["later"], name, number))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise InputError(name, f"not a valid judge case ({exc.__class__.__name__}: {str(exc)[:200]})",
                             number) from exc
        items.append(AgreementItem(row["id"], row["family"], case, row["label"]))
    return items


def measure(judge: Callable[[JudgeCase], Verdict] | None = None, path: Path | str | None = None) -> AgreementResult:
    """Run `judge` (default: the deterministic judge) over the set and compare labels."""
    if judge is None:
        from lsrep.judge.deterministic import judge_deterministic

        judge = judge_deterministic
    items = load_items(path)
    agreed = 0
    disagreements = []
    families: dict[str, list[int]] = {}
    for item in items:
        outcome = judge(item.case).outcome
        tally = families.setdefault(item.family, [0, 0])
        tally[0] += 1
        if outcome == item.label:
            agreed += 1
            tally[1] += 1
        else:
            refs = tuple(v.answer for v in (*item.case.in_force, *item.case.superseded, *item.case.later))
            disagreements.append(Disagreement(item.item_id, item.family, item.case.question, refs,
                                              item.case.answer, item.label, outcome))
    rate = agreed / len(items) if items else float("nan")
    return AgreementResult(n=len(items), agreed=agreed, rate=rate, disagreements=disagreements,
                           per_family={f: (n, k) for f, (n, k) in sorted(families.items())})
