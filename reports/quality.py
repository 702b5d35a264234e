"""Quality sections: headline, score over checkpoints, outcome mix, paired differences,
context cost, categories and evidence reach."""

from __future__ import annotations

import itertools
from typing import Any

from lsrep.reports import provenance
from lsrep.reports.common import OUTCOMES, Context, cluster, group, outcome_counts
from lsrep.reports.cost import cost_section as cost  # noqa: F401 - the section list names quality.cost
from lsrep.reports.instrument import calibration_blocks, locomo_table
from lsrep.reports.timeline import checkpoint_axis
from lsrep.reports.tree import Callout, Column, Figure, Section, Table

from lsrep import stats
from lsrep.headline import HEADLINE_DEFINITION, HEADLINE_METRIC, by_rank, expects_abstention


def _acc_note(ctx: Context) -> str:
    return (f"Accuracy = share of observations credited correct by the `{ctx.data.judge}` judge (correct, "
            "or abstained where abstention was expected).")


def _cond_columns(ctx: Context, kind: str = "rate_estimate") -> tuple[Column, ...]:
    return tuple(Column(f"c:{c}", c, kind) for c in ctx.conditions)


def _score_rows(ctx: Context) -> list[dict[str, Any]]:
    """One row per condition, best headline first: the ranked scores and the unranked ones."""
    by_cond = group(ctx.data.observations, "condition")
    rubric = any(o["rubric"] is not None for o in ctx.data.observations)
    metrics = ctx.metrics
    cal = metrics.calibration
    rows = []
    for cond in ctx.conditions:
        obs = by_cond.get(cond, [])
        score = metrics.score(cond)
        boot, wilson = ctx.accuracy(obs, cond)
        row = {
            "condition": cond, "rank": score.rank if score.rank is not None else "—",
            "headline": score.headline, "answerable": score.answerable,
            "answerable_n": f"{score.answerable_correct} / {score.answerable.n}",
            "abstention": (score.abstention_correct / score.abstention_n if score.abstention_n else None),
            "abstention_n": f"{score.abstention_correct} / {score.abstention_n}",
            "headroom": cal.headroom(score.headline.value) if cal else None,
            "n": len(obs), "probes": len({cluster(o) for o in obs}),
            "accuracy": boot, "wilson": wilson,
            "f1": ctx.mean(obs, lambda o: o["f1"], "f1", cond),
            "exact": ctx.mean(obs, lambda o: o["exact"], "exact", cond).value,
            "mix": outcome_counts(obs),
            "leaks": sum(1 for o in obs if o["proven_leak"]),
        }
        if rubric:
            row["rubric"] = ctx.mean(obs, lambda o: o["rubric"], "rubric", cond)
        rows.append(row)
    # The table reads as the ranking: best headline first, then unranked conditions, campaign
    # order among equals.
    order = {s.condition: i for i, s in enumerate(by_rank(metrics.scores))}
    rows.sort(key=lambda r: order.get(r["condition"], len(order)))
    return rows


def score_details(ctx: Context) -> Table:
    """What the headline table does not rank: all-observation accuracy, F1, exact, the mix."""
    rubric = any(o["rubric"] is not None for o in ctx.data.observations)
    # A second table for what is not ranked, so neither needs scrolling at 1280 px.
    details = [
        Column("condition", "Condition", "condition"),
        Column("n", "Obs.", "int"),
        Column("probes", "Probes", "int", "clusters"),
        Column("leaks", "Proven leaks", "int", "observations"),
        Column("accuracy", "All obs. credited", "rate_estimate",
               f"includes abstention credit, not ranked; {ctx.settings.ci_label}, cluster bootstrap over probes"),
        Column("wilson", "Wilson interval", "rate_interval", "all obs., observations as independent"),
        Column("f1", "Token-F1", "estimate", "vs version in force"),
        Column("exact", "Exact", "rate"),
        Column("mix", "Outcome mix", "mix"),
    ]
    if rubric:
        details.insert(8, Column("rubric", "Rubric 1-5", "estimate", ctx.data.judge))
    detail_notes = ("Not ranked: these credit every observation, abstentions included.",
                    "Wilson intervals treat every observation as independent; the same probe asked at several "
                    "checkpoints is not, so the cluster-bootstrap interval is the one to read.",
                    "Token-F1 and exact match always come from the deterministic judge.")
    return Table(tuple(details), tuple(_score_rows(ctx)), caption="Scores not ranked, per condition",
                 notes=detail_notes)


def headline(ctx: Context) -> Section:
    rows = _score_rows(ctx)
    metrics = ctx.metrics
    cal = metrics.calibration
    columns = [
        Column("condition", "Condition", "condition"),
        Column("rank", "Rank", "text", "by headline"),
        Column("headline", "Headline", "rate_estimate",
               f"{HEADLINE_METRIC}; {ctx.settings.ci_label}, stratified cluster bootstrap over probes"),
        Column("answerable", "Answerable accuracy", "rate_estimate",
               f"{ctx.settings.ci_label}, cluster bootstrap over probes"),
        Column("answerable_n", "Answerable correct / n", "text", "observations"),
        Column("abstention", "Abstention accuracy", "rate", "never in the headline"),
        Column("abstention_n", "Abstention correct / n", "text", "observations"),
        Column("headroom", "Headroom position", "rate", "0 = floor (null), 1 = ceiling (oracle)"),
    ]
    unjudged = sum(1 for o in ctx.data.observations if o["correct"] is None)
    notes = [HEADLINE_DEFINITION + " Ranks use the headline; ties share a rank.",
             _acc_note(ctx), ctx.settings.boot_note,
             "Headline intervals resample probes within each stratum (stratified cluster bootstrap), so every "
             "stratum stays present in every replicate.",
             "Headroom position = (headline − floor) / (ceiling − floor), with the floor from `null` and the "
             "ceiling from the `oracle` calibration system on the same cases"
             + ("." if cal else f"; not available here: {metrics.calibration_note}"),
             "Error observations count as not correct; nothing is imputed."]
    if unjudged:
        notes.append(f"{unjudged} observation(s) have no label from `{ctx.data.judge}` (judge failed) "
                     "and are left out of accuracy.")
    blocks: list[Any] = [Table(tuple(columns), tuple(rows), notes=tuple(notes))]
    blocks.extend(calibration_blocks(ctx))
    locomo = locomo_table(ctx)
    if locomo is not None:
        blocks.append(locomo)
    return Section(
        "headline", "Headline scores",
        "Per condition: the headline (mean over question categories of accuracy on answerable probes — it "
        "cannot be won by abstaining), answerable and abstention accuracy apart, with intervals, the outcome "
        "mix and whether the context leaked the future.",
        tuple(blocks),
    )


def _checkpoint_meta(ctx: Context) -> dict[int, str]:
    """Checkpoint ordinal → a label (time and closing turn when there is one trajectory)."""
    trajectories = {o["trajectory"] for o in ctx.data.observations}
    if len(trajectories) != 1:
        return {}
    labels = {}
    for cp in ctx.data.checkpoints:
        labels.setdefault(cp["ordinal"], f"{(cp['sim_time'] or '')[:10]} · after {cp['last_turn_id']}")
    return labels


def over_time(ctx: Context) -> Section:
    axis = checkpoint_axis(ctx)
    answerable = [o for o in ctx.data.observations if not expects_abstention(o)]
    by = group([{**o, "x": axis.x(o)} for o in answerable], "condition", "x")
    checkpoints = sorted({axis.x(o) for o in ctx.data.observations})
    labels = {} if axis.aligned else _checkpoint_meta(ctx)
    series: dict[str, list[dict[str, Any]]] = {c: [] for c in ctx.conditions}
    rows = []
    for cp in checkpoints:
        row: dict[str, Any] = {"checkpoint": cp, "label": labels.get(cp, ""),
                               "n": max((len(by.get((c, cp), [])) for c in ctx.conditions), default=0)}
        for cond in ctx.conditions:
            obs = by.get((cond, cp), [])
            if not obs:
                row[f"c:{cond}"] = None
                continue
            est, _ = ctx.accuracy(obs, cond, f"cp{cp}")
            row[f"c:{cond}"] = est
            series[cond].append({"x": cp, "value": est.value, "lo": est.interval[0], "hi": est.interval[1]})
        rows.append(row)
    where = "relative position" if axis.aligned else "checkpoint"
    fig = Figure(
        "fig-over-time", "over_time", f"Answerable accuracy over {'the trajectory' if axis.aligned else 'checkpoints'}",
        {"conditions": ctx.conditions, "series": series, "xlabel": axis.xlabel,
         "ylabel": "answerable accuracy", "xticks": checkpoints},
        caption=f"Points: answerable accuracy per {where}; vertical bars: {ctx.settings.ci_label} (cluster bootstrap "
                f"over probes, resampling unit = {stats.PROBE_UNIT}). Conditions are dodged sideways so ties stay "
                "visible. " + axis.note,
        alt=f"Answerable accuracy per {where} for each condition with interval bands.",
    )
    columns = (Column("checkpoint", "Position bin" if axis.aligned else "Checkpoint", "int"),
               Column("label", "When", "text"),
               Column("n", "Answerable obs.", "int")) + _cond_columns(ctx)
    return Section(
        "over-time", "Score over checkpoints",
        "Answerable accuracy at each checkpoint, against the reference in force there: a system that absorbs "
        "revisions holds its score as facts change; one that keeps superseded versions drops.",
        (fig, Table(columns, tuple(rows), notes=(
            _acc_note(ctx) + " Only answerable observations (abstention is scored apart, in the headline section).",
            axis.note, ctx.settings.boot_note))),
    )


def outcome_mix(ctx: Context) -> Section:
    axis = checkpoint_axis(ctx)
    by = group([{**o, "x": axis.x(o)} for o in ctx.data.observations], "condition", "x")
    checkpoints = sorted({axis.x(o) for o in ctx.data.observations})
    shares: dict[str, dict[str, list[float]]] = {}
    rows = []
    for cond in ctx.conditions:
        shares[cond] = {k: [] for k in (*OUTCOMES, "leak")}
        for cp in checkpoints:
            obs = by.get((cond, cp), [])
            n = len(obs)
            counts = outcome_counts(obs)
            row = {"condition": cond, "checkpoint": cp, "n": n}
            for k in OUTCOMES:
                share = counts.get(k, 0) / n if n else None
                row[k] = share
                shares[cond][k].append(share or 0.0)
            leak = sum(1 for o in obs if o["proven_leak"]) / n if n else None
            row["leak"] = leak
            shares[cond]["leak"].append(leak or 0.0)
            rows.append(row)
    fig = Figure(
        "fig-outcome-mix", "outcome_mix", "Outcome mix per checkpoint",
        {"conditions": ctx.conditions, "checkpoints": checkpoints, "shares": shares, "outcomes": OUTCOMES},
        caption="Stacked shares of outcome labels per checkpoint; the black line is the share of observations "
                "with a proven leak (context held a turn from after the checkpoint). " + axis.note,
        alt="Stacked outcome shares per checkpoint, one panel per condition.",
    )
    columns = (Column("condition", "Condition", "condition"), Column("checkpoint", "Checkpoint", "int"),
               Column("n", "Obs.", "int")) + tuple(Column(k, k.capitalize(), "share_bar") for k in OUTCOMES) + (
        Column("leak", "Proven leak", "share_bar"),)
    return Section(
        "outcome-mix", "Outcome mix over time",
        "What the non-correct answers were: stale (a superseded version), future (a version not yet true — "
        "a suspicion only), abstained, wrong — and how often the context provably leaked the future.",
        (score_details(ctx), fig, Table(columns, tuple(rows), notes=(
            f"Labels from the `{ctx.data.judge}` judge. Abstained includes correct abstentions (where no "
            "version was known yet); a future answer is not proof of leakage, a proven leak is.", axis.note))),
    )


def comparisons(ctx: Context) -> tuple[tuple[str, str], ...]:
    if ctx.compare:
        return ctx.compare
    declared = tuple(tuple(p) for p in ctx.data.manifest.get("campaign", {}).get("compare", []) or ())
    return declared or tuple(itertools.combinations(ctx.conditions, 2))


def aligned(ctx: Context, a: str, b: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    key = lambda o: (o["trajectory"], o["probe_id"], o["checkpoint"], o["repetition"])  # noqa: E731
    right = {key(o): o for o in ctx.data.observations if o["condition"] == b}
    return [(o, right[key(o)]) for o in ctx.data.observations if o["condition"] == a and key(o) in right]


def paired(ctx: Context) -> Section:
    family = comparisons(ctx)
    rubric = any(o["rubric"] is not None for o in ctx.data.observations)
    results = []
    for a, b in family:
        pairs = [(x, y) for x, y in aligned(ctx, a, b) if x["correct"] is not None and y["correct"] is not None]
        clusters = [cluster(x) for x, _ in pairs]
        rng = stats.rng_for(ctx.settings.seed, "paired", a, b)
        acc = stats.paired_difference([x["correct"] for x, _ in pairs], [y["correct"] for _, y in pairs],
                                      clusters, rng, names=(a, b), binary=True, boot=ctx.settings.boot,
                                      level=ctx.settings.level)
        f1_pairs = [(x, y) for x, y in aligned(ctx, a, b) if x["f1"] is not None and y["f1"] is not None]
        f1 = stats.paired_difference([x["f1"] for x, _ in f1_pairs], [y["f1"] for _, y in f1_pairs],
                                     [cluster(x) for x, _ in f1_pairs],
                                     stats.rng_for(ctx.settings.seed, "paired-f1", a, b),
                                     names=(a, b), boot=ctx.settings.boot, level=ctx.settings.level)
        nos = None
        if rubric:
            r_pairs = [(x, y) for x, y in pairs if x["rubric"] is not None and y["rubric"] is not None]
            nos = stats.net_ordinal_superiority(
                [x["rubric"] for x, _ in r_pairs], [y["rubric"] for _, y in r_pairs],
                [cluster(x) for x, _ in r_pairs], stats.rng_for(ctx.settings.seed, "nos", a, b),
                boot=ctx.settings.boot, level=ctx.settings.level)
        results.append((a, b, acc, f1, nos))
    holm_flip = stats.holm([r[2].randomization.p_value if r[2].difference.n else None for r in results])
    rows, forest = [], []
    for (a, b, acc, f1, nos), hf in zip(results, holm_flip, strict=True):
        detail = dict(acc.mcnemar.detail)
        row = {
            "comparison": f"{a} − {b}", "pairs": acc.difference.n, "probes": acc.difference.clusters,
            "delta": acc.difference, "flip_p": acc.randomization.p_value, "flip_holm": hf,
            "flip": (acc.randomization.p_value, hf), "flip_method": acc.randomization.method,
            "discordant": f"{int(detail['a_only'])} / {int(detail['b_only'])}",
            "f1": f1.difference,
        }
        if nos is not None:
            row["nos"] = nos
        rows.append(row)
        lo, hi = acc.difference.interval
        forest.append({"label": f"{a} − {b}", "value": acc.difference.value, "lo": lo, "hi": hi,
                       "significant": hf is not None and hf < ctx.settings.alpha,
                       "p_holm": hf, "n": acc.difference.n})
    columns = [
        Column("comparison", "A − B", "label"), Column("pairs", "Pairs", "int"),
        Column("probes", "Probes", "int", "clusters"),
        Column("delta", "Δ accuracy", "delta", f"{ctx.settings.ci_label}, cluster bootstrap over probes"),
        Column("flip", "Sign-flip p", "p_holm", f"resampling unit = {stats.PROBE_UNIT}; Holm-adjusted below"),
        Column("discordant", "A only / B only", "text", "discordant pairs (descriptive)"),
        Column("f1", "Δ token-F1", "delta", f"{ctx.settings.ci_label}, cluster bootstrap over probes"),
    ]
    if rubric:
        columns.append(Column("nos", "Net ordinal superiority", "delta", "rubric, P(A>B) − P(B>A)"))
    source = ("given on the command line" if ctx.compare else
              "declared by the campaign" if ctx.data.manifest.get("campaign", {}).get("compare") else
              "all condition pairs (the campaign declares none)")
    notes = (
        f"Pairs: the same (trajectory, probe, checkpoint, repetition) answered under both conditions. "
        f"The family of {len(family)} comparison(s) is {source}; Holm's step-down correction is applied "
        "across it.",
        ctx.settings.boot_note + " Intervals are not adjusted for multiplicity.",
        f"One cluster-aware test family: the interval resamples whole probes ({stats.PROBE_UNIT}) and the "
        "sign-flip randomization test flips each probe's differences together; the forest plot's filled "
        "points use the same Holm-adjusted sign-flip p-values as this table. Tests that treat pairs as "
        "independent (McNemar) are not used: checkpoints of one probe are not independent.",
        "A difference near zero means no detected difference, not equivalence.",
    )
    blocks: list[Any] = []
    if forest:
        blocks.append(Figure(
            "fig-forest", "forest", "Paired differences in accuracy",
            {"rows": forest, "xlabel": "Δ accuracy (A − B)", "alpha": ctx.settings.alpha},
            caption=f"Points: mean paired difference; bars: {ctx.settings.ci_label} (cluster bootstrap over "
                    f"probes). Filled points: Holm-adjusted sign-flip p < {ctx.settings.alpha} (whole probes flipped).",
            alt="Forest plot of paired accuracy differences with intervals.",
        ))
    else:
        blocks.append(Callout("info", "Nothing to compare", "The run has fewer than two conditions."))
    blocks.append(Table(tuple(columns), tuple(rows), notes=notes, empty="No comparisons."))
    return Section(
        "paired", "Paired differences",
        "Each comparison uses only the probe-checkpoint pairs both conditions answered, so probe "
        "difficulty cancels out.", tuple(blocks),
    )


def categories(ctx: Context) -> Section:
    blocks: list[Any] = []
    heat: dict[str, Any] = {"conditions": ctx.conditions, "rows": []}
    for field, title in (("category", "Category"), ("kind", "Probe kind")):
        by = group(ctx.data.observations, field, "condition")
        values = sorted({o[field] or "(none)" for o in ctx.data.observations})
        rows = []
        for value in values:
            raw = None if value == "(none)" else value
            row: dict[str, Any] = {"value": value, "probes": len({cluster(o) for o in ctx.data.observations
                                                                  if o[field] == raw})}
            cells = []
            for cond in ctx.conditions:
                obs = by.get((raw, cond), [])
                est = ctx.accuracy(obs, field, value, cond)[0] if obs else None
                row[f"c:{cond}"] = est
                cells.append(None if est is None else est.value)
            rows.append(row)
            if field == "category":
                heat["rows"].append({"label": value, "values": cells})
        columns = (Column("value", title, "label"), Column("probes", "Probes", "int")) + _cond_columns(ctx)
        blocks.append(Table(columns, tuple(rows), caption=f"Accuracy by {title.lower()}",
                            notes=(ctx.settings.boot_note,) if field == "kind" else ()))
    blocks.append(_category_over_checkpoints(ctx))
    if len(heat["rows"]) >= 2:
        blocks.insert(0, Figure("fig-categories", "heatmap", "Accuracy by category", heat,
                                caption="Accuracy per category (rows) and condition (columns).",
                                alt="Heatmap of accuracy by category and condition."))
    return Section(
        "categories", "By category and probe kind",
        "Where each condition wins and loses: accuracy per probe category and per kind (current, "
        "historical, evolution, abstention).", tuple(blocks),
    )


def _category_over_checkpoints(ctx: Context) -> Table:
    """Plain accuracy per (condition, category) at each checkpoint ordinal (no intervals: cells are small)."""
    axis = checkpoint_axis(ctx)
    obs = [{**o, "checkpoint": axis.x(o)} for o in ctx.data.observations if o["correct"] is not None]
    checkpoints = sorted({o["checkpoint"] for o in obs})
    by = group(obs, "condition", "category")
    rows = []
    for cond in ctx.conditions:
        for category in sorted({o["category"] or "(none)" for o in obs if o["condition"] == cond}):
            items = by.get((cond, None if category == "(none)" else category), [])
            row: dict[str, Any] = {"condition": cond, "category": category}
            for cp in checkpoints:
                cell = [o["correct"] for o in items if o["checkpoint"] == cp]
                row[f"cp{cp}"] = sum(cell) / len(cell) if cell else None
            rows.append(row)
    columns = (Column("condition", "Condition", "condition"), Column("category", "Category", "label")) + tuple(
        Column(f"cp{cp}", f"#{cp}", "rate") for cp in checkpoints)
    return Table(columns, tuple(rows), caption="Accuracy by category over checkpoints",
                 notes=("Share credited correct among the observations of that category asked at that "
                        "checkpoint (repetitions pooled); blank where none was asked. Descriptive: cells can be small, "
                        "so no intervals are drawn.", axis.note))


def evidence(ctx: Context) -> Section:
    by_cond = group(ctx.data.observations, "condition")
    rows = []
    for cond in ctx.conditions:
        obs = [o for o in by_cond.get(cond, []) if o["evidence_recall"] is not None]
        full = [o for o in obs if o["evidence_recall"] >= 1.0]
        partial = [o for o in obs if o["evidence_recall"] < 1.0]
        rows.append({
            "condition": cond, "n": len(obs),
            "recall": ctx.mean(obs, lambda o: o["evidence_recall"], "recall", cond),
            "full": len(full) / len(obs) if obs else None,
            "acc_full": ctx.accuracy(full, "ev-full", cond)[0] if full else None,
            "acc_partial": ctx.accuracy(partial, "ev-partial", cond)[0] if partial else None,
        })
    columns = (
        Column("condition", "Condition", "condition"), Column("n", "Obs. with evidence", "int"),
        Column("recall", "Evidence recall", "rate_estimate", ctx.settings.ci_label),
        Column("full", "All evidence reached", "share_bar"),
        Column("acc_full", "Accuracy | all evidence", "rate_estimate"),
        Column("acc_partial", "Accuracy | evidence missing", "rate_estimate"),
    )
    blocks: list = [Table(columns, tuple(rows), notes=(
        "Evidence recall = share of the in-force version's evidence turns among the context's cited source "
        "turns (the adapter's claim; the reader-free table below decides by content); observations whose expectation has no evidence (abstention) are left out.",
        ctx.settings.boot_note))]
    blocks += provenance.evidence_blocks(ctx)
    gold = _retrieval_gold(ctx)
    if gold is not None:
        blocks.append(gold)
    return Section(
        "evidence", "Evidence reach",
        "Did the context hold the turns that establish the answer? Accuracy split by whether all evidence "
        "turns reached the answer prompt separates retrieval failures from answering failures.",
        tuple(blocks),
    )


def _retrieval_gold(ctx: Context) -> Table | None:
    """LongMemEval gold labels (harness-only): retrieval recall at turn and session level."""
    if ctx.store is None:
        return None
    gold = {r["obs_id"]: r for r in ctx.store.rows(
        "select g.* from retrieval_gold g join observations o on o.obs_id = g.obs_id where o.run_id = ?",
        [ctx.data.run["run_id"]])}
    if not gold:
        return None
    by_cond = group([o for o in ctx.data.observations if o["obs_id"] in gold], "condition")
    rows = []
    for cond in ctx.conditions:
        obs = by_cond.get(cond, [])
        turn = [o for o in obs if gold[o["obs_id"]]["turn_recall"] is not None]
        session = [o for o in obs if gold[o["obs_id"]]["session_recall"] is not None]
        rows.append({
            "condition": cond, "n": len(obs),
            "turn": ctx.mean(turn, lambda o: gold[o["obs_id"]]["turn_recall"], "gold-turn", cond) if turn else None,
            "session": ctx.mean(session, lambda o: gold[o["obs_id"]]["session_recall"], "gold-session", cond)
            if session else None,
        })
    return Table(
        (Column("condition", "Condition", "condition"), Column("n", "Questions", "int"),
         Column("turn", "Turn-level recall", "rate_estimate", ctx.settings.ci_label),
         Column("session", "Session-level recall", "rate_estimate", ctx.settings.ci_label)),
        tuple(rows), caption="Retrieval recall against LongMemEval gold labels",
        notes=("Turn level: share of the turns marked has_answer that the context cites. Session level: share "
               "of the answer sessions the context draws at least one turn from. Gold labels are read by "
               "the harness only; no system ever receives them.", ctx.settings.boot_note))
