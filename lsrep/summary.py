"""The per-condition summary table printed by `lsrep show` and at the end of a run."""

from __future__ import annotations

from collections import Counter, defaultdict

from lsrep.judge.verdict import OUTCOMES
from lsrep.store import RunStore


def summary_rows(store: RunStore, run_id: str, judge: str = "deterministic") -> list[dict]:
    rows = store.rows(
        "select o.condition, o.status, o.context_tokens, o.prompt_tokens, o.n_fragments, o.proven_leak, "
        "j.outcome, j.correct from observations o left join judgements j on j.obs_id = o.obs_id and j.judge = ? "
        "where o.run_id = ?",
        [judge, run_id],
    )
    by_cond: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_cond[r["condition"]].append(r)
    declared = [c["name"] for c in store.run(run_id)["manifest"].get("campaign", {}).get("conditions", [])]
    order = [c for c in declared if c in by_cond] + sorted(set(by_cond) - set(declared))
    from lsrep.integrity import alarms, evidence_records, integrity_records

    integrity, evidence = integrity_records(store, run_id), evidence_records(store, run_id)
    out = []
    for cond in order:
        obs = by_cond[cond]
        n = len(obs)
        outcomes = Counter(r["outcome"] or "error" for r in obs)
        ok = [r for r in obs if r["status"] == "ok"]
        out.append({
            "condition": cond, "n": n, "accuracy": sum(r["correct"] or 0 for r in obs) / n if n else 0.0,
            **{o: outcomes.get(o, 0) for o in OUTCOMES},
            "mean_fragments": sum(r["n_fragments"] for r in ok) / len(ok) if ok else 0.0,
            "mean_context_tokens": sum(r["context_tokens"] for r in ok) / len(ok) if ok else 0.0,
            "mean_prompt_tokens": _mean([r["prompt_tokens"] for r in obs if r["prompt_tokens"] is not None]),
            "proven_leaks": sum(1 for r in obs if r["proven_leak"]),
            "evidence": evidence.get(cond, {}), "integrity": integrity.get(cond, {}),
            "alarms": alarms(integrity.get(cond, {})),
        })
    return out


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _mean(values: list) -> float:
    return sum(values) / len(values) if values else 0.0


def print_summary(store: RunStore, run_id: str) -> None:
    run = store.run(run_id)
    manifest = run["manifest"]
    answerer = manifest["answerer"]
    label = " (offline, deterministic)" if answerer.get("offline") else ""
    print(f"run {run_id}  campaign {run['campaign']!r}  status {run['status']}")
    print(f"answerer: {answerer['name']} v{answerer['version']}{label}; judge: deterministic v1 "
          f"(exact/alias match, token-F1, outcome label); embedder: {manifest['embedder']}")
    header = (f"{'condition':<22}{'n':>5}{'acc':>7}{'correct':>9}{'stale':>7}{'future':>8}{'abstain':>9}"
              f"{'wrong':>7}{'error':>7}{'frags':>7}{'ctx tok':>9}{'prompt':>8}{'leaks':>7}"
              f"{'ev.rec':>8}{'ans.ctx':>8}{'alarms':>8}")
    print(header)
    print("-" * len(header))
    for r in summary_rows(store, run_id):
        print(f"{r['condition']:<22}{r['n']:>5}{r['accuracy']:>7.2f}{r['correct']:>9}{r['stale']:>7}"
              f"{r['future']:>8}{r['abstained']:>9}{r['wrong']:>7}{r['error']:>7}{r['mean_fragments']:>7.1f}"
              f"{r['mean_context_tokens']:>9.0f}{r['mean_prompt_tokens']:>8.0f}{r['proven_leaks']:>7}"
              f"{_rate(r['evidence'].get('recall')):>8}{_rate(r['evidence'].get('answer_in_context')):>8}"
              f"{r['alarms']:>8}")
    print("acc = share credited correct (correct, or abstained where abstention was expected); frags and "
          "ctx tok = mean per answered observation; prompt = mean answer-prompt tokens wherever measured "
          "(failures included); leaks = observations whose context held text first said, or a turn cited, "
          "after the checkpoint; ev.rec = evidence turns whose content is in the context; ans.ctx = the "
          "reference answer occurs in the context (both reader-free); alarms = integrity checks tripped "
          "(leaks, unsourced, misattributed, duplicates, nondeterminism, budget; `lsrep report` details).")
    flagged = [r for r in summary_rows(store, run_id) if r["alarms"]]
    for r in flagged:
        parts = ", ".join(f"{k} {v}" for k, v in r["integrity"].items() if v)
        print(f"integrity alarm: {r['condition']}: {parts}")
