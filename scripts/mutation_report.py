"""Kill rate per package from a cosmic-ray session, and the surviving mutants with their diffs.

    python scripts/mutation_report.py SESSION.sqlite [--survivors]

A mutant counts as killed when the tests failed (or timed out) under it; `incompetent` mutants
(the mutated module no longer imports) are left out of the denominator, as cosmic-ray does.

Equivalent mutants (no behaviour can tell them from the original) are left out too, and listed:
- automatically, a mutation inside a type annotation of a module with
  `from __future__ import annotations` (annotations are never evaluated there);
- by hand, each entry of `docs/mutation-equivalents.toml` ({path, line, code, operator, reason,
  optional col}), judged by reading the code; the reason says why no input can tell the mutant
  apart. An entry counts only while it still points at what was judged: `code` must equal the
  line's text (stripped) and the line must hold a token the operator mutates (at `col` when
  given). A stale entry (the line moved or changed) is reported and not applied, so a judgement
  never silently covers other code.
"""

from __future__ import annotations

import argparse
import ast
import io
import sqlite3
import sys
import tokenize
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


# The token (tokenize's string) each cosmic-ray operator family mutates, by the name's first part.
OPERATOR_TOKENS = {
    "Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
    "LShift": "<<", "RShift": ">>", "BitOr": "|", "BitAnd": "&", "BitXor": "^",
    "Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=",
    "Is": "is", "IsNot": "is", "In": "in", "NotIn": "not",
    "USub": "-", "UAdd": "+", "Invert": "~", "Not": "not",
}


@cache
def line_tokens(path: str) -> dict[int, tuple[tuple[int, int, str], ...]]:
    """1-based row -> (start col, token type, string) of every token starting on it."""
    rows: dict[int, list[tuple[int, int, str]]] = {}
    text = (ROOT / path).read_text()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        rows.setdefault(tok.start[0], []).append((tok.start[1], tok.type, tok.string))
    return {row: tuple(toks) for row, toks in rows.items()}


def mutable_token(path: str, line: int, operator: str, col: int | None) -> bool:
    """Whether the line holds a token `operator` mutates (starting at `col` when given)."""
    name = operator.split("/", 1)[-1]
    toks = [t for t in line_tokens(path).get(line, ()) if col is None or t[0] == col]
    if name == "NumberReplacer":
        return any(kind == tokenize.NUMBER for _c, kind, _s in toks)
    if name in ("ReplaceTrueWithFalse", "ReplaceFalseWithTrue"):
        word = "True" if name == "ReplaceTrueWithFalse" else "False"
        return any(string == word for _c, _k, string in toks)
    family, _, rest = name.partition("_")
    if family in ("ReplaceBinaryOperator", "ReplaceComparisonOperator", "ReplaceUnaryOperator"):
        token = OPERATOR_TOKENS.get(rest.split("_", 1)[0])
        return token is not None and any(string == token for _c, _k, string in toks)
    return bool(toks)  # other operators: the line must at least hold code


def stale_reason(entry: dict) -> str | None:
    """Why an equivalents entry no longer points at what was judged, or None."""
    path, line = entry["path"], entry["line"]
    if not (ROOT / path).exists():
        return f"{path} does not exist"
    lines = (ROOT / path).read_text().splitlines()
    if not 1 <= line <= len(lines):
        return f"{path} has no line {line}"
    if "code" not in entry:
        return "no `code` (the judged line's text)"
    if lines[line - 1].strip() != entry["code"]:
        return f"line {line} now reads {lines[line - 1].strip()!r}, not {entry['code']!r}"
    if not mutable_token(path, line, entry["operator"], entry.get("col")):
        where = f"line {line}" + (f", column {entry['col']}" if "col" in entry else "")
        return f"{where} holds nothing {entry['operator']} mutates"
    return None


def manual_equivalents(warn=sys.stderr) -> dict[tuple[str, int, str, int | None], str]:
    """(path, line, operator, column or None for every column on the line) -> reason, for every
    entry that still points at what was judged; stale entries are named on `warn`."""
    if not EQUIVALENTS.exists():
        return {}
    data = tomllib.loads(EQUIVALENTS.read_text())
    judged = {}
    for e in data.get("equivalent", []):
        why = stale_reason(e)
        if why is not None:
            print(f"stale equivalent, not applied: {e['path']}:{e['line']} {e['operator']}: {why}", file=warn)
            continue
        judged[(e["path"], e["line"], e["operator"], e.get("col"))] = e["reason"]
    return judged


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
