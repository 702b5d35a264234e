"""Integrity sections: fidelity audit, maintenance, judge agreement, failure ledger,
examples and the run manifest."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from typing import Any

from lsrep.reports import panels, provenance
from lsrep.reports.adapter_logs import adapter_log_blocks
from lsrep.reports.common import Context, clip, expected_text, group
from lsrep.reports.quality import aligned, comparisons
from lsrep.reports.tree import Callout, Column, Facts, Section, Table

from lsrep import audit, stats
from lsrep.latency import fact_latencies, summarise_latency


def fidelity(ctx: Context) -> tuple[Section, tuple[audit.MechanismAudit, ...]]:
    data = ctx.data
    result = audit.audit_run(
        data.events, data.manifest.get("conditions", {}), data.observations,
        unknown_sources=data.unknown_sources, rng=stats.rng_for(ctx.settings.seed, "ablation"),
        alpha=ctx.settings.alpha, boot=ctx.settings.boot,
    )
    mechanisms = result.mechanisms
    rows = []
    for m in mechanisms:
        c = m.counts
        rows.append({"condition": m.condition, "mechanism": m.mechanism + ("" if m.declared else " (undeclared)"),
                     "eligible": c.eligible, "ineligible": c.ineligible, "executed": c.executed,
                     "skipped": c.skipped, "error": c.error, "output": c.output, "selected": c.selected,
                     "in_prompt": c.in_prompt, "status": m.status, "verdict": m.verdict, "evidence": m.evidence})
    columns: tuple[Column, ...] = (
        Column("condition", "Condition", "condition"), Column("mechanism", "Mechanism", "code"),
        Column("eligible", "Eligible", "int"), Column("ineligible", "Inelig.", "int"),
        Column("executed", "Executed", "int"), Column("skipped", "Skipped", "int"),
        Column("error", "Error", "int"), Column("output", "Output", "int"),
        Column("selected", "Selected", "int"), Column("in_prompt", "In prompt", "int", "harness assembler"),
        Column("verdict", "Verdict", "verdict"),
        Column("evidence", "Evidence", "text"),
    )
    arows = []
    for m in mechanisms:
        if m.ablation is None:
            continue
        e = m.ablation
        arows.append({"condition": m.condition, "mechanism": m.mechanism, "ablation": e.ablation,
                      "pairs_probes": f"{e.answers_share.n if e.answers_share else 0} / "
                                      f"{e.answers_share.clusters if e.answers_share else 0}",
                      "contexts": e.contexts_share, "answers": e.answers_share, "labels": e.labels_share,
                      "effect": e.comparison.difference, "flip": e.comparison.randomization.p_value,
                      "significant": e.significant_accuracy, "verdict": m.verdict})
    acolumns = (
        Column("condition", "Condition", "condition"), Column("mechanism", "Mechanism", "code"),
        Column("ablation", "Switched off in", "condition"),
        Column("pairs_probes", "Pairs / probes", "text", "n / clusters"),
        Column("contexts", "Contexts changed", "rate_estimate", f"share of pairs, {ctx.settings.ci_label}"),
        Column("answers", "Answers changed", "rate_estimate", "share of pairs"),
        Column("labels", "Labels changed", "rate_estimate", "share of judged pairs"),
        Column("effect", "Δ accuracy on − off", "delta", f"{ctx.settings.ci_label}, cluster bootstrap over probes"),
        Column("flip", "Sign-flip p", "pvalue", f"resampling unit = {stats.PROBE_UNIT}: flips whole probes"),
        Column("significant", "Significant accuracy effect", "bool",
               f"sign-flip p < {ctx.settings.alpha} and CI excludes 0"),
        Column("verdict", "Verdict", "verdict"),
    )
    integrity = result.integrity
    order = {c: n for n, c in enumerate(ctx.conditions)}
    irows = sorted(({**vars(i)} for i in integrity), key=lambda r: order.get(r["condition"], len(order)))
    if len(irows) > 1:
        irows.append({**vars(result.total), "condition": "all conditions"})
    icolumns = (
        Column("condition", "Condition", "condition"), Column("observations", "Obs.", "int"),
        Column("fragments", "Fragments", "int"),
        Column("unattributed_fragments", "Unattributed fragments", "int", "no source turn id"),
        Column("unknown_source_fragments", "Unknown source", "int", "turn id not in trajectory"),
        Column("leak_observations", "Proven-leak obs.", "int"),
        Column("leaked_fragments", "Leaked fragments", "int"),
        Column("truncated_prompts", "Truncated prompts", "int", "truncated or over the limit"),
        Column("budget_exceeded", "Over budget", "int", "retrieval budget"),
    )
    blocks: list[Any] = []
    defective = [m for m in mechanisms if m.verdict == "defective"]
    if defective:
        names = "; ".join(f"{m.mechanism} ({m.condition}: {m.evidence})" for m in defective)
        blocks.append(Callout("danger", f"{len(defective)} mechanism(s) defective", names))
    never = [m for m in mechanisms if m.verdict == "never_exercised"]
    if never:
        names = ", ".join(f"{m.mechanism} ({m.condition})" for m in never)
        blocks.append(Callout("warn", f"{len(never)} mechanism(s) never exercised by this campaign's inputs",
                              names + ". No input met their condition; nothing can be said about them."))
    leaks = sum(i.leak_observations for i in integrity)
    if leaks:
        blocks.append(Callout("danger", f"{leaks} observation(s) with a proven leak",
                              "A fragment from a turn after the checkpoint reached the context: a defect of "
                              "the system or its adapter, not a scoring matter."))
    notes: tuple[str, ...] = (
        "Verdicts (docs/fidelity.md): defective only with positive evidence — an error; eligible, never run, "
        "no reason; ran with input yet never produced output where the adapter declares output; selected yet "
        "never in the prompt; or ran while switched off. Idle: it had nothing to do. Disabled: switched off "
        "by configuration or ablation. Never exercised: no input met its condition. Exercised: it ran (and "
        "how far it got), with no ablation to measure its effect.",
        "`In prompt` comes from the harness's prompt assembler alone, credited to the mechanisms each fragment "
        "names as its producers; what a system reports about its own prompt is counted apart.",
        "Contributing needs a controlled contrast: a condition with the same system and options and exactly "
        f"this mechanism switched off. Contributing = at least {audit.CONTRIBUTION_THRESHOLD:.0%} of pairs "
        "changed context and at least as many changed answer, both intervals above zero; otherwise exercised "
        "no effect (no detected effect, not evidence of none). The accuracy effect is a separate column.",
    )
    if not arows:
        notes += ("No condition of this campaign switches a mechanism off, so no mechanism can be called "
                  "contributing: add an ablation condition (`disable = [\"<mechanism>\"]`) to measure one.",)
    blocks += [
        Table(columns, tuple(rows), caption="Mechanisms", notes=notes,
              empty="No condition declares a mechanism and no fidelity events were recorded."),
        *([Table(acolumns, tuple(arows), caption="Ablation contrasts",
                 notes=("Pairs: the same (trajectory, probe, checkpoint, repetition) with the mechanism on and "
                        "off. Contexts compare the source turns of the returned fragments, in order.",))]
          if arows else []),
        Table(icolumns, tuple(irows), caption="Context integrity per condition",
              notes=("Unattributed: fragments citing no source turn. Proven leak: a fragment whose text was "
                     "first said after the checkpoint, or that cites such a turn.",)),
        *provenance.integrity_blocks(ctx),
    ]
    blocks += panels.diagnostics(ctx)
    return Section(
        "fidelity", "Fidelity audit",
        "Did each mechanism a system claims actually run and reach the answer? Counted from the fidelity "
        "events of every unit; a contribution is claimed only where an ablation measured it.",
        tuple(blocks),
    ), mechanisms


def consolidation(ctx: Context) -> Section:
    data = ctx.data
    groups = group(data.maintenance, "condition", "operation")
    rows = []
    for (cond, op), items in sorted(groups.items()):
        status = Counter(m["status"] for m in items)
        ran = [m["elapsed_ms"] for m in items if m["status"] == "ok"]
        rows.append({"condition": cond, "operation": op,
                     "triggers": ", ".join(sorted({m["trigger"] for m in items})),
                     "scheduled": len(items), "ok": status.get("ok", 0),
                     "unsupported": status.get("unsupported", 0), "failed": status.get("failed", 0),
                     "ms": sum(ran) / len(ran) if ran else None})
    columns = (
        Column("condition", "Condition", "condition"), Column("operation", "Operation", "code"),
        Column("triggers", "Trigger", "text"), Column("scheduled", "Scheduled", "int"),
        Column("ok", "Ran", "int"), Column("unsupported", "Unsupported", "int"),
        Column("failed", "Failed", "int"), Column("ms", "Mean ms", "ms"),
    )
    ev = [e for e in data.events if (e["step"] or "").startswith(("maintenance:", "session_end"))]
    tally: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for e in ev:
        step = e["step"].split(":")[0] if e["step"].startswith("session_end") else e["step"]
        tally[(e["condition"], step, e["mechanism"])][e["stage"]] += 1
    erows = [{"condition": c, "step": s, "mechanism": m, **{k: cnt.get(k, 0) for k in audit.COUNTED_STAGES}}
             for (c, s, m), cnt in sorted(tally.items())]
    ecolumns = (Column("condition", "Condition", "condition"), Column("step", "Step", "code"),
                Column("mechanism", "Mechanism", "code")) + tuple(
        Column(k, k.replace("_", " ").capitalize(), "int")
        for k in ("eligible", "executed", "skipped", "error", "output", "selected"))
    blocks: list[Any] = []
    if rows and not any(r["ok"] or r["failed"] for r in rows):
        blocks.append(Callout("info", "No maintenance ran",
                              "Every scheduled operation was unsupported by the systems under test; the "
                              "schedule was still applied identically to every condition."))
    latency = summarise_latency(fact_latencies(data.observations, data.turns))
    lcolumns = (
        Column("condition", "Condition", "condition"), Column("facts", "Facts observed", "int"),
        Column("recalled", "Recalled", "int"), Column("recalled_share", "Share recalled", "rate"),
        Column("censored", "Never recalled", "int"), Column("median_hours", "Median latency (h)", "number"),
        Column("median_waited", "Median checkpoints missed", "number"),
        Column("at_first_checkpoint", "Recalled at first chance", "rate"),
    )
    blocks += [
        Table(lcolumns, tuple(latency), caption="Recall latency: from when a fact was said to when it first "
              "reached the context",
              notes=("A fact is a reference version, observed at every checkpoint where it is in force. It is "
                     "recalled at the first such checkpoint whose context cites one of its evidence turns. "
                     "Latency is simulated time from the turn that made it true; facts never recalled while "
                     "observed are counted, not imputed.",),
              empty="No fact versions were observed."),
        Table(columns, tuple(rows), caption="Scheduled maintenance", empty="The schedule declares no maintenance."),
        Table(ecolumns, tuple(erows), caption="Fidelity events during maintenance and session ends",
              empty="No mechanism reported events during maintenance or at session ends."),
    ]
    return Section(
        "consolidation", "Consolidation and maintenance",
        "The lifecycle the schedule imposed: which maintenance operations (consolidation, nightly jobs, "
        "decay) each system ran, declined or failed, and what its mechanisms reported while doing so.",
        tuple(blocks),
    )


def judges(ctx: Context) -> Section:
    data = ctx.data
    by_judge = group(data.judgements, "judge")
    rows = []
    for name, items in sorted(by_judge.items()):
        agreement = [j["agreement"] for j in items if j["agreement"] is not None]
        rows.append({
            "judge": name, "version": ", ".join(sorted({str(j["judge_version"]) for j in items})),
            "digest": ", ".join(sorted({j["prompt_digest"] for j in items if j["prompt_digest"]})) or "—",
            "n": len(items), "failed": sum(1 for j in items if j["status"] != "ok"),
            "rubric": any(j["rubric"] is not None for j in items),
            "passes": sum(agreement) / len(agreement) if agreement else None,
        })
    columns = (Column("judge", "Judge", "code"), Column("version", "Version", "text"),
               Column("digest", "Prompt digest", "digest"), Column("n", "Labels", "int"),
               Column("failed", "Failed", "int"), Column("rubric", "Rubric", "bool"),
               Column("passes", "Mean pass agreement", "rate"))
    blocks: list[Any] = [Table(columns, tuple(rows), caption="Judges with labels in this run")]
    labels = {name: {j["obs_id"]: j for j in items if j["status"] == "ok"} for name, items in by_judge.items()}
    prow = []
    for a, b in itertools.combinations(sorted(labels), 2):
        shared = sorted(set(labels[a]) & set(labels[b]))
        for what in ("outcome", "correct"):
            xa = [labels[a][i][what] for i in shared]
            xb = [labels[b][i][what] for i in shared]
            pct, kappa = stats.percent_agreement(xa, xb), stats.cohen_kappa(xa, xb)
            prow.append({"pair": f"{a} vs {b}", "label": "outcome label" if what == "outcome" else "credited correct",
                         "n": pct.n, "agreement": pct.value, "kappa": kappa.value})
    if prow:
        blocks.append(Table(
            (Column("pair", "Judges", "text"), Column("label", "On", "text"), Column("n", "Shared obs.", "int"),
             Column("agreement", "Agreement", "rate"), Column("kappa", "Cohen's κ", "number")),
            tuple(prow), caption="Agreement between judges",
            notes=("Over observations both judges labelled successfully. κ corrects agreement for chance; "
                   "it is undefined (—) when both judges give one constant label.",)))
    else:
        blocks.append(Callout("info", "One judge only",
                              f"Only `{next(iter(labels), data.judge)}` labelled this run, so there is no "
                              "agreement to report. Add judges to the campaign (or `lsrep score`) to measure it."))
    blocks += _human_blocks(ctx)
    return Section(
        "judges", "Judge agreement",
        f"Which judges labelled the run and how far they agree. The quality sections use `{data.judge}`.",
        tuple(blocks),
    )


def _human_blocks(ctx: Context) -> list[Any]:
    from lsrep.rating import rating_section

    section = rating_section(ctx.store, data_run_id(ctx)) if ctx.store is not None else None
    if not section:
        return []
    counts = section["counts"]
    blocks: list[Any] = [Facts(title="Human ratings", items=(
        ("Sampled observations", counts["sampled"], "int"), ("Raters", counts["raters"], "int"),
        ("Agreed without adjudication", counts["agreed"], "int"),
        ("Resolved by the adjudicator", counts["adjudicator"], "int"),
        ("Pending adjudication", counts["pending"], "int"),
    ))]
    blocks.append(Table(
        (Column("rater_a", "Rater", "text"), Column("rater_b", "Rater", "text"), Column("n", "Items", "int"),
         Column("label_percent", "Label agreement", "rate"), Column("label_kappa", "Label κ", "number"),
         Column("rubric_weighted_kappa", "Rubric weighted κ", "number")),
        tuple(section["rater_agreement"]), caption="Agreement between human raters",
        notes=(section["methods"]["rater_agreement"],), empty="Fewer than two raters."))
    rows = []
    for j in section["judge_vs_human"]:
        rows.append({"judge": j["judge"], "label": "all labels", "n": j["n"], "percent": j["percent"],
                     "kappa": j["kappa"]})
        for lab in j["per_label"]:
            rows.append({"judge": j["judge"], "label": lab["label"], "n": lab["n_human"],
                         "percent": lab["percent"], "kappa": lab["kappa"]})
    blocks.append(Table(
        (Column("judge", "Judge", "code"), Column("label", "Label", "text"), Column("n", "Human items", "int"),
         Column("percent", "Agreement", "rate"), Column("kappa", "Cohen's κ", "number")),
        tuple(rows), caption="Automatic judges against the adjudicated human labels",
        notes=(section["methods"]["per_label"],), empty="No adjudicated labels yet."))
    return blocks


def data_run_id(ctx: Context) -> str:
    return ctx.data.run["run_id"]


def failures(ctx: Context) -> Section:
    data = ctx.data
    frows = [{"condition": f["condition"], "unit": f["unit_id"], "phase": f["phase"],
              "checkpoint": f["checkpoint"], "probe": f["probe_id"], "type": f["error_type"],
              "message": clip(f["message"], 300)} for f in data.failures]
    errors = Counter((o["condition"], clip(o["error"], 200) or "(no message)")
                     for o in data.observations if o["status"] == "error")
    erows = [{"condition": c, "error": e, "n": n} for (c, e), n in sorted(errors.items())]
    unsupported = Counter((m["condition"], m["operation"]) for m in data.maintenance if m["status"] == "unsupported")
    urows = [{"condition": c, "operation": op, "n": n} for (c, op), n in sorted(unsupported.items())]
    units = [{"unit": u["unit_id"], "status": u["status"], "error": clip(u["error"], 300)}
             for u in data.units if u["status"] != "finished"]
    total = len(frows) + sum(errors.values())
    blocks: list[Any] = [
        Callout("ok" if not total else "warn",
                "No failures recorded" if not total else f"{len(frows)} failure(s), "
                f"{sum(errors.values())} error observation(s)",
                "Failures are rows, never dropped: error observations count as not correct."),
        Table((Column("condition", "Condition", "condition"), Column("unit", "Unit", "code"),
               Column("phase", "Phase", "code"), Column("checkpoint", "Checkpoint", "int"),
               Column("probe", "Probe", "code"), Column("type", "Type", "code"),
               Column("message", "Message", "untrusted")),
              tuple(frows), caption="Failures", empty="No failures."),
        Table((Column("condition", "Condition", "condition"), Column("error", "Error", "untrusted"),
               Column("n", "Observations", "int")),
              tuple(erows), caption="Error observations", empty="No observation ended in an error."),
        Table((Column("condition", "Condition", "condition"), Column("operation", "Operation", "code"),
               Column("n", "Times", "int")),
              tuple(urows), caption="Unsupported maintenance",
              notes=("An operation the system does not declare is recorded, not run; it fails the unit only "
                     "where the schedule marks it required.",), empty="Every scheduled operation was supported."),
    ]
    if units:
        blocks.append(Table((Column("unit", "Unit", "code"), Column("status", "Status", "code"),
                             Column("error", "Error", "untrusted")), tuple(units), caption="Unfinished units"))
    return Section("failures", "Failure ledger",
                   "Everything that went wrong, where and why: harness-recorded failures, observations that "
                   "ended in an error and maintenance the systems could not perform.", tuple(blocks))


def examples(ctx: Context, per_side: int = 4) -> Section:
    data = ctx.data
    blocks: list[Any] = []

    def evidence_text(o: dict[str, Any]) -> str:
        ids = json.loads(o["evidence_ids"] or "[]")
        parts = [f"{t}: {data.turns[(o['trajectory'], t)]['content'] or '(text kept in the input file)'}" for t in ids
                 if (o["trajectory"], t) in data.turns]
        return clip(" | ".join(parts), 320)

    for a, b in comparisons(ctx):
        pairs = aligned(ctx, a, b)
        picked = (_spread([p for p in pairs if p[0]["correct"] == 1 and p[1]["correct"] == 0], per_side)
                  + _spread([p for p in pairs if p[0]["correct"] == 0 and p[1]["correct"] == 1], per_side))
        rows = [{"probe": x["probe_id"], "checkpoint": x["checkpoint"], "question": x["question"],
                 "expected": expected_text(x), "evidence": evidence_text(x),
                 "a": {"text": clip(x["answer"], 200), "outcome": x["outcome"]},
                 "b": {"text": clip(y["answer"], 200), "outcome": y["outcome"]}}
                for x, y in picked]
        blocks.append(Table(
            (Column("probe", "Probe", "code"), Column("checkpoint", "Cp.", "int"),
             Column("question", "Question", "untrusted"), Column("expected", "Expected", "untrusted"),
             Column("evidence", "Evidence turns", "untrusted"), Column("a", a, "answer"),
             Column("b", b, "answer")),
            tuple(rows), caption=f"Where {a} and {b} disagree (first {per_side} each way)",
            empty="They never disagree on credit.",
            notes=("One example per probe, the latest checkpoint first.",)))
    wrong = [o for o in data.observations if o["outcome"] in ("stale", "future")]
    seen: Counter = Counter()
    rows = []
    for o in wrong:
        if seen[(o["condition"], o["outcome"])] >= 3:
            continue
        seen[(o["condition"], o["outcome"])] += 1
        rows.append({"condition": o["condition"], "outcome": o["outcome"], "probe": o["probe_id"],
                     "checkpoint": o["checkpoint"], "question": o["question"], "expected": expected_text(o),
                     "answer": clip(o["answer"], 240)})
    blocks.append(Table(
        (Column("condition", "Condition", "condition"), Column("outcome", "Outcome", "code"),
         Column("probe", "Probe", "code"), Column("checkpoint", "Cp.", "int"),
         Column("question", "Question", "untrusted"), Column("expected", "Expected", "untrusted"),
         Column("answer", "Answer", "untrusted")),
        tuple(rows), caption="Stale and future answers (up to 3 per condition and label)",
        empty="No stale or future answers."))
    return Section("examples", "Examples",
                   "Concrete cases behind the numbers. Conversation text and model output are shown as "
                   "text, never interpreted.", tuple(blocks))


def _spread(pairs: list[tuple[dict[str, Any], dict[str, Any]]], limit: int) -> list[tuple[dict, dict]]:
    """At most one pair per probe, latest checkpoint first, so examples cover different probes."""
    out, seen = [], set()
    for x, y in sorted(pairs, key=lambda p: (-p[0]["checkpoint"], p[0]["trajectory"], p[0]["probe_id"])):
        if (x["trajectory"], x["probe_id"]) in seen:
            continue
        seen.add((x["trajectory"], x["probe_id"]))
        out.append((x, y))
        if len(out) == limit:
            break
    return out


def _clock(m: dict) -> str:
    clock = m.get("clock")
    if not clock:
        return "—"
    if clock.get("mode") == "simulated":
        how = "frozen per call" if clock.get("frozen", True) else "ticking from each call's now"
        return f"simulated in the adapter host ({clock.get('patch')}, {how})"
    return f"wall clock ({clock.get('reason')})"


def _adapter_host(m: dict) -> str:
    host = m.get("adapter_host")
    if not host:
        return "not recorded (runs before the adapter host ran adapters in-process)"
    return f"{host.get('mode')} · isolation {host.get('isolation')}"


def manifest(ctx: Context) -> Section:
    data = ctx.data
    m, run = data.manifest, data.run
    camp = m.get("campaign", {})
    facts = Facts((
        ("Run id", run["run_id"], "code"), ("Campaign", run["campaign"], "text"),
        ("Description", camp.get("description", ""), "text"), ("Status", run["status"], "code"),
        ("Created", run["created_at"], "text"), ("Finished", run.get("finished_at") or "—", "text"),
        ("Inputs digest", run.get("campaign_sha256"), "digest"), ("Plan digest", run.get("plan_digest"), "digest"),
        ("LSREP revision", m.get("git_revision") or "—", "digest"), ("LSREP", m.get("lsrep_version"), "code"),
        ("Campaign folder revision", m.get("campaign_git_revision") or "—", "digest"),
        ("Clock", _clock(m), "text"),
        ("Python", m.get("python"), "code"), ("Platform", m.get("platform"), "code"),
        ("Seed", camp.get("seed"), "code"), ("Repetitions", camp.get("repetitions"), "int"),
        ("Answer mode", camp.get("answer_mode"), "code"), ("Embedder", m.get("embedder"), "code"),
        ("Embedding text", m.get("embedding_text") or "—", "code"),
        ("Retrieval budget", camp.get("retrieval_budget") or "none", "text"),
        ("Adapter host", _adapter_host(m), "text"),
    ), title="Run")
    inputs = tuple({"name": k, "path": v.get("path"), "sha256": v.get("sha256")}
                   for k, v in sorted(m.get("inputs", {}).items()))
    ans = m.get("answerer", {})
    answerer = Facts(tuple((k.replace("_", " ").capitalize(), v,
                            "digest" if "digest" in k else "bool" if isinstance(v, bool) else "text")
                           for k, v in sorted(ans.items())), title="Answerer")
    digests: dict[str, set[str]] = defaultdict(set)
    for j in data.judgements:
        if j["prompt_digest"]:
            digests[j["judge"]].add(j["prompt_digest"])
    jrows = tuple({"name": j.get("name"), "kind": j.get("kind"), "version": j.get("version", "—"),
                   "passes": j.get("passes", 1), "model": _endpoint_model(j),
                   "digest": ", ".join(sorted(digests.get(j.get("name"), ()))) or "—"} for j in m.get("judges", []))
    crows = []
    for name, c in m.get("conditions", {}).items():
        sched = c.get("schedule") or {}
        crows.append({"condition": name, "system": c.get("system"),
                      "adapter": f"{c.get('adapter')} v{c.get('adapter_version')}",
                      "options": json.dumps(c.get("options", {}), sort_keys=True),
                      "disable": ", ".join(c.get("disable") or []) or None,
                      "mechanisms": ", ".join(c.get("mechanisms") or []) or None,
                      "mode": c.get("answer_mode"), "embeds": _embeds(c.get("embeds"), m.get("embedding_text")),
                      "schedule": f"{sched.get('name')} v{sched.get('version')} · {sched.get('access')} · "
                                  f"clock {sched.get('clock')}"})
    packages = tuple({"package": k, "version": v} for k, v in sorted(m.get("packages", {}).items()))
    plans = tuple({"unit": k, "digest": v} for k, v in sorted(m.get("plans", {}).items()))
    blocks: list[Any] = [
        facts,
        Table((Column("name", "Input", "code"), Column("path", "Path", "code"), Column("sha256", "SHA-256", "digest")),
              inputs, caption="Inputs"),
        answerer,
        Table((Column("name", "Judge", "code"), Column("kind", "Kind", "code"), Column("version", "Version", "text"),
               Column("passes", "Passes", "int"), Column("model", "Model", "code"),
               Column("digest", "Prompt digest", "digest")), jrows, caption="Judges"),
        Table((Column("condition", "Condition", "condition"), Column("system", "System", "code"),
               Column("adapter", "Adapter", "code"), Column("options", "Options", "code"),
               Column("disable", "Switched off", "code"), Column("mechanisms", "Mechanisms", "code"),
               Column("mode", "Answers", "code"), Column("schedule", "Schedule", "text"),
               Column("embeds", "Embeds", "text", "text of a turn embedded with the campaign's embedder")),
              tuple(crows), caption="Conditions"),
        Table((Column("unit", "Condition / trajectory", "code"), Column("digest", "Plan digest", "digest")),
              plans, caption="Replay plans"),
        Table((Column("package", "Package", "code"), Column("version", "Version", "code")), packages,
              caption="Package versions"),
    ]
    own = [r["condition"] for r in crows if (r["embeds"] or "").endswith(UNMATCHED)]
    if own and any(r["embeds"] and r["condition"] not in own for r in crows):
        blocks.insert(1, Callout("warn", "Arms not matched on embedding text", ", ".join(own) + " embed(s) other text "
                                 f"than the campaign's policy ({m.get('embedding_text')}) the other embedding arms follow"))
    blocks += adapter_log_blocks(ctx)
    if data.llm_calls:
        blocks.append(Table(
            (Column("purpose", "Purpose", "code"), Column("model", "Model", "code"), Column("status", "Status", "code"),
             Column("calls", "Calls", "int"), Column("cached", "Cached", "int"),
             Column("prompt_tokens", "Prompt tokens", "tokens"), Column("completion_tokens", "Completion tokens", "tokens"),
             Column("cost", "Cost", "number"), Column("latency_ms", "Mean latency ms", "ms")),
            tuple(data.llm_calls), caption="Model calls"))
    return Section("manifest", "Run manifest",
                   "How to rebuild this run: every input's SHA-256, the resolved configuration, versions, "
                   "the answerer and the judges with their prompt digests.", tuple(blocks))


UNMATCHED = "(unmatched)"


def _embeds(declared: str | None, policy: str | None) -> str | None:
    """The campaign policy for a system that follows it, else what it embeds, marked unmatched."""
    if declared is None:
        return None
    return f"campaign policy: {policy}" if declared == "campaign" else f"{declared} {UNMATCHED}"


def _endpoint_model(spec: dict[str, Any]) -> str:
    endpoint = spec.get("endpoint")
    if isinstance(endpoint, dict):
        return str(endpoint.get("model") or endpoint.get("name") or "—")
    return "—" if spec.get("kind") == "deterministic" else str(spec.get("model", "—"))
