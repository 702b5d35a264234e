"""Build the format-neutral report tree for one run, from the run store alone.

    report = build_report(store, run_id)            # -> reports.tree.Report

Statistics come from `lsrep.stats` and `lsrep.audit`, seeded from the
campaign's seed, so the same store gives the same report byte for byte.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lsrep.reports import drilldown, instrument, integrity, provenance, quality
from lsrep.reports.common import Context, Settings
from lsrep.reports.load import DETERMINISTIC, RunData, apply_judge_of_record, load_run
from lsrep.reports.metrics import compute_metrics, metrics_record
from lsrep.reports.tree import Callout, Report, Section

from lsrep import audit, stats
from lsrep.errors import LsrepError
from lsrep.store import RunStore

SECTION_IDS: tuple[str, ...] = (
    "headline", "over-time", "outcome-mix", "paired", "cost", "categories", "evidence", "fidelity",
    "consolidation", "judges", "failures", "examples", "manifest",
)
"""Every section a report has, in order (each is present even when it has nothing to show)."""

__all__ = ["SECTION_IDS", "Report", "build_report"]


def build_report(
    store: RunStore,
    run_id: str,
    compare: Sequence[tuple[str, str]] | None = None,
    judge: str = DETERMINISTIC,
    *,
    boot: int = stats.DEFAULT_B,
) -> Report:
    """The report tree of one run. `compare` overrides the campaign's declared comparisons."""
    data = load_run(store, run_id, judge)
    record_counts: dict[str, int] = {}
    of_record = data.manifest.get("campaign", {}).get("judge_of_record") or DETERMINISTIC
    if judge == DETERMINISTIC and of_record != DETERMINISTIC:
        data, record_counts = apply_judge_of_record(store, data)
    known = set(data.conditions)
    for pair in compare or ():
        for name in pair:
            if name not in known:
                raise LsrepError(f"--compare names unknown condition {name!r} (known: {', '.join(sorted(known))})")
    seed = int(data.manifest.get("campaign", {}).get("seed") or 0)
    ctx = Context(data, Settings(seed=seed, boot=boot), tuple(tuple(p) for p in compare or ()), store)
    ctx = replace(ctx, metrics=compute_metrics(ctx))
    fidelity, audited = integrity.fidelity(ctx)
    sections: tuple[Section, ...] = (
        quality.headline(ctx), quality.over_time(ctx), quality.outcome_mix(ctx), quality.paired(ctx),
        quality.cost(ctx), quality.categories(ctx), quality.evidence(ctx), fidelity,
        integrity.consolidation(ctx), integrity.judges(ctx), integrity.failures(ctx),
        integrity.examples(ctx), integrity.manifest(ctx),
    )
    assert tuple(s.id for s in sections) == SECTION_IDS
    from lsrep.reports.longmemeval import diagnostic_sections, is_diagnostic

    if is_diagnostic(data.manifest):
        sections = diagnostic_sections(ctx, sections)
    run = data.run
    camp = data.manifest.get("campaign", {})
    return Report(
        title=f"LSREP report — {run['campaign']}",
        run_id=run["run_id"],
        subtitle=camp.get("description", ""),
        conditions=tuple(data.conditions),
        banner=_banner(data) + _record_banner(record_counts) + instrument.calibration_banner(ctx),
        highlights=_highlights(data),
        sections=sections,
        meta={
            "judge": judge, "seed": seed, "bootstrap_b": boot, "level": ctx.settings.level,
            "alpha": ctx.settings.alpha, "resampling_unit": stats.PROBE_UNIT,
            "run_status": run["status"], "lsrep_version": data.manifest.get("lsrep_version"),
            "created_at": run["created_at"],
        },
        metrics=_with_integrity(metrics_record(ctx, ctx.metrics), provenance.condition_metrics(ctx)),
        fidelity=tuple(audit.fidelity_records(audited)),
        drilldown=functools.partial(drilldown.build, ctx),  # built only if HTML is rendered
    )


def _with_integrity(record: dict[str, Any], by_condition: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each condition's `evidence` and `integrity` blocks (reports.provenance) in the metrics record."""
    for row in record["conditions"]:
        row.update(by_condition.get(row["name"], {}))
    return record


def _record_banner(counts: dict[str, int]) -> tuple[Callout, ...]:
    if not counts:
        return ()
    total = sum(counts.values())
    parts = ", ".join(f"{n} of {total} from `{judge}`" for judge, n in sorted(counts.items()))
    return (Callout("info", "Which numbers rest on human labels",
                    f"Labels per observation come from the campaign's judge of record: {parts}. Observations "
                    "without an adjudicated human label use the deterministic judge."),)


def _banner(data: RunData) -> tuple[Callout, ...]:
    m = data.manifest
    ans = m.get("answerer", {})
    mode = m.get("campaign", {}).get("answer_mode", "context")
    out = []
    name = f"{ans.get('name', ans.get('kind', '?'))} v{ans.get('version', '?')}"
    if mode == "system":
        out.append(Callout("info", "System mode: each system answered with its own answering stage",
                           f"The harness answerer ({name}) was not used for the answers."))
    elif ans.get("offline"):
        out.append(Callout(
            "warn", f"Answers come from an offline, deterministic answerer ({name}) — not a language model",
            "It extracts the context line that best overlaps the question. Every condition is answered by "
            "the same answerer, so differences come from the context each memory system returned; absolute "
            "scores say little about how a model would do with that context.",
        ))
    else:
        model = (ans.get("endpoint") or {}).get("model") if isinstance(ans.get("endpoint"), dict) else None
        out.append(Callout("info", f"Answerer: {name}" + (f" ({model})" if model else ""),
                           f"Prompt template digest {ans.get('template_digest', '—')}."))
    if data.judge == DETERMINISTIC:
        out.append(Callout("info", "Judge: deterministic (no model)",
                           "Outcome labels from exact and alias matching against the evolving reference; "
                           "token-F1 against the version in force."))
    else:
        digests = sorted({j["prompt_digest"] for j in data.judgements if j["judge"] == data.judge and j["prompt_digest"]})
        out.append(Callout("info", f"Judge: {data.judge}",
                           "Prompt digest " + (", ".join(digests) or "—") + ". Token-F1 and exact match still "
                           "come from the deterministic judge."))
    if (m.get("adapter_host") or {}).get("mode") == "in-process":
        out.append(Callout("warn", "Adapters ran inside the harness process (debugging mode)",
                           "With `adapter_host = \"in-process\"` a system could read what the harness holds "
                           "(expected answers on the stack and heap, the campaign file, keys in the environment). "
                           "Runs meant to be compared use the default adapter host."))
    if data.run["status"] != "finished":
        out.append(Callout("danger", f"Run status is {data.run['status']!r}",
                           "The run did not finish: results cover only the units stored so far."))
    return tuple(out)


def _highlights(data: RunData) -> tuple[tuple[str, Any, str], ...]:
    obs = data.observations
    return (
        ("Conditions", len(data.conditions), "int"),
        ("Trajectories", len({o["trajectory"] for o in obs}), "int"),
        ("Probes", len({(o["trajectory"], o["probe_id"]) for o in obs}), "int"),
        ("Checkpoints", len({(o["trajectory"], o["checkpoint"]) for o in obs}), "int"),
        ("Observations", len(obs), "int"),
        ("Failures", len(data.failures) + sum(1 for o in obs if o["status"] == "error"), "int"),
        ("Proven leaks", sum(1 for o in obs if o["proven_leak"]), "int"),
    )
