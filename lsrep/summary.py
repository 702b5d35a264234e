"""The per-condition summary table printed by `lsrep show`, at the end of a run and by `lsrep longmemeval`.

Scores come from `lsrep.headline` (the same module the reports use): the headline that cannot be won
by abstaining, answerable accuracy with its cluster-bootstrap interval, abstention accuracy apart.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from lsrep.headline import HEADLINE_METRIC, condition_scores
from lsrep.judge.deterministic import DETERMINISTIC_VERSION
from lsrep.judge.verdict import OUTCOMES
from lsrep.store import RunStore

SUMMARY_BOOT = 1000
"""Bootstrap replicates for the printed summary (reports use their own setting)."""


def summary_rows(store: RunStore, run_id: str, judge: str = "deterministic") -> list[dict]:
    rows = store.rows(
        "select o.condition, o.trajectory, o.probe_id, o.kind, o.category, o.expected, o.status, "
        "o.context_tokens, o.prompt_tokens, o.n_fragments, o.proven_leak, j.outcome, j.correct "
        "from observations o left join judgements j on j.obs_id = o.obs_id and j.judge = ? "
        "and j.status = 'ok' where o.run_id = ? order by o.obs_id",
        [judge, run_id],
    )
    by_cond: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_cond[r["condition"]].append(r)
    campaign = store.run(run_id)["manifest"].get("campaign", {})
    declared = [c["name"] for c in campaign.get("conditions", [])]
    systems = {c["name"]: c.get("system") for c in campaign.get("conditions", [])}
    order = [c for c in declared if c in by_cond] + sorted(set(by_cond) - set(declared))
    scores = condition_scores(rows, order, seed=int(campaign.get("seed") or 0), systems=systems, boot=SUMMARY_BOOT)
    from lsrep.integrity import alarms, evidence_records, integrity_records

    integrity, evidence = integrity_records(store, run_id), evidence_records(store, run_id)
    out = []
    for cond, score in zip(order, scores, strict=True):
        obs = by_cond[cond]
        outcomes = Counter(r["outcome"] or "error" for r in obs)
        ok = [r for r in obs if r["status"] == "ok"]
        out.append({
            "condition": cond, "n": len(obs), "rank": score.rank, "score": score,
            "headline": score.headline.value, "headline_ci": score.headline.interval,
            "answerable_n": score.answerable.n, "answerable_correct": score.answerable_correct,
            "answerable": score.answerable.value, "answerable_ci": score.answerable.interval,
            "abstention_n": score.abstention_n, "abstention_correct": score.abstention_correct,
            **{o: outcomes.get(o, 0) for o in OUTCOMES},
            "mean_fragments": sum(r["n_fragments"] for r in ok) / len(ok) if ok else 0.0,
            "mean_context_tokens": sum(r["context_tokens"] for r in ok) / len(ok) if ok else 0.0,
            "mean_prompt_tokens": _mean([r["prompt_tokens"] for r in obs if r["prompt_tokens"] is not None]),
            "proven_leaks": score.labels["proven_leak"],
            "evidence": evidence.get(cond, {}), "integrity": integrity.get(cond, {}),
            "alarms": alarms(integrity.get(cond, {})),
        })
    return out


def _mean(values: list) -> float:
    return sum(values) / len(values) if values else 0.0


def _rate(value: float | None) -> str:
    """Two decimals; a dash for None or NaN (nothing to measure)."""
    return "   —" if value is None or value != value else f"{value:.2f}"


def _ci(interval: tuple[float, float]) -> str:
    lo, hi = interval
    return "—" if lo != lo else f"{lo:.2f}–{hi:.2f}"


def print_summary(store: RunStore, run_id: str) -> None:
    run = store.run(run_id)
    manifest = run["manifest"]
    answerer = manifest["answerer"]
    label = " (offline, deterministic)" if answerer.get("offline") else ""
    print(f"run {run_id}  campaign {run['campaign']!r}  status {run['status']}")
    print(f"answerer: {answerer['name']} v{answerer['version']}{label}; judge: deterministic v{DETERMINISTIC_VERSION} "
          f"(exact/alias match, token-F1, outcome label); embedder: {manifest['embedder']}")
    header = (f"{'condition':<22}{'rank':>5}{'headline':>9}{'95% CI':>11}{'ans n':>7}{'ans acc':>8}{'95% CI':>11}"
              f"{'abst n':>7}{'abst acc':>9}{'stale':>7}{'future':>7}{'abstain':>8}{'wrong':>7}{'error':>6}"
              f"{'frags':>7}{'ctx tok':>8}{'prompt':>7}{'leaks':>6}{'ev.rec':>7}{'ans.ctx':>8}{'alarms':>7}")
    print(header)
    print("-" * len(header))
    rows = summary_rows(store, run_id)
    cal = run_calibration(store, run_id)
    for r in rows:
        rank = "—" if r["rank"] is None else str(r["rank"])
        abst = r["abstention_correct"] / r["abstention_n"] if r["abstention_n"] else float("nan")
        print(f"{r['condition']:<22}{rank:>5}{_rate(r['headline']):>9}{_ci(r['headline_ci']):>11}"
              f"{r['answerable_n']:>7}{_rate(r['answerable']):>8}{_ci(r['answerable_ci']):>11}"
              f"{r['abstention_n']:>7}{_rate(abst):>9}{r['stale']:>7}{r['future']:>7}{r['abstained']:>8}"
              f"{r['wrong']:>7}{r['error']:>6}{r['mean_fragments']:>7.1f}{r['mean_context_tokens']:>8.0f}"
              f"{r['mean_prompt_tokens']:>7.0f}{r['proven_leaks']:>6}"
              f"{_rate(r['evidence'].get('recall')):>7}{_rate(r['evidence'].get('answer_in_context')):>8}"
              f"{r['alarms']:>7}")
    print(f"headline = {HEADLINE_METRIC}: the mean over categories (else probe kinds) of accuracy on answerable "
          "probes; ranks use it. ans = probes with a reference answer; abst = probes whose correct response is "
          f"to abstain (never in the headline). CIs: cluster bootstrap over probes (trajectory, probe_id), "
          f"B={SUMMARY_BOOT}. frags and ctx tok = mean per answered observation; prompt = mean answer-prompt "
          "tokens wherever measured; leaks = observations whose context held text first said, or a turn cited, "
          "after the checkpoint; ev.rec = evidence turns whose content is in the context; ans.ctx = the "
          "reference answer occurs in the context (both reader-free); alarms = integrity checks tripped "
          "(leaks, unsourced, misattributed, duplicates, nondeterminism, budget; `lsrep report` details).")
    for r in rows:
        if r["alarms"]:
            parts = ", ".join(f"{k} {v}" for k, v in r["integrity"].items() if v)
            print(f"integrity alarm: {r['condition']}: {parts}")
    if cal is None:
        return
    ceiling, floor = cal.ceiling, cal.floor
    print(f"calibration (oracle = exactly the evidence in force; null = nothing; never ranked): ceiling "
          f"{ceiling.answerable.value:.2f} answerable / {ceiling.headline.value:.2f} headline, floor "
          f"{floor.answerable.value:.2f} / {floor.headline.value:.2f}; stale detection {_rate(cal.stale.rate)} "
          f"(n={cal.stale.n}), future detection {_rate(cal.future.rate)} (n={cal.future.n})")
    print("instrument headroom (0 = floor, 1 = ceiling, on the headline): " + ", ".join(
        f"{r['condition']} {_rate(cal.headroom(r['headline']))}" for r in rows))
    if cal.low_ceiling:
        print(f"WARNING: the ceiling is below .60 ({ceiling.answerable.value:.2f}): with perfect memory the answerer "
              "and judge score this low, so the answerer, not memory, limits the comparison.")


def run_calibration(store: RunStore, run_id: str):
    """Calibration systems on a stored run's own cases, when its answerer is offline (no model call)."""
    from lsrep.answer import make_answerer
    from lsrep.calibration import calibrate, cases_from_observations
    from lsrep.protocol.campaign import AnswererSpec

    manifest = store.run(run_id)["manifest"]
    campaign = manifest.get("campaign", {})
    spec = AnswererSpec.model_validate(campaign.get("answerer") or {"kind": "extractive"})
    if spec.kind != "extractive" or campaign.get("answer_mode", "context") == "system":
        return None
    if manifest.get("diagnostic") == "longmemeval":  # turn text is not stored: read from the input file
        return None
    obs = store.rows("select trajectory, probe_id, kind, category, checkpoint, prefix_len, sim_time, question, "
                     "expected from observations where run_id = ? order by obs_id", [run_id])
    if not obs:
        return None
    turns = {(t["trajectory"], t["turn_id"]): t for t in store.rows(
        "select trajectory, idx, turn_id, timestamp, role, speaker, content from turns where run_id = ?", [run_id])}
    cases, lines = cases_from_observations(obs, turns)
    return calibrate(cases, lines, make_answerer(spec), seed=int(campaign.get("seed") or 0), boot=SUMMARY_BOOT)
