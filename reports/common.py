"""Shared pieces of the section builders: settings, grouping, labelled estimates."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lsrep.reports.load import RunData

from lsrep import stats

OUTCOMES = ("correct", "stale", "future", "abstained", "wrong", "error")


@dataclass(frozen=True)
class Settings:
    """How statistics are computed; recorded in the report."""

    seed: int
    """Seed of every bootstrap and randomization (each statistic derives its own stream)."""
    boot: int = stats.DEFAULT_B
    level: float = stats.DEFAULT_LEVEL
    alpha: float = 0.05

    @property
    def ci_label(self) -> str:
        return f"{round(self.level * 100)}% CI"

    @property
    def boot_note(self) -> str:
        return (f"{self.ci_label}: cluster bootstrap, resampling unit = {stats.PROBE_UNIT} with all its "
                f"checkpoints and repetitions; percentile interval, B={self.boot}, seed {self.seed}. "
                "Intervals are descriptive.")


@dataclass(frozen=True)
class Context:
    data: RunData
    settings: Settings
    compare: tuple[tuple[str, str], ...]
    """The declared family of paired comparisons."""
    store: Any = None
    """The run store, for sections that read tables beyond RunData (human ratings)."""
    metrics: Any = None
    """`reports.metrics.Metrics`: headline scores, calibration, LoCoMo metric (set by build_report)."""

    @property
    def conditions(self) -> list[str]:
        return self.data.conditions

    def mean(self, rows: Sequence[dict[str, Any]], value: Callable[[dict[str, Any]], Any], *labels: str,
             ) -> stats.Estimate:
        """Cluster-bootstrap mean of value(row) over rows whose value is not None."""
        picked = [(float(v), cluster(r)) for r in rows if (v := value(r)) is not None]
        return stats.cluster_bootstrap_mean(
            [v for v, _ in picked], [c for _, c in picked], stats.rng_for(self.settings.seed, *labels),
            b=self.settings.boot, level=self.settings.level,
        )

    def accuracy(self, rows: Sequence[dict[str, Any]], *labels: str) -> tuple[stats.Estimate, stats.Estimate]:
        judged = [r for r in rows if r["correct"] is not None]
        return stats.rate(
            [float(r["correct"]) for r in judged], [cluster(r) for r in judged],
            stats.rng_for(self.settings.seed, "accuracy", *labels), b=self.settings.boot,
            level=self.settings.level,
        )


def cluster(row: dict[str, Any]) -> tuple[str, str]:
    return (row["trajectory"], row["probe_id"])


def group(rows: Iterable[dict[str, Any]], *keys: str) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r[keys[0]] if len(keys) == 1 else tuple(r[k] for k in keys)].append(r)
    return out


def expected_text(row: dict[str, Any]) -> str:
    """The reference in force at the observation's checkpoint, as a reader would say it."""
    try:
        exp = json.loads(row.get("expected") or "{}")
    except json.JSONDecodeError:
        return "?"
    if exp.get("expect_abstain"):
        return "(abstain: not known yet)" if exp.get("later") else "(abstain)"
    answers = [v["answer"] for v in exp.get("in_force", [])]
    return " then ".join(answers) if row.get("kind") == "evolution" else " / ".join(answers)


def clip(text: str | None, limit: int = 240) -> str:
    if text is None:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def outcome_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(OUTCOMES, 0)
    unjudged = 0
    for r in rows:
        if r["outcome"] is None:
            unjudged += 1
        else:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    if unjudged:
        counts["unjudged"] = unjudged
    return counts
