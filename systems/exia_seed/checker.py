"""The citation checker (`_controler`): a lexical veto on proposed facts, not entailment.

Seed rules: only refs that exist count (invalid ones are silently ignored); no valid source
rejects; agent-only sources reject; every number must appear in the cited text; selected
capitalised names must appear; five-character roots must overlap. Date metadata that the
cited text cannot support is stripped. With `fix.strict_citations`, any unknown ref rejects,
and a fact citing both agent and user lines must be supported by the user lines alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from .prompts import Source
from .relative_dates import relative_days
from .settings import Settings
from .text import (
    capitalised_names,
    date_mentioned,
    digit_groups,
    fold,
    parse_day,
    roots,
    without_dates,
)

NO_VALID_SOURCE = "aucune source valide citée"
AGENT_ONLY = "repose seulement sur des paroles de l'agent"
UNKNOWN_REF = "référence inconnue citée"
USER_UNSUPPORTED = "non confirmé par les paroles de l'utilisateur"


@dataclass(frozen=True)
class Verdict:
    """The checker's decision on one proposed fact."""

    ok: bool
    reason: str
    """`accepté`, or why it was rejected."""
    event: date | None = None
    """Event date kept after the date check."""
    until: date | None = None
    """Deadline kept after the date check."""
    stripped: tuple[str, ...] = ()
    """Date fields removed because the cited text does not support them."""


def cited_refs(frag: Mapping[str, Any]) -> list[str]:
    refs = frag.get("sources", [])
    if isinstance(refs, str):
        refs = [refs]
    return [str(r).strip() for r in refs if str(r).strip()] if isinstance(refs, list) else []


def check_fact(frag: Mapping[str, Any], sources: Mapping[str, Source], settings: Settings) -> Verdict:
    text = frag.get("fait")
    if not isinstance(text, str) or not text.strip():
        return Verdict(False, "fait vide")
    refs = cited_refs(frag)
    valid = [sources[r] for r in refs if r in sources]
    if settings.fix.strict_citations and len(valid) < len(refs):
        return Verdict(False, UNKNOWN_REF)
    if not valid:
        return Verdict(False, NO_VALID_SOURCE)
    if all(s.is_agent for s in valid):
        return Verdict(False, AGENT_ONLY)
    support = valid
    if settings.fix.strict_citations:
        support = [s for s in valid if not s.is_agent]
    cited = " \n".join(s.text for s in support)

    event, until, stripped = _check_dates(frag, support, cited)
    allowed_numbers = digit_groups(cited)
    for d in (event, until):
        if d:
            allowed_numbers |= {str(d.year), str(d.month), str(d.day)}
    missing = sorted(digit_groups(text) - allowed_numbers)
    if missing:
        return Verdict(False, f"nombre absent des sources: {missing[0]}")

    folded = fold(cited)
    for name in capitalised_names(text):
        if fold(name) not in folded:
            return Verdict(False, f"nom absent des sources: {name}")

    fact_roots = roots(without_dates(text), settings.checker_root_chars)
    if not fact_roots:
        return Verdict(False, "fait réduit à une date")
    overlap = len(fact_roots & roots(cited, settings.checker_root_chars))
    if overlap < settings.checker_min_roots or overlap / len(fact_roots) < settings.checker_min_overlap:
        reason = USER_UNSUPPORTED if settings.fix.strict_citations and len(support) < len(valid) else (
            f"recouvrement insuffisant ({overlap}/{len(fact_roots)})")
        return Verdict(False, reason)
    return Verdict(True, "accepté", event, until, stripped)


def _check_dates(
    frag: Mapping[str, Any], support: list[Source], cited: str
) -> tuple[date | None, date | None, tuple[str, ...]]:
    """Keep a date only when a cited source was said that day, names it, or names it relative to
    the day it was said ("yesterday", "last Saturday": relative_dates.py)."""
    kept: list[date | None] = []
    stripped: list[str] = []
    for key in ("date_evenement", "echeance"):
        day = parse_day(frag.get(key))
        if day and not (any(s.day == day.isoformat() for s in support) or date_mentioned(cited, day)
                        or any(day in relative_days(s.text, date.fromisoformat(s.day)) for s in support)):
            stripped.append(key)
            day = None
        kept.append(day)
    return kept[0], kept[1], tuple(stripped)
