"""`lsrep report RUN -o PATH`: the run's report as self-contained HTML, Markdown or JSON.

A command module of the report layer: it registers through the `lsrep.commands` entry-point
group (pyproject.toml), so the harness core never imports the report package."""

from __future__ import annotations

import argparse
from pathlib import Path

from lsrep.errors import LsrepError

FORMAT_SUFFIX = {"html": ".html", "md": ".md", "json": ".json"}
DEFAULT_STORE = Path("runs/lsrep.sqlite")


def _pair(text: str) -> tuple[str, str]:
    a, sep, b = text.partition(":")
    if not sep or not a or not b:
        raise argparse.ArgumentTypeError(f"expected CONDITION_A:CONDITION_B, got {text!r}")
    return a, b


def register(sub, command) -> None:
    sp = sub.add_parser("locomo-f1", help="LoCoMo's official F1 per condition and category (prints; writes nothing)")
    sp.add_argument("run", nargs="?", default="latest", help="run id, unique prefix, or 'latest' (default)")
    sp.add_argument("--store", default=str(DEFAULT_STORE), help="run store (default: %(default)s)")

    @command("locomo-f1")
    def cmd_locomo_f1(args) -> int:
        from lsrep.store import RunStore

        path = Path(args.store)
        if not path.exists():
            raise LsrepError(f"no run store at {path} (pass --store PATH)")
        store = RunStore(path)
        run_id = store.latest_run() if args.run == "latest" else store.run(args.run)["run_id"]
        return print_locomo_f1(store, run_id)

    sp = sub.add_parser(
        "report", help="write a run's report (HTML, Markdown, JSON)",
        description="Build the report of a run from the store alone: headline scores with intervals, "
                    "paired differences, fidelity audit, failure ledger and manifest.",
    )
    sp.add_argument("run", nargs="?", default="latest", help="run id, unique prefix, or 'latest' (default)")
    sp.add_argument("-o", "--output", required=True,
                    help="output file; with --format all, a directory (or a file name whose stem is reused)")
    sp.add_argument("--format", choices=["html", "md", "json", "all"], default="html",
                    help="output format; `all` writes every format (default: %(default)s)")
    sp.add_argument("--compare", action="append", type=_pair, metavar="A:B", default=None,
                    help="a paired comparison (repeatable); default: the campaign's, else all pairs")
    sp.add_argument("--judge", default="deterministic", help="judge whose labels to report (default: %(default)s)")
    sp.add_argument("--conditions", metavar="A,B",
                    help="report only these conditions (comma-separated); the report says it is a subset")
    sp.add_argument("--trajectories", metavar="X,Y", help="report only these trajectories (comma-separated)")
    sp.add_argument("--limit", type=int, metavar="N",
                    help="report only the first N probes of each trajectory (in the order they were asked)")
    sp.add_argument("--store", default=str(DEFAULT_STORE), help="run store (default: %(default)s)")

    @command("report")
    def cmd_report(args) -> int:
        from lsrep.reports.build import FORMATS, write_report
        from lsrep.reports.model import build_report

        from lsrep.store import RunStore

        path = Path(args.store)
        if not path.exists():
            raise LsrepError(f"no run store at {path} (pass --store PATH)")
        store = RunStore(path)
        run_id = store.latest_run() if args.run == "latest" else store.run(args.run)["run_id"]
        if args.limit is not None and args.limit < 1:
            raise LsrepError(f"--limit must be at least 1, got {args.limit}")
        if args.conditions or args.trajectories or args.limit:
            import tempfile

            from lsrep.protocol.overrides import split_names
            from lsrep.subset import subset_store

            with tempfile.TemporaryDirectory(prefix="lsrep-subset-") as tmp:
                part = RunStore(subset_store(path, run_id, Path(tmp) / "subset.sqlite",
                                             conditions=split_names(args.conditions),
                                             trajectories=split_names(args.trajectories), limit=args.limit))
                report = build_report(part, run_id, compare=args.compare, judge=args.judge)
                part.db.close()
            report = _marked_subset(report, args.conditions, args.trajectories, args.limit)
        else:
            report = build_report(store, run_id, compare=args.compare, judge=args.judge)
        for fmt, target in _targets(Path(args.output), args.format, FORMATS).items():
            print(f"{fmt + ':':<6}{write_report(report, fmt, target)}")
        return 0


def _marked_subset(report, conditions: str | None, trajectories: str | None, limit: int | None = None):
    """The report with a banner saying which part of the run it covers."""
    from dataclasses import replace

    from lsrep.reports.tree import Callout

    parts = [f"conditions {conditions}" if conditions else "", f"trajectories {trajectories}" if trajectories else "",
             f"the first {limit} probe(s) of each trajectory" if limit else ""]
    text = "Only " + " and ".join(p for p in parts if p) + " of this run; the rest is left out of every section."
    return replace(report, banner=(Callout("warn", "Partial report", text), *report.banner))


def _targets(output: Path, fmt: str, names: dict[str, str]) -> dict[str, Path]:
    if fmt != "all":
        # An existing folder (or a path ending in a separator) gets the format's default file name.
        if output.is_dir() or str(output).endswith(("/", "\\")):
            return {fmt: output / names[fmt]}
        # A file name without an extension gets the format's (`-o r2 --format md` writes r2.md).
        return {fmt: output if output.suffix else output.with_name(output.name + FORMAT_SUFFIX[fmt])}
    if output.suffix in FORMAT_SUFFIX.values():
        return {f: output.with_suffix(FORMAT_SUFFIX[f]) for f in names}
    return {f: output / name for f, name in names.items()}


def print_locomo_f1(store, run_id: str) -> int:
    """LoCoMo's official metric (lsrep.judge.locomo_f1) per condition and category; writes nothing."""
    from lsrep.reports.load import load_run
    from lsrep.reports.metrics import locomo_metric

    from lsrep.errors import LsrepError

    data = load_run(store, run_id)
    table = locomo_metric(data.observations, data.conditions, data.manifest)
    if not table:
        raise LsrepError(f"run {run_id} has no LoCoMo trajectory (no observation with a LoCoMo category)")
    cats = list(next(iter(table.values()))["per_category"])
    print(f"LoCoMo official metric (snap-research/LoCoMo task_eval/evaluation.py definition), run {run_id}, "
          "each question's last checkpoint:")
    print(f"{'condition':<22}{'n':>5}{'F1 all':>8}{'F1 1-4':>8}" + "".join(f"{c:>13}" for c in cats) + f"{'ev.recall':>10}")
    for cond, rec in table.items():
        cells = "".join(f"{rec['per_category'].get(c, {}).get('f1', float('nan')):>13.3f}" for c in cats)
        no_adv = rec["f1_excluding_adversarial"]
        recall = rec["evidence_recall"]
        print(f"{cond:<22}{rec['n']:>5}{rec['f1']:>8.3f}{(no_adv if no_adv is not None else float('nan')):>8.3f}"
              f"{cells}{(recall if recall is not None else float('nan')):>10.3f}")
    return 0
