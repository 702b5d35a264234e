"""`lsrep rate ...`: blinded rating packets out, ratings in, adjudication, agreement tables."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from pathlib import Path


def register(sub, command) -> None:
    from lsrep.cli import DEFAULT_STORE

    sp = sub.add_parser("rate", help="human ratings: blinded packets, import, adjudication, agreement")
    actions = sp.add_subparsers(dest="rate_action", required=True)

    def action(name: str, help_: str) -> argparse.ArgumentParser:
        ap = actions.add_parser(name, help=help_, description=help_)
        ap.add_argument("run", help="run id (or a unique prefix), or `latest`")
        ap.add_argument("--store", default=str(DEFAULT_STORE), help="run store (default: %(default)s)")
        return ap

    ap = action("export", "write a blinded rating packet (HTML form, CSV, key kept apart)")
    ap.add_argument("--sample", type=int, required=True, metavar="N", help="observations to sample")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed (default: %(default)s)")
    ap.add_argument("-o", "--out", required=True, help="output folder")
    ap = action("import", "store raters' ratings files (JSON from the form, or filled CSV)")
    ap.add_argument("files", nargs="+", help="one file per rater")
    ap = action("adjudicate", "record agreed items and write a packet of the disagreements")
    ap.add_argument("-o", "--out", required=True, help="output folder")
    ap.add_argument("--packet", help="rating packet id (default: the run's latest)")
    ap = action("resolve", "store an adjudicator's file for an adjudication packet")
    ap.add_argument("file", help="the adjudicator's filled file (JSON from the form, or CSV)")
    ap = action("agreement", "rater-rater and judge-vs-human agreement tables")
    ap.add_argument("--packet", help="rating packet id (default: the run's latest)")
    ap.add_argument("--json", action="store_true", help="print the tables as JSON")
    command("rate")(cmd_rate)


def cmd_rate(args: argparse.Namespace) -> int:
    from lsrep import rating
    from lsrep.cli import _run_id, _store

    store = _store(args)
    run_id = _run_id(store, args.run)
    match args.rate_action:
        case "export":
            files = rating.export_packets(store, run_id, sample=args.sample, seed=args.seed, out_dir=Path(args.out))
            print(f"packet {files.packet_id}: {files.items} items")
            print(f"for raters: {files.html} (form), {files.csv} (spreadsheet)")
            print(f"key (do not share): {files.key}")
        case "import":
            imported = rating.import_ratings(store, run_id, [Path(f) for f in args.files])
            for done in imported:
                print(f"packet {done.packet_id}: {done.items} ratings from {', '.join(done.raters)}")
            for packet_id in sorted({d.packet_id for d in imported}):
                if store.rows("select 1 from adjudications where packet_id = ? limit 1", [packet_id]):
                    print(f"packet {packet_id} already has human labels: run `lsrep rate adjudicate` again "
                          "to bring them up to date")
        case "adjudicate":
            files = rating.export_adjudication(store, run_id, args.packet, Path(args.out))
            print(f"{files.agreed} item(s) agreed, recorded as human labels")
            if files.items:
                print(f"adjudication packet {files.packet_id}: {files.items} disagreement(s) in {files.html} "
                      f"and {files.csv}")
            else:
                print("no disagreements: nothing to adjudicate")
        case "resolve":
            done = rating.import_adjudication(store, run_id, Path(args.file))
            print(f"adjudication packet {done.packet_id}: {done.items} item(s) resolved by {done.raters[0]}")
        case "agreement":
            report = rating.agreement_report(store, run_id, args.packet)
            if args.json:
                print(json.dumps(asdict(report), indent=2, default=_json_default))
            else:
                print(format_agreement(report))
    return 0


def _json_default(value):
    return str(value)


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def format_agreement(report) -> str:
    """The agreement report as plain-text tables."""
    raters = ", ".join(report.raters) or "none"
    sources = ", ".join(f"{k} {v}" for k, v in sorted(report.by_source.items())) or "none yet"
    lines = [f"rating packet {report.packet_id}: {report.items} items, raters: {raters}",
             f"adjudicated: {report.adjudicated} ({sources}); disagreements awaiting adjudication: {report.pending}",
             ""]
    lines.append("rater agreement (labels: percent, Cohen's kappa; rubric: linearly weighted kappa)")
    lines.append(f"{'rater A':<16}{'rater B':<16}{'n':>5}{'agree':>8}{'kappa':>8}{'rubric wk':>11}")
    for p in report.rater_pairs:
        lines.append(f"{p.rater_a:<16}{p.rater_b:<16}{p.n:>5}{_f(p.label_percent):>8}{_f(p.label_kappa):>8}"
                     f"{_f(p.rubric_weighted_kappa):>11}")
    if not report.rater_pairs:
        lines.append("(fewer than two raters)")
    lines += ["", f"judges against the adjudicated human labels (per label: {report.per_label_method})"]
    if not report.judges:
        lines.append("(no adjudicated labels yet)")
    for j in report.judges:
        lines.append(f"{j.judge}: n={j.n}  agreement {_f(j.percent)}  kappa {_f(j.kappa)}")
        lines.append(f"  {'label':<11}{'human':>7}{'judge':>7}{'both':>6}{'agree':>8}{'kappa':>8}")
        for lab in j.per_label:
            lines.append(f"  {lab.label:<11}{lab.n_human:>7}{lab.n_judge:>7}{lab.n_both:>6}"
                         f"{_f(lab.percent):>8}{_f(lab.kappa):>8}")
    return "\n".join(lines)
