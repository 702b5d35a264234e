"""`lsrep longmemeval`: the LongMemEval matched diagnostic (same answerer and judge, different memory).

The data comes from the `longmemeval` data source and the optional report from the `default`
report writer, both entry points of the outer layers (lsrep.probes, lsrep.reports)."""

from __future__ import annotations

from pathlib import Path


def register(sub, command) -> None:
    sp = sub.add_parser("longmemeval", help="LongMemEval matched diagnostic: same answerer and judge, different memory")
    sp.add_argument("--data", help="official LongMemEval JSON file (oracle, S or M)")
    sp.add_argument("--campaign", help="a LongMemEval campaign TOML (conditions, answerer, judges, embedder)")
    sp.add_argument("--systems", help="comma-separated systems (instead of --campaign)")
    sp.add_argument("--store", default="runs/longmemeval.sqlite", help="run store (default: %(default)s)")
    sp.add_argument("--limit", type=int, help="only the first N questions")
    sp.add_argument("--executor", default="auto", choices=["auto", "in-process", "process", "ray"],
                    help="where units run (default: %(default)s)")
    sp.add_argument("--workers", type=int, default=1, help="parallel units (default: %(default)s)")
    sp.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    sp.add_argument("--fresh", action="store_true", help="start a new run even if an unfinished one exists")
    sp.add_argument("--report", help="also write the report to this folder")
    sp.add_argument("--progress", choices=["auto", "bar", "log", "none"], default="auto",
                    help="overall progress: a bar in a terminal, log lines otherwise (default: %(default)s)")
    sp.add_argument("--allow-failures", action="store_true",
                    help="exit 0 even when units, maintenance or judgements failed (still printed)")

    command("longmemeval")(cmd_longmemeval)


def cmd_longmemeval(args) -> int:
    from lsrep.errors import LsrepError
    from lsrep.executors import make_executor
    from lsrep.longmemeval import load_longmemeval_spec, run_longmemeval, spec_from_systems

    data = Path(args.data) if args.data else None
    if args.campaign:
        spec, source = load_longmemeval_spec(args.campaign, data)
    elif args.systems:
        if data is None:
            raise LsrepError("pass --data PATH (the LongMemEval JSON file)")
        spec = spec_from_systems([s.strip() for s in args.systems.split(",") if s.strip()], data,
                                 store=Path(args.store))
        source = None
    else:
        raise LsrepError("pass --systems a,b,... or --campaign FILE")
    if args.limit:
        spec = spec.model_copy(update={"limit": args.limit})
    outcome = run_longmemeval(spec, source=source, executor=make_executor(args.executor, args.workers, args.address),
                              fresh=args.fresh, progress=args.progress)
    verb = "resumed" if outcome.resumed else "ran"
    print(f"{verb} run {outcome.run_id}: {outcome.questions} question(s), {outcome.units_run} unit(s) replayed, "
          f"{outcome.units_skipped} already stored, {outcome.failed_units} failed")
    print(f"store: {outcome.store_path}")
    from lsrep.store import RunStore
    from lsrep.summary import print_summary

    store = RunStore(outcome.store_path)
    print_summary(store, outcome.run_id)
    _print_retrieval(store, outcome.run_id)
    if args.report:
        from lsrep.registry import REPORT_WRITERS

        for fmt, path in REPORT_WRITERS.load("default")(store, outcome.run_id, Path(args.report)).items():
            print(f"{fmt} report: {path}")
    from lsrep.failures import report_failures, run_failures

    return report_failures(run_failures(store, outcome.run_id), allow=args.allow_failures,
                           store_path=outcome.store_path)


def _print_retrieval(store, run_id: str) -> None:
    rows = store.rows(
        "select o.condition, avg(g.turn_recall) as turn, avg(g.session_recall) as session, count(*) as n "
        "from retrieval_gold g join observations o using (obs_id) where o.run_id = ? group by o.condition "
        "order by o.condition", [run_id])
    if not rows:
        return
    print("retrieval recall against gold labels (harness-only; never shown to systems):")
    for r in rows:
        turn = "n/a" if r["turn"] is None else f"{r['turn']:.2f}"
        session = "n/a" if r["session"] is None else f"{r['session']:.2f}"
        print(f"  {r['condition']:<20} turn {turn}  session {session}  (n={r['n']})")
