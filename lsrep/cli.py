"""The `lsrep` command. Errors print one line and exit non-zero; no tracebacks for user mistakes."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from lsrep import __version__
from lsrep.errors import InputError, LsrepError

DEFAULT_STORE = Path("runs/lsrep.sqlite")
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


def command(name: str):
    def wrap(fn):
        COMMANDS[name] = fn
        return fn

    return wrap


def _store(args):
    from lsrep.store import RunStore

    path = Path(args.store)
    if not path.exists():
        raise LsrepError(f"no run store at {path} (pass --store PATH)")
    return RunStore(path)


def _run_id(store, value: str | None) -> str:
    return store.run(value)["run_id"] if value and value != "latest" else store.latest_run()


@command("validate")
def cmd_validate(args) -> int:
    from lsrep.validation import validate_path

    for path in args.files:
        print(f"ok  {path}: {validate_path(Path(path), probes_for=args.trajectory)}")
    return 0


@command("systems")
def cmd_systems(args) -> int:
    from lsrep.registry import ADAPTERS, load_adapter_class

    rows = []
    for name, target in ADAPTERS.entries().items():
        try:
            cls = load_adapter_class(name)
        except LsrepError as exc:
            rows.append({"name": name, "target": target, "error": str(exc)})
            continue
        rows.append({
            "name": name, "target": target, "version": cls.version,
            "mechanisms": [{"name": m.name, "can_disable": m.can_disable, "description": m.description}
                           for m in cls.mechanisms],
            "maintenance_operations": sorted(cls.maintenance_operations),
            "supports_snapshot": cls.supports_snapshot, "deterministic": cls.deterministic,
            "answers": cls.answers, "honours_budget": cls.honours_budget,
            "options": list(cls.Options.model_fields),
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<14} UNAVAILABLE: {r['error']}")
            continue
        caps = ", ".join(c for c, on in (("snapshot", r["supports_snapshot"]), ("answers", r["answers"]), ("budget", r["honours_budget"]),
                                          ("deterministic", r["deterministic"])) if on)
        print(f"{r['name']:<14} {r['target']}  [{caps}]")
        if r["maintenance_operations"]:
            print(f"{'':<14} maintenance: {', '.join(r['maintenance_operations'])}")
        for m in r["mechanisms"]:
            flag = "" if m["can_disable"] else " (always on)"
            print(f"{'':<14} - {m['name']}{flag}: {m['description']}")
    return 0


@command("run")
def cmd_run(args) -> int:
    from lsrep.executors import make_executor
    from lsrep.runner import run_campaign

    executor = make_executor(args.executor, args.workers, args.address)
    outcome = run_campaign(args.campaign, executor=executor, progress=not args.quiet and sys.stderr.isatty(),
                           fresh=args.fresh, store_path=Path(args.store) if args.store else None)
    verb = "resumed" if outcome.resumed else "ran"
    print(f"{verb} run {outcome.run_id}: {outcome.units_run} unit(s) replayed, "
          f"{outcome.units_skipped} already stored, {outcome.failed_units} failed")
    print(f"store: {outcome.store_path}")
    if args.summary:
        from lsrep.store import RunStore
        from lsrep.summary import print_summary

        print_summary(RunStore(outcome.store_path), outcome.run_id)
    return 0


@command("runs")
def cmd_runs(args) -> int:
    store = _store(args)
    rows = store.runs()
    if not rows:
        print(f"no runs in {store.path}")
    for r in rows:
        print(f"{r['run_id']}  {r['campaign']:<20} {r['status']:<9} units={r['units']:<4} "
              f"observations={r['observations']:<6} {r['created_at']}")
    return 0


@command("show")
def cmd_show(args) -> int:
    from lsrep.summary import print_summary

    store = _store(args)
    print_summary(store, _run_id(store, args.run))
    return 0


@command("export")
def cmd_export(args) -> int:
    from lsrep.exporting import export_rows

    store = _store(args)
    if args.format == "longmemeval":
        from lsrep.longmemeval_export import export_longmemeval

        if not args.output:
            raise LsrepError("--format longmemeval writes a folder: pass -o DIR")
        written = export_longmemeval(store, _run_id(store, args.run), Path(args.output),
                                     Path(args.data) if args.data else None)
        print(f"wrote {len(written)} file(s) to {args.output}")
        return 0
    rows = export_rows(store, _run_id(store, args.run), include_timings=args.timings)
    out = open(args.output, "w", newline="", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "jsonl":
            for row in rows:
                out.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["obs_id"])
            writer.writeheader()
            writer.writerows(rows)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


@command("store")
def cmd_store(args) -> int:
    from lsrep.store import RunStore

    if args.action == "schema":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            text = RunStore(Path(tmp) / "schema.sqlite").schema_markdown()
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            print(text, end="")
    return 0


@command("quickstart")
def cmd_quickstart(args) -> int:
    from lsrep.quickstart import quickstart

    return quickstart(Path(args.out))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lsrep", description="Longitudinal state-replay evaluation of memory systems.")
    p.add_argument("--version", action="version", version=f"lsrep {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def with_store(sp):
        sp.add_argument("--store", default=str(DEFAULT_STORE), help="run store (default: %(default)s)")
        return sp

    sp = sub.add_parser("validate", help="check native files (trajectory, probes, schedule, campaign)")
    sp.add_argument("files", nargs="+")
    sp.add_argument("--trajectory", help="trajectory file to check probe files against")

    sp = sub.add_parser("systems", help="registered systems")
    sp.add_argument("action", choices=["list"])
    sp.add_argument("--json", action="store_true")

    sp = sub.add_parser("run", help="run or resume a campaign")
    sp.add_argument("campaign")
    sp.add_argument("--store", default=None, help="override the campaign's store path")
    sp.add_argument("--fresh", action="store_true", help="start a new run even if an unfinished one exists")
    sp.add_argument("--executor", default="auto", choices=["auto", "in-process", "process", "ray"])
    sp.add_argument("--workers", type=int, default=1)
    sp.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    sp.add_argument("--summary", action="store_true", help="print the summary table afterwards")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")

    with_store(sub.add_parser("runs", help="runs in a store")).add_argument("action", choices=["list"])

    sp = with_store(sub.add_parser("show", help="summary table of a run"))
    sp.add_argument("run", nargs="?", default="latest")

    sp = with_store(sub.add_parser("export", help="observations with their labels"))
    sp.add_argument("run", nargs="?", default="latest")
    sp.add_argument("--format", choices=["jsonl", "csv", "longmemeval"], default="jsonl",
                    help="longmemeval: a LongMemEval run's official-format files, in the folder -o DIR")
    sp.add_argument("-o", "--output")
    sp.add_argument("--timings", action="store_true", help="include latency columns")
    sp.add_argument("--data", help="longmemeval: the input file, if it moved since the run")

    sp = sub.add_parser("store", help="store utilities")
    sp.add_argument("action", choices=["schema"])
    sp.add_argument("-o", "--output")

    sp = sub.add_parser("quickstart", help="run the bundled example end to end")
    sp.add_argument("-o", "--out", default="runs/quickstart", help="folder for the store and the reports")

    for module_name in EXTENSION_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        module.register(sub, command)
    return p


# Command modules under lsrep/commands/: each defines `register(subparsers, command)`,
# adds its parser(s) and decorates its handler(s) with `command(name)`.
EXTENSION_MODULES = (
    "lsrep.commands.report",
    "lsrep.commands.score",
    "lsrep.commands.adapters",
    "lsrep.commands.datasets",
    "lsrep.commands.rate",
)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"lsrep: error: {exc}", file=sys.stderr)
        return 2
    except LsrepError as exc:
        print(f"lsrep: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
