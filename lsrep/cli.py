"""The `lsrep` command. Errors print one line and exit non-zero; no tracebacks for user mistakes."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import logging
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
        print(f"ok  {path}: {validate_path(Path(path), probes_for=args.trajectory, store=args.store)}")
    return 0


@command("systems")
def cmd_systems(args) -> int:
    from lsrep.option_docs import describe_options
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
            "options": describe_options(cls.Options),
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
        if r["options"]:
            print(f"{'':<14} options:")
        for o in r["options"]:
            default = "required" if o["required"] else f"default {json.dumps(o['default'])}"
            doc = f"  {o['doc']}" if o["doc"] else ""
            print(f"{'':<16}{o['name']} ({o['type']}, {default}){doc}")
    return 0


@command("run")
def cmd_run(args) -> int:
    from lsrep.executors import make_executor
    from lsrep.failures import report_failures, run_failures
    from lsrep.protocol.overrides import split_names
    from lsrep.runner import run_campaign
    from lsrep.store import RunStore

    if args.limit is not None and args.limit < 1:
        raise LsrepError(f"--limit must be at least 1, got {args.limit}")
    executor = make_executor(args.executor, args.workers, args.address)
    outcome = run_campaign(args.campaign, executor=executor, progress="none" if args.quiet else args.progress,
                           fresh=args.fresh, store_path=Path(args.store) if args.store else None,
                           overrides=tuple(args.set), conditions=split_names(args.conditions),
                           trajectories=split_names(args.trajectories), limit=args.limit,
                           refresh_cache=args.refresh_cache, adapter_host=args.adapter_host)
    if outcome.already_finished:
        print(f"run {outcome.run_id} already finished: {outcome.units_skipped} unit(s) stored, nothing to replay "
              "(pass --fresh to run again)")
    else:
        verb = "resumed" if outcome.resumed else "ran"
        print(f"{verb} run {outcome.run_id}: {outcome.units_run} unit(s) replayed, "
              f"{outcome.units_skipped} already stored, {outcome.failed_units} failed")
    print(f"store: {outcome.store_path}")
    store = RunStore(outcome.store_path)
    calls = store.rows("select count(*) as n, coalesce(sum(cached), 0) as cached, "
                       "coalesce(sum(cached = 0 and attempts > 0), 0) as sent, "
                       "coalesce(sum(status != 'ok'), 0) as failed from llm_calls where run_id = ?",
                       [outcome.run_id])[0]
    if calls["n"]:
        print(f"model calls: {calls['n']} ({calls['sent']} sent to an endpoint, {calls['cached']} from the cache, "
              f"{calls['n'] - calls['sent'] - calls['cached']} never sent; {calls['failed']} failed)")
    if args.summary:
        from lsrep.summary import print_summary

        print_summary(store, outcome.run_id)
    return report_failures(run_failures(store, outcome.run_id), allow=args.allow_failures,
                           store_path=outcome.store_path)


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

    if args.action == "check":
        from lsrep.store_check import check_store

        return check_store(Path(args.store))
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
    add_logging_arguments(p)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")

    def with_store(sp):
        sp.add_argument("--store", default=str(DEFAULT_STORE), help="run store (default: %(default)s)")
        return sp

    sp = sub.add_parser("validate", help="check native files (trajectory, probes, schedule, campaign)")
    sp.add_argument("files", nargs="+", help="files to check; the kind is read from each file")
    sp.add_argument("--trajectory", help="trajectory file to check probe files against")
    sp.add_argument("--store", default=None, help="the store `lsrep run --store` would use (checked too)")

    sp = sub.add_parser("systems", help="registered systems")
    sp.add_argument("action", choices=["list"], help="`list`: each system's capabilities, mechanisms and options")
    sp.add_argument("--json", action="store_true", help="print the list as JSON")

    sp = sub.add_parser("run", help="run or resume a campaign",
                        description="Run a campaign, resume its unfinished run, or say it already finished. "
                                    "Exit status: 0 on a clean run, 1 when units, maintenance or judgements "
                                    "failed (unless --allow-failures), 2 on bad input.")
    sp.add_argument("campaign", help="campaign TOML file")
    sp.add_argument("--store", default=None, help="override the campaign's store path")
    sp.add_argument("--fresh", action="store_true",
                    help="start a new run even if an unfinished or finished one of the same inputs exists")
    sp.add_argument("-S", "--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a campaign value (repeatable), e.g. -S answerer.endpoint.model=NAME, "
                         "-S conditions.vector-rag.options.top_k=10; VALUE is JSON where it parses; "
                         "recorded in the manifest")
    sp.add_argument("--conditions", metavar="A,B", help="run only these conditions (comma-separated names)")
    sp.add_argument("--trajectories", metavar="X,Y", help="run only these trajectories (comma-separated ids)")
    sp.add_argument("--limit", type=int, metavar="N", help="ask only the first N probes of each trajectory")
    sp.add_argument("--allow-failures", action="store_true",
                    help="exit 0 even when units, maintenance or judgements failed (still printed)")
    sp.add_argument("--refresh-cache", action="store_true",
                    help="do not answer model calls from the response cache (replies are stored afresh)")
    sp.add_argument("--executor", default="auto", choices=["auto", "in-process", "overlapped", "process", "ray"],
                    help="where units run (default: %(default)s: in-process for 1 worker, else a process pool; "
                         "without --workers, a pool of one worker per core for 4 or more offline units)")
    sp.add_argument("--workers", type=int, default=None,
                    help="parallel units (default: chosen from the units and cores, see --executor)")
    sp.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    sp.add_argument("--adapter-host", choices=["process", "in-process"], default=None,
                    help="where adapters run (default: the campaign's adapter_host, else process); "
                         "in-process is for debugging and is marked in the run's manifest and report")
    sp.add_argument("--summary", action="store_true", help="print the summary table afterwards")
    sp.add_argument("--progress", choices=["auto", "bar", "log", "none"], default="auto",
                    help="overall progress: a bar in a terminal, log lines otherwise (default: %(default)s)")
    sp.add_argument("--quiet", action="store_true", help="no progress output (same as --progress none)")

    with_store(sub.add_parser("runs", help="runs in a store")).add_argument(
        "action", choices=["list"], help="`list`: every run with its status and counts")

    sp = with_store(sub.add_parser("show", help="summary table of a run"))
    sp.add_argument("run", nargs="?", default="latest", help="run id, unique prefix, or 'latest' (default)")

    sp = with_store(sub.add_parser("export", help="observations with their labels"))
    sp.add_argument("run", nargs="?", default="latest", help="run id, unique prefix, or 'latest' (default)")
    sp.add_argument("--format", choices=["jsonl", "csv", "longmemeval"], default="jsonl",
                    help="jsonl or csv observations; longmemeval: a LongMemEval run's official-format files, "
                         "in the folder -o DIR (default: %(default)s)")
    sp.add_argument("-o", "--output", help="output file (default: standard output); a folder for longmemeval")
    sp.add_argument("--timings", action="store_true", help="include latency columns")
    sp.add_argument("--data", help="longmemeval: the input file, if it moved since the run")

    sp = sub.add_parser("store", help="store utilities")
    sp.add_argument("action", choices=["schema", "check"],
                    help="`schema`: the store's tables as Markdown; `check`: integrity, schema version, unfinished runs")
    sp.add_argument("-o", "--output", help="output file for `schema` (default: standard output)")
    sp.add_argument("--store", default=str(DEFAULT_STORE), help="store to check (default: %(default)s)")

    sp = sub.add_parser("quickstart", help="run the bundled example end to end")
    sp.add_argument("-o", "--out", default="runs/quickstart", help="folder for the store and the reports")

    for module_name in EXTENSION_MODULES:
        # A command module that fails to import is a broken installation: say so loudly.
        importlib.import_module(module_name).register(sub, command)
    for module in extension_commands():
        module.register(sub, command)
    return p


def extension_commands() -> list:
    """Command modules registered by outer layers through the `lsrep.commands` entry-point group."""
    from importlib.metadata import entry_points

    modules = []
    for ep in sorted(entry_points(group="lsrep.commands"), key=lambda e: e.name):
        try:
            modules.append(ep.load())
        except Exception as exc:
            raise SystemExit(f"lsrep: error: command module {ep.name!r} ({ep.value}) failed to import: "
                             f"{type(exc).__name__}: {exc}") from exc
    return modules


def add_logging_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more log output on stderr: -v info, -vv debug")
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default=None,
                   help="log level of the `lsrep` loggers (default: warning; overrides -v)")


def configure_logging(args: argparse.Namespace) -> None:
    level = args.log_level or {0: "warning", 1: "info"}.get(args.verbose, "debug")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("lsrep")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


# Command modules under lsrep/commands/: each defines `register(subparsers, command)`,
# adds its parser(s) and decorates its handler(s) with `command(name)`. The outer layers'
# command modules (report, convert, generate) register through the `lsrep.commands`
# entry-point group instead, so the core imports none of them.
EXTENSION_MODULES = (
    "lsrep.commands.score",
    "lsrep.commands.adapters",
    "lsrep.commands.datasets",
    "lsrep.commands.rate",
    "lsrep.commands.calibrate",
)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args)
    from lsrep.redact import redact

    try:
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"lsrep: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except LsrepError as exc:
        print(f"lsrep: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # A bare Ctrl-C (not the run's own RunInterrupted, which says what was kept) has no text.
        print(f"lsrep: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
