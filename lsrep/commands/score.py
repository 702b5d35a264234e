"""`lsrep score RUN --judge NAME`: (re-)judge a stored run without replaying it."""

from __future__ import annotations

from pathlib import Path


def register(sub, command) -> None:
    sp = sub.add_parser("score", help="judge a stored run again (no replay); model calls are cached",
                        description="Exit status: 0 when every observation was judged, 1 when judgements "
                                    "failed (unless --allow-failures), 2 on bad input or a missing API key.")
    sp.add_argument("run", nargs="?", default="latest", help="run id, unique prefix, or 'latest' (default)")
    sp.add_argument("--judge", required=True,
                    help="a judge named in the run's campaign, `deterministic`, or a new name with --kind "
                         "(LoCoMo's official F1: `lsrep locomo-f1`)")
    sp.add_argument("--kind", choices=["evolving", "longmemeval"], help="judge kind for a judge not in the campaign")
    sp.add_argument("--base-url", help="OpenAI-compatible endpoint (with --kind)")
    sp.add_argument("--model", help="model name (with --kind)")
    sp.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    sp.add_argument("--passes", type=int, default=1, help="passes per observation (majority vote)")
    sp.add_argument("--concurrency", type=int, default=4, help="parallel calls to the endpoint (default: %(default)s)")
    sp.add_argument("--refresh-cache", action="store_true",
                    help="do not answer from the response cache: every call goes to the endpoint again")
    sp.add_argument("--allow-failures", action="store_true", help="exit 0 even when judgements failed")
    sp.add_argument("--store", default="runs/lsrep.sqlite", help="run store (default: %(default)s)")
    command("score")(cmd_score)


def cmd_score(args) -> int:
    import os
    from datetime import UTC, datetime

    from lsrep.errors import ConfigError, LsrepError
    from lsrep.failures import FailureTally, report_failures
    from lsrep.protocol.campaign import EndpointRef, JudgeSpec
    from lsrep.store import RunStore

    path = Path(args.store)
    if not path.exists():
        raise LsrepError(f"no run store at {path} (pass --store PATH)")
    store = RunStore(path)
    run = store.run(args.run) if args.run != "latest" else store.run(store.latest_run())
    run_id = run["run_id"]
    if args.judge == "locomo-f1":
        raise LsrepError("LoCoMo's official metric is not a judge: run `lsrep locomo-f1 RUN --store PATH`")
    rows = store.rows("select * from observations where run_id = ? order by obs_id", [run_id])
    if args.judge == "deterministic":
        judgements, calls = _deterministic(rows), []
    else:
        known = {j["name"]: j for j in run["manifest"].get("campaign", {}).get("judges", [])}
        if args.judge in known and args.kind is None:
            spec = JudgeSpec.model_validate(known[args.judge])
        elif args.kind and args.base_url and args.model:
            spec = JudgeSpec(name=args.judge, kind=args.kind, passes=args.passes, endpoint=EndpointRef(
                base_url=args.base_url, model=args.model, api_key_env=args.api_key_env,
                concurrency=args.concurrency))
        else:
            raise ConfigError(f"judge {args.judge!r} is not in the run's campaign "
                              f"(known: {', '.join(known) or 'none'}); give --kind, --base-url and --model")
        from lsrep.judge.campaign import build_judge, judge_observations

        if spec.endpoint is not None and spec.endpoint.api_key_env and not os.environ.get(spec.endpoint.api_key_env):
            # Fail before anything is sent or written: every call would fail the same way.
            raise ConfigError(f"judge {spec.name!r} reads its API key from the environment variable "
                              f"{spec.endpoint.api_key_env}, which is not set; nothing was sent or stored")
        refresh = datetime.now(UTC).isoformat() if args.refresh_cache else None
        judge = build_judge(spec, path, refresh_before=refresh)
        judgements, calls = judge_observations(spec.name, judge, rows, workers=spec.endpoint.concurrency)
    store.write_judgements(judgements)
    if calls:
        with store.db.conn:
            store._insert_rows("llm_calls", calls)
    _print(store, run_id, args.judge, judgements, calls)
    failed = [j for j in judgements if j["status"] != "ok"]
    if not failed:
        return 0
    by_obs = {r["obs_id"]: r for r in rows}
    first = tuple(f"{by_obs[j['obs_id']]['unit_id']}, checkpoint {by_obs[j['obs_id']]['checkpoint']}, probe "
                  f"{by_obs[j['obs_id']]['probe_id']}, judge {args.judge}: {j['error']}" for j in failed[:5])
    return report_failures(FailureTally(failed_judgements=len(failed), first=first),
                           allow=args.allow_failures, store_path=path)


def _deterministic(rows):
    from lsrep.engine import deterministic_judgement

    return [deterministic_judgement(row) for row in rows]


def _print(store, run_id: str, judge: str, judgements, calls) -> None:
    from lsrep import stats

    failed = sum(1 for j in judgements if j["status"] != "ok")
    cached = sum(1 for c in calls if c["cached"])
    sent = sum(1 for c in calls if not c["cached"] and (c["attempts"] or 0) > 0)
    refused = len(calls) - cached - sent
    call_failed = sum(1 for c in calls if c["status"] != "ok")
    print(f"judged {len(judgements) - failed} of {len(judgements)} observation(s) of run {run_id} with "
          f"{judge!r} ({failed} failed); {len(calls)} model call(s): {sent} sent to the endpoint, {cached} from "
          f"the cache, {refused} never sent; {call_failed} call(s) failed")
    if judge == "deterministic":
        return
    det = {r["obs_id"]: r for r in store.rows(
        "select obs_id, outcome, correct from judgements where run_id = ? and judge = 'deterministic'", [run_id])}
    pairs = [(det[j["obs_id"]], j) for j in judgements if j["status"] == "ok" and j["obs_id"] in det]
    if not pairs:
        return
    a = [d["outcome"] for d, _ in pairs]
    b = [j["outcome"] for _, j in pairs]
    pct, kappa = stats.percent_agreement(a, b), stats.cohen_kappa(a, b)
    kappa_text = "undefined" if kappa.value is None else f"{kappa.value:.3f}"
    print(f"agreement with the deterministic judge on outcome labels: {pct.value:.1%} (n={pct.n}), "
          f"Cohen's kappa {kappa_text}")
