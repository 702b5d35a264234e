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
    sp.add_argument("--store", default=None,
                    help="run store (default: the campaign's, or runs/longmemeval.sqlite with --systems)")
    sp.add_argument("--limit", type=int, help="only the first N questions (after --types / --questions)")
    sp.add_argument("--types", help="comma-separated question types to run (e.g. temporal-reasoning)")
    sp.add_argument("--questions", help="comma-separated question ids to run")
    sp.add_argument("--executor", default="auto", choices=["auto", "in-process", "overlapped", "process", "ray"],
                    help="where units run (default: %(default)s: questions of at most 2,000 turns in --workers "
                         "processes side by side, results in question order; with one worker, two questions "
                         "at a time in threads where two cores are usable)")
    sp.add_argument("--workers", type=int, default=None,
                    help="processes running questions, this one included (default: the usable cores, "
                         "capped by --memory-mb)")
    sp.add_argument("--memory-mb", type=int, default=300,
                    help="memory budget that caps the default number of workers (default 300)")
    sp.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    sp.add_argument("--fresh", action="store_true", help="start a new run even if an unfinished one exists")
    sp.add_argument("--report", help="also write the report to this folder")
    sp.add_argument("--export", help="also write the official-format files (hypotheses, retrieval, metrics) "
                                     "to this folder, one subfolder per condition")
    sp.add_argument("--progress", choices=["auto", "bar", "log", "none"], default="auto",
                    help="overall progress: a bar in a terminal, log lines otherwise (default: %(default)s)")
    sp.add_argument("--allow-failures", action="store_true",
                    help="exit 0 even when units, maintenance or judgements failed (still printed)")

    command("longmemeval")(cmd_longmemeval)


def cmd_longmemeval(args) -> int:
    from lsrep.errors import LsrepError
    from lsrep.longmemeval import load_longmemeval_spec, run_longmemeval, spec_from_systems

    data = Path(args.data) if args.data else None
    if args.campaign:
        spec, source = load_longmemeval_spec(args.campaign, data)
    elif args.systems:
        if data is None:
            raise LsrepError("pass --data PATH (the LongMemEval JSON file)")
        spec = spec_from_systems([s.strip() for s in args.systems.split(",") if s.strip()], data,
                                 store=Path(args.store or "runs/longmemeval.sqlite"))
        source = None
    else:
        raise LsrepError("pass --systems a,b,... or --campaign FILE")
    update = {"store": Path(args.store).resolve()} if args.store else {}
    if args.limit:
        update["limit"] = args.limit
    if args.types:
        update["types"] = tuple(t.strip() for t in args.types.split(",") if t.strip())
    if args.questions:
        update["questions"] = tuple(q.strip() for q in args.questions.split(",") if q.strip())
    spec = spec.model_copy(update=update)
    from lsrep.longmemeval import default_executor, default_workers

    workers = args.workers if args.workers is not None else default_workers(args.memory_mb)
    executor = default_executor(args.executor, workers, args.memory_mb, args.address)
    outcome = run_longmemeval(spec, source=source, executor=executor,
                              fresh=args.fresh, progress=args.progress)
    verb = "resumed" if outcome.resumed else "ran"
    print(f"{verb} run {outcome.run_id}: {outcome.questions} question(s), {outcome.units_run} unit(s) replayed, "
          f"{outcome.units_skipped} already stored, {outcome.failed_units} failed")
    if getattr(executor, "name", "") == "sharded":
        print(f"processes: {executor.processes} (this one and {executor.processes - 1} worker(s)); "
              f"{executor.ran_remote} unit(s) ran in a worker")
    print(f"store: {outcome.store_path}")
    from lsrep.store import RunStore
    from lsrep.summary import print_summary

    store = RunStore(outcome.store_path)
    print_summary(store, outcome.run_id)
    from lsrep.longmemeval_export import export_longmemeval, print_tables

    print_tables(store, outcome.run_id)
    if args.export:
        written = export_longmemeval(store, outcome.run_id, Path(args.export), spec.data)
        print(f"official-format files: {len(written)} in {args.export}")
    if args.report:
        from lsrep.registry import REPORT_WRITERS

        for fmt, path in REPORT_WRITERS.load("default")(store, outcome.run_id, Path(args.report)).items():
            print(f"{fmt} report: {path}")
    from lsrep.failures import report_failures, run_failures

    return report_failures(run_failures(store, outcome.run_id), allow=args.allow_failures,
                           store_path=outcome.store_path)
