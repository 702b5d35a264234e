"""`lsrep adapters check`: run the conformance suite against one adapter and print the verdicts;
`lsrep adapters checks`: what each check catches."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lsrep.errors import ConfigError


def register(sub, command) -> None:
    sp = sub.add_parser("adapters", help="adapter authoring: the conformance suite")
    actions = sp.add_subparsers(dest="adapters_action", required=True)
    cp = actions.add_parser("check", help="run the conformance suite against an adapter",
                            description="Exit status: 0 when no check fails, 1 when one does, 2 on bad input.")
    cp.add_argument("system", help="registered name (`lsrep systems list`) or module:Class "
                                   "(importable from the current directory)")
    cp.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="adapter option (repeatable); VALUE is parsed as JSON when it can be, "
                         "a dotted KEY sets a nested field")
    cp.add_argument("--check", action="append", default=None, metavar="NAME",
                    help="run only this check (repeatable); default: all")
    cp.add_argument("--json", action="store_true", help="print the report as JSON")
    cp.add_argument("--traceback", action="store_true",
                    help="for each distinct exception behind failed checks, run its first check again "
                         "and print the full traceback")
    cp.add_argument("--adapter-host", choices=["process", "in-process"], default="process",
                    help="where the adapter runs: its own host process (default, as in campaigns) or "
                         "in-process (debugging; the gold_unreachable check then shows what a peeker could read)")
    for flag, role in (("--memory-llm", "chat model"), ("--memory-embedder", "embedder")):
        cp.add_argument(flag, default=None, metavar="SPEC",
                        help=f"the adapter's memory-side {role} (setup.{flag[2:].replace('-', '_')}): `offline` "
                             "(default: the deterministic responder), `none`, or a JSON object of the campaign "
                             "table's keys, e.g. '{\"base_url\": \"http://127.0.0.1:8080/v1\", \"model\": \"m\", "
                             "\"api_key_env\": \"\"}'")
    cp.add_argument("--wall-clock", action="store_true",
                    help="leave the host's wall clock unpatched (by default a system reading datetime.now or "
                         "time.time sees the simulated now, as in a campaign; see lsrep.host.clock)")
    actions.add_parser("checks", help="list the conformance checks and what each catches")
    command("adapters")(cmd_adapters)


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`key=value` strings to an options dict; values are JSON where they parse, strings otherwise."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        *parents, leaf = key.split(".")
        node = options
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--option {pair!r}: {part!r} is already set to a value")
        if leaf in node:
            raise ConfigError(f"--option {pair!r}: {key!r} given twice")
        node[leaf] = value
    return options


def cmd_adapters(args: argparse.Namespace) -> int:
    from lsrep.conformance import CHECKS, run_conformance

    if args.adapters_action == "checks":
        width = max(len(name) for name in CHECKS) + 2
        for c in CHECKS.values():
            example = f" (e.g. {c.example})" if c.example else " (info only)"
            print(f"{c.name:<{width}}{c.catches}{example}")
        return 0
    from lsrep.memory_model.checking import check_relay, parse_table

    memory = check_relay(parse_table("--memory-llm", args.memory_llm),
                         parse_table("--memory-embedder", args.memory_embedder))
    report = run_conformance(args.system, parse_options(args.option), checks=args.check,
                             adapter_host=args.adapter_host, memory=memory if memory.active else None,
                             simulated_clock=not args.wall_clock)
    if args.json:
        print(json.dumps(report.model_dump(mode="json") | {"ok": report.ok}, indent=2))
        return 0 if report.ok else 1
    print(f"conformance of {report.system} ({report.adapter}), options {json.dumps(report.options, sort_keys=True)}, "
          f"adapter host: {report.adapter_host}, memory model: {_memory_label(memory)}, "
          f"clock: {'simulated' if report.simulated_clock else 'wall'}")
    width = max(len(name) for name in CHECKS) + 2
    print(f"{'check':<{width}}{'result':<9}reason")
    print(f"{'-' * (width - 2):<{width}}{'-' * 7:<9}{'-' * 6}")
    causes = root_causes(report.results)
    first_of = {name: names[0] for names in causes.values() if len(names) > 1 for name in names[1:]}
    for r in report.results:
        reason = f"same exception as {first_of[r.name]}" if r.name in first_of else r.reason
        print(f"{r.name:<{width}}{r.status:<9}{reason}")
    counts = {s: sum(r.status == s for r in report.results) for s in ("passed", "failed", "skipped", "info")}
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    for reason, names in causes.items():
        if len(names) > 1:
            print(f"root cause of {len(names)} failed checks ({', '.join(names)}): {reason}")
    if causes and not args.traceback:
        print("(--traceback shows where each exception was raised)")
    if args.traceback:
        for names in causes.values():
            print_traceback(args.system, parse_options(args.option), names[0])
    return 0 if report.ok else 1


def _memory_label(memory) -> str:
    if not memory.active:
        return "none"
    parts = []
    for role, spec in (("llm", memory.llm_spec), ("embedder", memory.embedder_spec)):
        if spec is not None:
            parts.append(f"{role} {'offline responder' if spec.kind == 'offline' else spec.base_url}")
    return ", ".join(parts) + f" ({len(memory.book.rows)} calls)"


def root_causes(results) -> dict[str, list[str]]:
    """Failed checks grouped by the exception they report (`raised X: ...`), in check order."""
    groups: dict[str, list[str]] = {}
    for r in results:
        if r.status == "failed" and r.reason.startswith("raised "):
            groups.setdefault(r.reason, []).append(r.name)
    return groups


def print_traceback(system: str, options: dict[str, Any], check: str) -> None:
    """Run one check again on fresh instances and print the traceback of what it raises.

    The re-run is in-process, so the traceback holds the adapter's own frames (a hosted adapter's
    exception crosses the process boundary as its type and message only)."""
    import traceback

    from lsrep.conformance import CHECKS, Subject

    subject = Subject(system, options, adapter_host="in-process")
    try:
        CHECKS[check].run(subject)
    except Exception as exc:  # noqa: BLE001 - shown, not handled
        print(f"\ntraceback of {check} (re-run in-process):")
        print("".join(traceback.format_exception(exc)).rstrip())
    else:
        print(f"\n{check} did not raise when run again (the adapter is not deterministic?)")
    finally:
        subject.close()
