"""Dataset commands: `lsrep convert locomo`, `lsrep generate ...`, `lsrep longmemeval`."""

from __future__ import annotations

import sys
from pathlib import Path


def register(sub, command) -> None:
    sp = sub.add_parser("convert", help="convert a dataset to native trajectory and probe files")
    sp.add_argument("dataset", choices=["locomo"])
    sp.add_argument("path", help="locomo10.json or a file of the same schema")
    sp.add_argument("-o", "--out", required=True, help="output folder")
    sp.add_argument("--conversations", nargs="*", help="sample ids to keep (default: all)")
    sp.add_argument("--on-bad-evidence", choices=["drop", "discard"], default="drop",
                    help="drop a QA whose evidence names a missing turn, or discard just that evidence id")

    sp = sub.add_parser("generate", help="generate evolving-fact trajectories or LongMemEval-schema files")
    sp.add_argument("what", choices=["trajectories", "longmemeval"])
    sp.add_argument("-o", "--out", required=True, help="output folder (trajectories) or file (longmemeval)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--count", type=int, default=1, help="trajectories to generate")
    sp.add_argument("--sessions", type=int, default=12)
    sp.add_argument("--turns-per-session", type=int, default=10)
    sp.add_argument("--turn-tokens", type=int, default=40, help="density knob: tokens per turn")
    sp.add_argument("--questions", type=int, default=500, help="longmemeval: questions")
    sp.add_argument("--sessions-per-question", type=int, default=50, help="longmemeval: haystack sessions")

    sp = sub.add_parser("longmemeval", help="LongMemEval matched diagnostic: same answerer and judge, different memory")
    sp.add_argument("--data", help="official LongMemEval JSON file (oracle, S or M)")
    sp.add_argument("--campaign", help="a LongMemEval campaign TOML (conditions, answerer, judges, embedder)")
    sp.add_argument("--systems", help="comma-separated systems (instead of --campaign)")
    sp.add_argument("--store", default=None,
                    help="run store (default: the campaign's, or runs/longmemeval.sqlite with --systems)")
    sp.add_argument("--limit", type=int, help="only the first N questions (after --types / --questions)")
    sp.add_argument("--types", help="comma-separated question types to run (e.g. temporal-reasoning)")
    sp.add_argument("--questions", help="comma-separated question ids to run")
    sp.add_argument("--executor", default="auto", choices=["auto", "in-process", "process", "ray"])
    sp.add_argument("--workers", type=int, default=None,
                    help="worker processes (default: the free cores, capped by --memory-mb)")
    sp.add_argument("--memory-mb", type=int, default=300,
                    help="memory budget that caps the default number of workers (default 300)")
    sp.add_argument("--address", default=None)
    sp.add_argument("--fresh", action="store_true")
    sp.add_argument("--report", help="also write the report to this folder")
    sp.add_argument("--export", help="also write the official-format files (hypotheses, retrieval, metrics) "
                                     "to this folder, one subfolder per condition")

    command("convert")(cmd_convert)
    command("generate")(cmd_generate)
    command("longmemeval")(cmd_longmemeval)


def cmd_convert(args) -> int:
    from lsrep.probes.locomo import convert_locomo

    report = convert_locomo(Path(args.path), Path(args.out), args.conversations or None,
                            on_bad_evidence=args.on_bad_evidence)
    print(f"converted {len(report.samples)} conversation(s): {report.probes_written} probes written from "
          f"{report.qa_total} QA, {len(report.dropped)} dropped (reasons in {Path(args.out) / 'locomo-conversion.json'})")
    print(f"files in {args.out}")
    return 0


def cmd_generate(args) -> int:
    if args.what == "longmemeval":
        from lsrep.probes.generator import generate_longmemeval_file

        path = generate_longmemeval_file(Path(args.out), n_questions=args.questions,
                                         sessions_per_question=args.sessions_per_question, seed=args.seed)
        print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MiB, {args.questions} questions)")
        return 0
    from lsrep.probes.generator import GeneratorSpec, write_generated

    spec = GeneratorSpec(seed=args.seed, sessions=args.sessions, turns_per_session=args.turns_per_session,
                         turn_tokens=args.turn_tokens)
    made = write_generated(Path(args.out), spec, count=args.count)
    print(f"wrote {len(made)} trajectory(ies) with probes to {args.out}")
    return 0


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
    from lsrep.longmemeval import default_workers

    workers = args.workers if args.workers is not None else default_workers(args.memory_mb)
    outcome = run_longmemeval(spec, source=source, executor=make_executor(args.executor, workers, args.address),
                              fresh=args.fresh, progress=sys.stderr.isatty())
    verb = "resumed" if outcome.resumed else "ran"
    print(f"{verb} run {outcome.run_id}: {outcome.questions} question(s), {outcome.units_run} unit(s) replayed, "
          f"{outcome.units_skipped} already stored, {outcome.failed_units} failed")
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
        from lsrep.reports.build import write_reports

        for fmt, path in write_reports(store, outcome.run_id, Path(args.report)).items():
            print(f"{fmt} report: {path}")
    return 0
