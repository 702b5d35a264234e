"""Write a run's reports to disk.

    paths = write_reports(store, run_id, out_dir)   # {"html": ..., "md": ..., "json": ...}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from lsrep.reports.load import DETERMINISTIC
from lsrep.reports.model import build_report
from lsrep.reports.render import render_html, render_json, render_markdown
from lsrep.reports.tree import Report

from lsrep.store import RunStore

FORMATS: dict[str, str] = {"html": "report.html", "md": "report.md", "json": "report.json"}
"""Format → default file name."""

_RENDERERS = {"html": render_html, "md": render_markdown, "json": render_json}


def render(report: Report, fmt: str) -> str:
    """One report in one format."""
    return _RENDERERS[fmt](report)


def write_report(report: Report, fmt: str, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(report, fmt), encoding="utf-8")
    return path


def write_reports(
    store: RunStore,
    run_id: str,
    out_dir: Path | str,
    compare: Sequence[tuple[str, str]] | None = None,
    *,
    judge: str = DETERMINISTIC,
    formats: Iterable[str] = tuple(FORMATS),
) -> dict[str, Path]:
    """Build the report once and write it as report.html / report.md / report.json in out_dir."""
    report = build_report(store, run_id, compare=compare, judge=judge)
    out = Path(out_dir)
    return {fmt: write_report(report, fmt, out / FORMATS[fmt]) for fmt in formats}
