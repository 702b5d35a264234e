"""Kill rate per package from a cosmic-ray session, and the surviving mutants with their diffs.

    python scripts/mutation_report.py SESSION.sqlite [--survivors]

A mutant counts as killed when the tests failed (or timed out) under it; `incompetent` mutants
(the mutated module no longer imports) are left out of the denominator, as cosmic-ray does.

Equivalent mutants (no behaviour can tell them from the original) are left out too, and listed:
- automatically, a mutation inside a type annotation of a module with
  `from __future__ import annotations` (annotations are never evaluated there);
- by hand, each entry of `docs/mutation-equivalents.toml` ({path, line, operator, reason}), judged
  by reading the code; the reason says why no input can tell the mutant apart.
"""

from __future__ import annotations

import argparse
import ast
import sqlite3
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "docs" / "mutation-equivalents.toml"


@cache
def annotation_spans(path: str) -> tuple[tuple[int, int, int, int], ...]:
    """(start row, start col, end row, end col), 0-based rows, of every annotation in a module
    whose annotations are postponed; empty when they are evaluated."""
    tree = ast.parse((ROOT / path).read_text())
    postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                    and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not postponed:
        return ()
    spans = []
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg) and node.annotation is not None:
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for n in notes:
            spans.append((n.lineno - 1, n.col_offset, n.end_lineno - 1, n.end_col_offset))
    return tuple(spans)


def in_annotation(path: str, row: int, col: int) -> bool:
    return any((r0, c0) <= (row, col) < (r1, c1) for r0, c0, r1, c1 in annotation_spans(path))


def manual_equivalents() -> dict[tuple[str, int, str, int | None], str]:
    """(path, line, operator, column or None for every column on the line) -> reason."""
    if not EQUIVALENTS.exists():
        return {}
    data = tomllib.loads(EQUIVALENTS.read_text())
    return {(e["path"], e["line"], e["operator"], e.get("col")): e["reason"] for e in data.get("equivalent", [])}


def judged_equivalent(manual: dict, path: str, row: int, op: str, col: int) -> bool:
    return (path, row, op, None) in manual or (path, row, op, col) in manual


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", help="a cosmic-ray session database")
    parser.add_argument("--survivors", action="store_true", help="print each surviving mutant's diff")
    args = parser.parse_args()
    db = sqlite3.connect(args.session)
    rows = db.execute(
        "select s.module_path, s.start_pos_row, s.operator_name, r.test_outcome, r.worker_outcome, r.diff, "
        "s.start_pos_col "
        "from mutation_specs s left join work_results r on r.job_id = s.job_id order by s.module_path, s.start_pos_row"
    ).fetchall()
    manual = manual_equivalents()
    tally: dict[str, Counter] = {}
    survivors = []
    for path, row, op, outcome, worker, diff, col in rows:
        parts = path.split("/")
        package = "/".join(parts[:2]) if len(parts) > 2 else path
        c = tally.setdefault(package, Counter())
        if worker == "SKIPPED":
            c["out of scope"] += 1
        elif outcome is None:
            c["pending"] += 1
        elif outcome == "INCOMPETENT" or worker == "EXCEPTION":
            c["incompetent"] += 1
        elif outcome == "SURVIVED" and (in_annotation(path, row - 1, col)
                                      or judged_equivalent(manual, path, row, op, col)):
            c["equivalent"] += 1
        elif outcome == "SURVIVED":
            c["survived"] += 1
            survivors.append((path, row, op, diff))
        else:
            c["killed"] += 1
    print(f"{'package':28} {'killed':>7} {'survived':>8} {'equivalent':>10} {'incompetent':>11} {'pending':>7} "
          f"{'out of scope':>12} {'kill rate':>9}")
    for package, c in sorted(tally.items()):
        judged = c["killed"] + c["survived"]
        rate = f"{c['killed'] / judged:.1%}" if judged else "—"
        print(f"{package:28} {c['killed']:7} {c['survived']:8} {c['equivalent']:10} {c['incompetent']:11} "
              f"{c['pending']:7} {c['out of scope']:12} {rate:>9}")
    if args.survivors:
        for path, row, op, diff in survivors:
            print(f"\n--- {path}:{row} {op}")
            print("\n".join(line for line in (diff or "").splitlines() if line.startswith(("+", "-"))
                            and not line.startswith(("+++", "---"))))


if __name__ == "__main__":
    main()
