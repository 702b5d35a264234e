"""The fidelity audit (protocol section 5): pure functions over stored rows.

Each mechanism a condition declares gets a verdict from its fidelity events
under the stage semantics of `lsrep.fidelity` (idle, disabled and "no output
expected" are not defects; `defective` needs positive evidence), plus the
furthest stage it reached (`status`, descriptive). Whether it *contributes* is
a different question, answered only by a controlled contrast: a condition of
the same system and options with exactly that mechanism switched off, compared
pair by pair on the same (trajectory, probe, checkpoint, repetition): the
shares of pairs whose context, answer and outcome label changed, with
cluster-bootstrap intervals; the accuracy effect is a separate column.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lsrep import fidelity, stats

STATUSES: tuple[str, ...] = (
    "never_eligible", "eligible_not_executed", "executed_error", "executed_no_output",
    "output_not_selected", "selected_not_in_prompt", "reached_prompt", "disabled",
)
"""Derived per-mechanism status (seed-systems 2.5), plus `disabled` for a switched-off mechanism."""

STATUS_CLASS: dict[str, str] = {
    "never_eligible": "never exercised",
    "eligible_not_executed": "not run",
    "executed_error": "defective",
    "executed_no_output": "ran without output",
    "output_not_selected": "ran without reaching the prompt",
    "selected_not_in_prompt": "ran without reaching the prompt",
    "reached_prompt": "reaches the prompt",
    "disabled": "switched off",
}
"""A plain description of each status. Descriptive only: whether "ran without output" is a
defect depends on the mechanism's declared stages, and is the verdict's business."""

COUNTED_STAGES: tuple[str, ...] = (
    "eligible", "ineligible", "executed", "skipped", "error", "output", "selected", "in_prompt",
    "reported_in_prompt",
)

CONTRIBUTION_THRESHOLD = 0.05
"""`contributing`: switching the mechanism off changes at least this share of contexts and of
answers, and both shares' cluster-bootstrap intervals exclude zero."""


@dataclass(frozen=True)
class StageCounts:
    """Fidelity events of one mechanism in one condition, by stage."""

    eligible: int = 0
    ineligible: int = 0
    executed: int = 0
    skipped: int = 0
    error: int = 0
    output: int = 0
    selected: int = 0
    in_prompt: int = 0
    reported_in_prompt: int = 0
    """The system's own account of its prompt (kept apart from the harness's `in_prompt`)."""


@dataclass(frozen=True)
class AblationEffect:
    """The paired effect of switching one mechanism off."""

    ablation: str
    """The condition with the mechanism switched off."""
    comparison: stats.PairedComparison
    """Credited-correct rate with the mechanism on minus with it off."""
    pairs: int
    """Aligned (trajectory, probe, checkpoint, repetition) pairs."""
    changed_answers: int
    """Pairs whose answer text differs."""
    changed_contexts: int | None
    """Pairs whose returned context (source turns in order) differs, where known."""
    contributing: bool
    """Contexts and answers changed in at least CONTRIBUTION_THRESHOLD of pairs, both intervals above 0."""
    contexts_share: stats.Estimate | None = None
    """Share of pairs whose context changed, cluster bootstrap over probes (None: contexts unknown)."""
    answers_share: stats.Estimate | None = None
    """Share of pairs whose answer text changed."""
    labels_share: stats.Estimate | None = None
    """Share of judged pairs whose outcome label changed."""
    significant_accuracy: bool = False
    """Sign-flip randomization p < alpha (whole probes flipped, the cluster-aware test used everywhere
    in the reports) and the accuracy difference's cluster-bootstrap interval excludes zero (a
    second, weaker-powered statement than `contributing`)."""


@dataclass(frozen=True)
class MechanismAudit:
    """One mechanism of one condition."""

    condition: str
    mechanism: str
    counts: StageCounts
    status: str
    """One of STATUSES."""
    declared: bool
    """Listed by the condition's adapter (False: seen only in events or fragment attributions)."""
    ablation: AblationEffect | None = None
    verdict: str = "never_exercised"
    """One of `lsrep.fidelity.VERDICTS`."""
    evidence: str = ""
    """A short reason for the verdict."""
    outcomes: tuple[tuple[str, int], ...] = ()
    """Stage-outcome counts (`lsrep.fidelity.OUTCOMES`), non-zero ones only."""
    system: str = ""
    applicable: tuple[str, ...] = fidelity.DEFAULT_STAGES
    """Stages the adapter says apply to this mechanism."""

    @property
    def klass(self) -> str:
        return STATUS_CLASS[self.status]


@dataclass(frozen=True)
class IntegrityCounts:
    """Per-condition integrity checks over observations."""

    condition: str
    observations: int
    fragments: int
    unattributed_fragments: int
    """Fragments with no source turn id."""
    unknown_source_fragments: int | None
    """Fragments citing a turn id not in the trajectory (None when not supplied)."""
    leak_observations: int
    """Observations whose context held a turn from after the checkpoint (proven leak)."""
    leaked_fragments: int
    truncated_prompts: int
    """Observations whose prompt was truncated or exceeded the answerer's limit."""
    budget_exceeded: int
    """Observations whose context exceeded the campaign's retrieval budget."""


@dataclass(frozen=True)
class FidelityAudit:
    """The whole audit of a run."""

    mechanisms: tuple[MechanismAudit, ...]
    integrity: tuple[IntegrityCounts, ...]
    """Per condition, in condition-name order."""
    alpha: float
    """Level of the sign-flip test behind `contributing`."""

    @property
    def total(self) -> IntegrityCounts:
        """The integrity counts summed over conditions."""
        known = [i.unknown_source_fragments for i in self.integrity]
        return IntegrityCounts(
            condition="(all)", observations=sum(i.observations for i in self.integrity),
            fragments=sum(i.fragments for i in self.integrity),
            unattributed_fragments=sum(i.unattributed_fragments for i in self.integrity),
            unknown_source_fragments=None if any(k is None for k in known) else sum(known),  # type: ignore[arg-type]
            leak_observations=sum(i.leak_observations for i in self.integrity),
            leaked_fragments=sum(i.leaked_fragments for i in self.integrity),
            truncated_prompts=sum(i.truncated_prompts for i in self.integrity),
            budget_exceeded=sum(i.budget_exceeded for i in self.integrity),
        )


# -- classification ----------------------------------------------------------------------------
def count_stages(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], StageCounts]:
    """Stage counts per (condition, mechanism); each event row needs condition, mechanism, stage."""
    tally: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for ev in events:
        if ev["stage"] in COUNTED_STAGES:
            tally[(ev["condition"], ev["mechanism"])][ev["stage"]] += 1
    return {key: StageCounts(**{s: c.get(s, 0) for s in COUNTED_STAGES}) for key, c in tally.items()}


def classify(counts: StageCounts) -> str:
    """The furthest stage a mechanism reached in the run, as a seed-systems 2.5 status.

    A mechanism that never reported eligibility but reported a later stage was
    evidently eligible, so later stages count as eligibility too.
    """
    if counts.in_prompt:
        return "reached_prompt"
    if counts.selected:
        return "selected_not_in_prompt"
    if counts.output:
        return "output_not_selected"
    if counts.error:
        return "executed_error"
    if counts.executed:
        return "executed_no_output"
    if counts.eligible:
        return "eligible_not_executed"
    return "never_eligible"


# -- ablations ---------------------------------------------------------------------------------
def find_ablations(conditions: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(condition, mechanism) → the condition that differs only by switching that mechanism off.

    Same system, options, answer mode and schedule; the ablation's `disable` is
    the base's plus exactly one mechanism.
    """
    def same_setup(x: Mapping[str, Any], y: Mapping[str, Any]) -> bool:
        keys = ("system", "options", "answer_mode", "schedule")
        return all(_canon(x.get(k)) == _canon(y.get(k)) for k in keys)

    found: dict[tuple[str, str], str] = {}
    for base, bc in sorted(conditions.items()):
        base_off = set(bc.get("disable") or ())
        for abl, ac in sorted(conditions.items()):
            if abl == base or not same_setup(bc, ac):
                continue
            extra = set(ac.get("disable") or ()) - base_off
            if base_off <= set(ac.get("disable") or ()) and len(extra) == 1:
                found.setdefault((base, extra.pop()), abl)
    return found


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def pair_key(row: Mapping[str, Any]) -> tuple:
    return (row["trajectory"], row["probe_id"], row["checkpoint"], row["repetition"])


def ablation_effect(
    on: Sequence[Mapping[str, Any]],
    off: Sequence[Mapping[str, Any]],
    ablation: str,
    rng: np.random.Generator,
    *,
    alpha: float = 0.05,
    boot: int = stats.DEFAULT_B,
    threshold: float = CONTRIBUTION_THRESHOLD,
) -> AblationEffect:
    """Paired effect of a mechanism from outcome records of the condition with it on and off.

    A record has trajectory, probe_id, checkpoint, repetition, correct (0/1 or
    None when unjudged), answer, optionally outcome (the judge's label) and
    context (any comparable value). Change shares use every aligned pair; the
    accuracy difference uses the judged ones.
    """
    off_by_key = {pair_key(r): r for r in off}
    aligned = [(r, off_by_key[pair_key(r)]) for r in on if pair_key(r) in off_by_key]
    clusters_all = [(x["trajectory"], x["probe_id"]) for x, _ in aligned]
    pairs = [(x, y) for x, y in aligned if x.get("correct") is not None and y.get("correct") is not None]
    a = [float(x["correct"]) for x, _ in pairs]
    b = [float(y["correct"]) for _, y in pairs]
    clusters = [(x["trajectory"], x["probe_id"]) for x, _ in pairs]
    comparison = stats.paired_difference(a, b, clusters, rng, names=("on", "off"), binary=True, boot=boot)
    answer_changed = [float((x.get("answer") or "") != (y.get("answer") or "")) for x, y in aligned]
    has_context = bool(aligned) and all("context" in x and "context" in y for x, y in aligned)
    context_changed = [float(x["context"] != y["context"]) for x, y in aligned] if has_context else None
    labelled = [(x, y) for x, y in aligned if x.get("outcome") is not None and y.get("outcome") is not None]
    label_changed = [float(x["outcome"] != y["outcome"]) for x, y in labelled]

    def share(values: list[float] | None, cl: list) -> stats.Estimate | None:
        if values is None:
            return None
        return stats.cluster_bootstrap_mean(values, cl, rng, b=boot)

    answers = share(answer_changed, clusters_all)
    contexts = share(context_changed, clusters_all)
    labels = share(label_changed, [(x["trajectory"], x["probe_id"]) for x, _ in labelled]) if labelled else None
    lo, hi = comparison.difference.interval
    excludes_zero = bool(pairs) and (lo > 0 or hi < 0)
    # The cluster-aware test, as everywhere in the reports: flip whole probes (not McNemar).
    significant = comparison.randomization.p_value < alpha

    def beyond(e: stats.Estimate | None) -> bool:
        return e is not None and e.n > 0 and e.value >= threshold and e.interval[0] > 0

    return AblationEffect(
        ablation, comparison, len(pairs), int(sum(answer_changed)),
        int(sum(context_changed)) if context_changed is not None else None,
        beyond(contexts) and beyond(answers), contexts, answers, labels, excludes_zero and significant,
    )


# -- the audit ---------------------------------------------------------------------------------
def audit_fidelity(
    events: Iterable[Mapping[str, Any]],
    conditions: Mapping[str, Mapping[str, Any]],
    *,
    outcomes: Sequence[Mapping[str, Any]] = (),
    rng: np.random.Generator | None = None,
    alpha: float = 0.05,
    boot: int = stats.DEFAULT_B,
) -> tuple[MechanismAudit, ...]:
    """Judge every (condition, mechanism) seen in events or declared by a condition.

    `conditions` is the run manifest's `conditions` mapping (mechanisms,
    mechanism_stages, disable, system, options, ...). `outcomes` are
    per-observation records with a `condition` key (see `ablation_effect`);
    with them, mechanisms that have an ablation condition get their paired effect.
    """
    events = list(events)
    counts = count_stages(events)
    tallies = fidelity.tally_events(events)
    keys = set(tallies)
    for cond, spec in conditions.items():
        keys.update((cond, m) for m in spec.get("mechanisms") or ())
    ablations = find_ablations(conditions)
    by_condition: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in outcomes:
        by_condition[row["condition"]].append(row)
    rng = rng if rng is not None else np.random.default_rng(0)
    out = []
    for cond, mech in sorted(keys):
        spec = conditions.get(cond, {})
        c = counts.get((cond, mech), StageCounts())
        tally = tallies.get((cond, mech), fidelity.Tally())
        switched_off = mech in (spec.get("disable") or ())
        status = classify(c)
        never_ran = status in ("never_eligible", "eligible_not_executed") and not tally.outcomes["ran"]
        if never_ran and (switched_off or tally.outcomes["disabled"]):
            status = "disabled"
        applicable = fidelity.applicable_stages(spec, mech)
        v = fidelity.judge(tally, applicable, switched_off=switched_off)
        verdict, evidence = v.verdict, v.evidence
        effect = None
        abl = ablations.get((cond, mech))
        if abl is not None and by_condition.get(cond) and by_condition.get(abl):
            effect = ablation_effect(by_condition[cond], by_condition[abl], abl, rng, alpha=alpha, boot=boot)
            if verdict == "exercised":
                verdict = "contributing" if effect.contributing else "exercised_no_effect"
                evidence += "; " + _effect_evidence(effect, abl)
        outs = tuple((k, tally.outcomes[k]) for k in fidelity.OUTCOMES if tally.outcomes[k])
        out.append(MechanismAudit(cond, mech, c, status, mech in (spec.get("mechanisms") or ()), effect,
                                  verdict, evidence, outs, str(spec.get("system") or ""), applicable))
    return tuple(out)


def _effect_evidence(e: AblationEffect, ablation: str) -> str:
    def pct(x: stats.Estimate | None) -> str:
        return "n/a" if x is None or x.n == 0 else f"{x.value:.0%}"
    return (f"switched off in {ablation!r}: contexts changed {pct(e.contexts_share)}, answers changed "
            f"{pct(e.answers_share)} of {e.answers_share.n if e.answers_share else 0} pairs "
            f"(threshold {CONTRIBUTION_THRESHOLD:.0%})")


def integrity_counts(
    observations: Iterable[Mapping[str, Any]],
    unknown_sources: Mapping[str, int] | None = None,
) -> tuple[IntegrityCounts, ...]:
    """Per-condition unattributed fragments, proven leaks, truncated prompts, budget overruns."""
    acc: dict[str, Counter] = defaultdict(Counter)
    for o in observations:
        c = acc[o["condition"]]
        c["observations"] += 1
        c["fragments"] += o.get("n_fragments") or 0
        c["unattributed_fragments"] += o.get("unattributed") or 0
        c["leaked_fragments"] += o.get("proven_leak") or 0
        c["leak_observations"] += int(bool(o.get("proven_leak")))
        c["truncated_prompts"] += int((o.get("truncated_tokens") or 0) > 0 or o.get("within_limit") == 0)
        c["budget_exceeded"] += int(bool(o.get("budget_exceeded")))
    return tuple(
        IntegrityCounts(
            condition=cond, observations=c["observations"], fragments=c["fragments"],
            unattributed_fragments=c["unattributed_fragments"],
            unknown_source_fragments=None if unknown_sources is None else unknown_sources.get(cond, 0),
            leak_observations=c["leak_observations"], leaked_fragments=c["leaked_fragments"],
            truncated_prompts=c["truncated_prompts"], budget_exceeded=c["budget_exceeded"],
        )
        for cond, c in sorted(acc.items())
    )


def audit_run(
    events: Iterable[Mapping[str, Any]],
    conditions: Mapping[str, Mapping[str, Any]],
    observations: Sequence[Mapping[str, Any]],
    *,
    unknown_sources: Mapping[str, int] | None = None,
    rng: np.random.Generator | None = None,
    alpha: float = 0.05,
    boot: int = stats.DEFAULT_B,
) -> FidelityAudit:
    """Mechanism classification (with ablation effects) and integrity counts of one run.

    `observations` are observation rows carrying their credit (`correct`, None when
    unjudged), `answer` and optionally `context`.
    """
    mechanisms = audit_fidelity(events, conditions, outcomes=observations, rng=rng, alpha=alpha, boot=boot)
    return FidelityAudit(mechanisms, integrity_counts(observations, unknown_sources), alpha)


def fidelity_records(mechanisms: Sequence[MechanismAudit]) -> list[dict[str, Any]]:
    """The machine-readable audit: one plain record per (condition, mechanism), for report.json."""
    def est(e: stats.Estimate | None) -> dict[str, Any] | None:
        if e is None or e.n == 0:
            return None
        return {"value": e.value, "interval": list(e.interval), "level": e.level, "n": e.n,
                "clusters": e.clusters, "unit": e.unit}

    out = []
    for m in mechanisms:
        rec: dict[str, Any] = {
            "condition": m.condition, "system": m.system, "mechanism": m.mechanism, "declared": m.declared,
            "applicable_stages": list(m.applicable),
            "stages": {k: v for k, v in vars(m.counts).items() if v},
            "outcomes": dict(m.outcomes),
            "status": m.status, "verdict": m.verdict, "evidence": m.evidence,
        }
        if m.ablation is not None:
            e = m.ablation
            rec.update({
                "ablation": e.ablation, "contexts_changed": est(e.contexts_share),
                "answers_changed": est(e.answers_share), "labels_changed": est(e.labels_share),
                "accuracy_effect": est(e.comparison.difference),
                "accuracy_sign_flip_p": e.comparison.randomization.p_value,
                "significant_accuracy_effect": e.significant_accuracy,
                "contribution_threshold": CONTRIBUTION_THRESHOLD,
            })
        out.append(rec)
    return out
