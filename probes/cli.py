"""Dataset commands of the probes layer: `lsrep convert locomo`, `lsrep generate ...`.

Registered through the `lsrep.commands` entry-point group (pyproject.toml), so the harness
core never imports the probes package."""

from __future__ import annotations

from pathlib import Path


def register(sub, command) -> None:
    sp = sub.add_parser("convert", help="convert a dataset to native trajectory and probe files")
    sp.add_argument("dataset", choices=["locomo"], help="source dataset format")
    sp.add_argument("path", help="locomo10.json or a file of the same schema")
    sp.add_argument("-o", "--out", required=True, help="output folder")
    sp.add_argument("--conversations", nargs="*", help="sample ids to keep (default: all)")
    sp.add_argument("--on-bad-evidence", choices=["drop", "discard"], default="drop",
                    help="drop a QA whose evidence names a missing turn, or discard just that evidence id")

    sp = sub.add_parser("generate", help="generate evolving-fact trajectories or LongMemEval-schema files")
    sp.add_argument("what", choices=["trajectories", "longmemeval"],
                    help="`trajectories`: native evolving-fact files; `longmemeval`: a LongMemEval-schema file")
    sp.add_argument("-o", "--out", required=True, help="output folder (trajectories) or file (longmemeval)")
    sp.add_argument("--seed", type=int, default=0, help="generator seed (default: %(default)s)")
    sp.add_argument("--count", type=int, default=1, help="trajectories to generate")
    sp.add_argument("--sessions", type=int, default=12, help="sessions per trajectory (default: %(default)s)")
    sp.add_argument("--turns-per-session", type=int, default=10, help="turns per session (default: %(default)s)")
    sp.add_argument("--turn-tokens", type=int, default=40, help="density knob: tokens per turn")
    sp.add_argument("--questions", type=int, default=500, help="longmemeval: questions")
    sp.add_argument("--sessions-per-question", type=int, default=50, help="longmemeval: haystack sessions")

    command("convert")(cmd_convert)
    command("generate")(cmd_generate)


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
