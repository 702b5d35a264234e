"""The mutation tooling computes the kill rate it claims (scripts/mutation_report.py) and narrows a
session to its declared lines (scripts/mutation_scope.py); every judged equivalent names a real
line of a real module, with a reason."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import mutation_report  # noqa: E402

SCHEMA = """
CREATE TABLE work_items (job_id VARCHAR NOT NULL PRIMARY KEY);
CREATE TABLE mutation_specs (module_path VARCHAR, operator_name VARCHAR, operator_args JSON, occurrence INTEGER,
  start_pos_row INTEGER, start_pos_col INTEGER, end_pos_row INTEGER, end_pos_col INTEGER, definition_name VARCHAR,
  job_id VARCHAR NOT NULL PRIMARY KEY);
CREATE TABLE work_results (worker_outcome VARCHAR(9), output TEXT, test_outcome VARCHAR(11), diff TEXT,
  job_id VARCHAR NOT NULL PRIMARY KEY);
"""
VR = "systems/vector_rag/__init__.py"


def session(tmp_path: Path, rows: list[tuple]) -> Path:
    """rows: (module, operator, row, col, worker outcome or None, test outcome or None)."""
    path = tmp_path / "session.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    for n, (module, op, row, col, worker, test) in enumerate(rows):
        job = f"j{n}"
        db.execute("insert into work_items values (?)", (job,))
        db.execute("insert into mutation_specs values (?, ?, '[]', 0, ?, ?, ?, ?, NULL, ?)",
                   (module, op, row, col, row, col + 1, job))
        if worker:
            db.execute("insert into work_results values (?, '', ?, '', ?)", (worker, test, job))
    db.commit()
    return path


def report(path: Path) -> list[str]:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "mutation_report.py"), str(path)],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()[1].split()


def test_the_kill_rate_leaves_out_equivalents_incompetents_skipped_and_pending(tmp_path):
    rows = [(VR, "core/X", 80, 0, "NORMAL", "KILLED")] * 3 + [
        (VR, "core/X", 81, 0, "NORMAL", "SURVIVED"),
        (VR, "core/NumberReplacer", 42, 19, "NORMAL", "SURVIVED"),  # judged in docs/mutation-equivalents.toml
        (VR, "core/NumberReplacer", 59, 83, "NORMAL", "SURVIVED"),  # judged for column 83 only
        (VR, "core/NumberReplacer", 59, 60, "NORMAL", "SURVIVED"),  # same line, another column: not judged
        (VR, "core/ReplaceBinaryOperator_BitOr_Add", 45, 59, "NORMAL", "SURVIVED"),  # inside an annotation
        (VR, "core/X", 82, 0, "NORMAL", "INCOMPETENT"),
        (VR, "core/X", 83, 0, "SKIPPED", None),
        (VR, "core/X", 84, 0, None, None),
    ]
    cells = report(session(tmp_path, rows))
    assert cells == ["systems/vector_rag", "3", "2", "3", "1", "1", "1", "60.0%"]  # 3 / (3 + 2)


def test_scope_skips_only_the_pending_mutants_outside_the_declared_lines(tmp_path):
    path = session(tmp_path, [("systems/ice/workers.py", "core/X", 10, 0, None, None),
                              ("systems/ice/workers.py", "core/X", 120, 0, None, None),
                              ("systems/ice/workers.py", "core/X", 30, 0, "NORMAL", "KILLED"),
                              ("systems/ice/assemble.py", "core/X", 10, 0, None, None)])
    config = tmp_path / "c.toml"
    config.write_text('[lsrep-scope]\n"systems/ice/workers.py" = [[119, 156]]\n')
    subprocess.run([sys.executable, str(ROOT / "scripts" / "mutation_scope.py"), str(config), str(path)],
                   check=True, capture_output=True)
    outcomes = dict(sqlite3.connect(path).execute(
        "select s.start_pos_row || ' ' || s.module_path, r.worker_outcome from mutation_specs s "
        "left join work_results r using(job_id)").fetchall())
    assert outcomes == {"10 systems/ice/workers.py": "SKIPPED", "120 systems/ice/workers.py": None,
                        "30 systems/ice/workers.py": "NORMAL", "10 systems/ice/assemble.py": None}


def test_every_judged_equivalent_names_a_real_line_with_a_reason():
    entries = tomllib.loads((ROOT / "docs" / "mutation-equivalents.toml").read_text())["equivalent"]
    assert entries
    for e in entries:
        lines = (ROOT / e["path"]).read_text().splitlines()
        assert 1 <= e["line"] <= len(lines) and lines[e["line"] - 1].strip(), e
        assert e["operator"].startswith("core/") and len(e["reason"]) > 10, e
        if "col" in e:
            assert 0 <= e["col"] < len(lines[e["line"] - 1]), e


def test_every_judged_equivalent_still_points_at_the_code_it_judged():
    """A line moved or edited since the judgement, or a column on no token the operator mutates,
    makes the entry stale: fix its line (or re-judge) in the same commit as the code change."""
    entries = tomllib.loads((ROOT / "docs" / "mutation-equivalents.toml").read_text())["equivalent"]
    stale = [(e["path"], e["line"], e["operator"], why) for e in entries
             if (why := mutation_report.stale_reason(e)) is not None]
    assert stale == []


def _entry(path, line, operator, col=None, code=None):
    text = (ROOT / path).read_text().splitlines()[line - 1].strip()
    e = {"path": path, "line": line, "operator": operator, "reason": "test", "code": text if code is None else code}
    if col is not None:
        e["col"] = col
    return e


MODULE = "scripts/mutation_report.py"


def _find(needle: str) -> tuple[int, str]:
    lines = (ROOT / MODULE).read_text().splitlines()
    row = next(i for i, line in enumerate(lines, 1) if needle in line)
    return row, lines[row - 1]


def test_a_moved_or_edited_line_makes_an_entry_stale():
    row, text = _find("if not 1 <= line <= len(lines):")
    assert mutation_report.stale_reason(_entry(MODULE, row, "core/NumberReplacer")) is None
    assert "now reads" in mutation_report.stale_reason(_entry(MODULE, row + 1, "core/NumberReplacer", code=text.strip()))
    assert "now reads" in mutation_report.stale_reason(_entry(MODULE, row, "core/NumberReplacer", code=text.strip() + " "))
    missing = _entry(MODULE, row, "core/NumberReplacer")
    del missing["code"]
    assert "no `code`" in mutation_report.stale_reason(missing)
    assert "no line" in mutation_report.stale_reason(_entry(MODULE, 1, "core/NumberReplacer") | {"line": 10**6})


def test_an_entry_needs_a_token_its_operator_mutates():
    row, text = _find("if not 1 <= line <= len(lines):")
    col = text.index("1")
    lte = text.index("<=")
    ok = mutation_report.stale_reason
    assert ok(_entry(MODULE, row, "core/NumberReplacer", col=col)) is None
    assert "holds nothing" in ok(_entry(MODULE, row, "core/NumberReplacer", col=col + 1))
    assert ok(_entry(MODULE, row, "core/ReplaceComparisonOperator_LtE_Lt")) is None
    assert ok(_entry(MODULE, row, "core/ReplaceComparisonOperator_LtE_Lt", col=lte)) is None
    assert "holds nothing" in ok(_entry(MODULE, row, "core/ReplaceComparisonOperator_Lt_LtE"))
    assert "holds nothing" in ok(_entry(MODULE, row, "core/ReplaceComparisonOperator_Eq_Is"))
    assert "holds nothing" in ok(_entry(MODULE, row, "core/ReplaceTrueWithFalse"))
    assert "holds nothing" in ok(_entry(MODULE, row, "core/ReplaceBinaryOperator_Add_Sub"))
    row, _text = _find("return token is not None and any(")
    assert ok(_entry(MODULE, row, "core/ReplaceComparisonOperator_IsNot_Is")) is None
    assert "holds nothing" in ok(_entry(MODULE, row, "core/ReplaceUnaryOperator_USub_Invert"))


def test_the_report_does_not_apply_a_stale_entry(tmp_path, monkeypatch):
    """A survivor on a line whose judgement went stale counts as surviving, and the report says why."""
    row, text = _find("if not 1 <= line <= len(lines):")
    eq = tmp_path / "eq.toml"
    eq.write_text(f'[[equivalent]]\npath = "{MODULE}"\nline = {row}\ncode = "moved"\n'
                  f'operator = "core/NumberReplacer"\nreason = "a judgement of another line"\n')
    monkeypatch.setattr(mutation_report, "EQUIVALENTS", eq)
    warn = io.StringIO()
    assert mutation_report.manual_equivalents(warn) == {}
    assert f"{MODULE}:{row}" in warn.getvalue() and "now reads" in warn.getvalue()
    eq.write_text(eq.read_text().replace('code = "moved"', f"code = {json.dumps(text.strip())}"))
    assert mutation_report.manual_equivalents(io.StringIO()) == {(MODULE, row, "core/NumberReplacer", None): "a judgement of another line"}
