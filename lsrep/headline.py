"""What a condition scored, split so that no score can be won by abstaining.

Every summary (`lsrep show`, `lsrep report` in all formats, `lsrep longmemeval`) takes its
per-condition numbers from `condition_scores`:

- answerable accuracy: observations whose reference at the checkpoint is an answer (not an
  abstention), with a cluster-bootstrap interval over probes;
- abstention accuracy: observations where abstaining is the correct response, on its own;
- the headline: the unweighted mean over answerable *strata* of each stratum's answerable
  accuracy (LongMemEval's task-averaged style). A stratum is the probe's category when it has
  one, else its kind (current, historical, evolution). Abstention is excluded from the headline,
  so a system that always abstains scores 0 on it wherever answerable probes exist.

Ranking uses the headline; calibration systems (`lsrep.calibration`) are never ranked.
See docs/scores.md.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsrep import stats

HEADLINE_METRIC = "category-mean answerable accuracy"
"""Name of the headline metric as reports print it."""
HEADLINE_DEFINITION = (
    "Headline = unweighted mean over answerable strata (the probe's category, else its kind) of the "
    "share of answerable observations credited correct; observations whose correct response is to "
    "abstain are reported separately as abstention accuracy and never enter the headline or the ranking.")
CALIBRATION_SYSTEMS: tuple[str, ...] = ("oracle", "oracle-stale", "oracle-future")
"""Harness-side reference systems (lsrep.calibration): reported, never ranked, never a real system."""


def expects_abstention(obs: Mapping[str, Any]) -> bool:
    """Whether abstaining is the correct response for this observation (from its stored expectation)."""
    exp = obs.get("expected")
    if isinstance(exp, str):
        try:
            exp = json.loads(exp or "{}")
        except json.JSONDecodeError:
            exp = {}
    return bool((exp or {}).get("expect_abstain"))


def stratum(obs: Mapping[str, Any]) -> str:
    """The headline stratum of an observation: its category, else its probe kind."""
    return str(obs.get("category") or obs.get("kind") or "(none)")


@dataclass(frozen=True)
class ConditionScore:
    """One condition's scores, all from the same judged observations."""

    condition: str
    system: str | None
    calibration: bool
    """A calibration reference (oracle*): shown, never ranked."""
    headline: stats.Estimate
    """Mean over answerable strata of per-stratum accuracy (stratified cluster bootstrap)."""
    strata: tuple[tuple[str, int, int], ...]
    """(stratum, answerable observations, correct) behind the headline."""
    answerable: stats.Estimate
    """Accuracy over answerable observations (cluster bootstrap over probes)."""
    answerable_correct: int
    abstention_n: int
    abstention_correct: int
    labels: dict[str, int]
    """Counts of `stale`, `future` outcomes and observations with a proven leak."""
    observations: int
    """Every observation of the condition (judged or not)."""
    unjudged: int
    """Observations without a label from the judge (left out of every rate)."""
    rank: int | None = None
    """1 = best headline; ties share a rank; None for calibration systems or no answerable data."""

    @property
    def abstention_accuracy(self) -> float:
        return self.abstention_correct / self.abstention_n if self.abstention_n else math.nan


def condition_scores(
    observations: Iterable[Mapping[str, Any]],
    conditions: Sequence[str],
    *,
    seed: int,
    systems: Mapping[str, str] | None = None,
    boot: int = stats.DEFAULT_B,
    level: float = stats.DEFAULT_LEVEL,
) -> list[ConditionScore]:
    """Scores per condition (in the given order) with ranks. Observations need `condition`,
    `trajectory`, `probe_id`, `kind`, `category`, `expected`, `correct` (None = unjudged),
    `outcome` and `proven_leak`."""
    by_cond: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for o in observations:
        by_cond[o["condition"]].append(o)
    systems = systems or {}
    out = [_score(c, systems.get(c), by_cond.get(c, []), seed, boot, level) for c in conditions]
    return rank_scores(out)


def _score(cond: str, system: str | None, obs: list[Mapping[str, Any]], seed: int, boot: int,
           level: float) -> ConditionScore:
    judged = [o for o in obs if o["correct"] is not None]
    answerable = [o for o in judged if not expects_abstention(o)]
    abstain = [o for o in judged if expects_abstention(o)]
    values = [float(o["correct"]) for o in answerable]
    clusters = [(o["trajectory"], o["probe_id"]) for o in answerable]
    head = stats.stratified_cluster_mean(values, clusters, [stratum(o) for o in answerable],
                                         stats.rng_for(seed, "headline", cond), b=boot, level=level)
    acc = stats.cluster_bootstrap_mean(values, clusters, stats.rng_for(seed, "answerable", cond), b=boot,
                                       level=level)
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for o in answerable:
        cell = per[stratum(o)]
        cell[0] += 1
        cell[1] += int(o["correct"])
    labels = {
        "stale": sum(1 for o in judged if o.get("outcome") == "stale"),
        "future": sum(1 for o in judged if o.get("outcome") == "future"),
        "proven_leak": sum(1 for o in obs if o.get("proven_leak")),
    }
    calibration = (system or cond) in CALIBRATION_SYSTEMS
    return ConditionScore(
        condition=cond, system=system, calibration=calibration, headline=head,
        strata=tuple((s, n, c) for s, (n, c) in sorted(per.items())), answerable=acc,
        answerable_correct=int(sum(values)), abstention_n=len(abstain),
        abstention_correct=sum(int(o["correct"]) for o in abstain), labels=labels, observations=len(obs),
        unjudged=len(obs) - len(judged),
    )


def rank_scores(scores: Sequence[ConditionScore]) -> list[ConditionScore]:
    """Competition ranks (1, 2, 2, 4) by headline, best first; calibration systems and conditions
    without answerable observations get no rank. Returns the scores in their input order."""
    from dataclasses import replace

    rankable = [s for s in scores if not s.calibration and not math.isnan(s.headline.value)]
    ranks: dict[str, int] = {}
    for s in rankable:
        ranks[s.condition] = 1 + sum(1 for t in rankable if t.headline.value > s.headline.value + 1e-12)
    return [replace(s, rank=ranks.get(s.condition)) for s in scores]


def by_rank(scores: Sequence[ConditionScore]) -> list[ConditionScore]:
    """Ranked conditions best first (ties in input order), then unranked, then calibration systems."""
    order = {s.condition: i for i, s in enumerate(scores)}
    return sorted(scores, key=lambda s: (s.calibration, s.rank is None, s.rank or 0, order[s.condition]))
