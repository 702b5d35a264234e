"""Renderers: report tree → self-contained HTML, Markdown or JSON.

HTML uses Jinja2 with autoescaping on; CSS and SVG figures are inlined, so the
file makes no external request. Its one inline script (templates/drilldown.js: links open the
section they target, the Observations drill-down) is pinned by hash in the page's
Content-Security-Policy, which allows no other script and no network; every section but the
drill-down reads without it. Markdown escapes
table cells through `reports.format.md_cell`. JSON is the tree itself.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from lsrep.reports import format as fmt
from lsrep.reports.drilldown import empty_drilldown
from lsrep.reports.figures import render_figure
from lsrep.reports.tree import Callout, Facts, Figure, Paragraph, Report, Table
from markupsafe import Markup

from lsrep.stats import Estimate, PairedComparison, TestResult

TEMPLATES = Path(__file__).parent / "templates"
NUMERIC_KINDS = frozenset({"int", "number", "tokens", "ms", "rate", "estimate", "rate_estimate", "rate_interval", "pvalue", "p_holm", "delta",
                           "share_bar"})
JSON_SCHEMA_VERSION = 2
"""2: the metrics record (`conditions`, `calibration`, ...) at the top level, the tree under `report`."""


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=lambda name: name is not None and name.endswith(".html.j2"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fmt.FILTERS)
    env.filters["align"] = lambda kind: "r" if kind in NUMERIC_KINDS else "l"
    env.tests.update({
        "table": lambda b: isinstance(b, Table), "figure": lambda b: isinstance(b, Figure),
        "callout": lambda b: isinstance(b, Callout), "facts": lambda b: isinstance(b, Facts),
        "paragraph": lambda b: isinstance(b, Paragraph),
    })
    return env


def figures_of(report: Report) -> dict[str, Markup]:
    """Every figure of the report rendered to inline SVG, by key."""
    out = {}
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Figure):
                # The SVG comes from matplotlib, which escapes all text it writes.
                out[block.key] = Markup(render_figure(block))
    return out


def script_hash(js: str) -> str:
    """The CSP source that allows exactly this inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(report: Report) -> str:
    css = Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")
                 + (TEMPLATES / "drilldown.css").read_text(encoding="utf-8"))
    js = (TEMPLATES / "drilldown.js").read_text(encoding="utf-8")
    return environment().get_template("report.html.j2").render(
        report=report, meta=report.meta, figures=figures_of(report), css=css,
        drilldown=(report.drilldown() if callable(report.drilldown) else report.drilldown) or empty_drilldown(), js=Markup(js), script_hash=Markup(script_hash(js)),
    )


def render_markdown(report: Report) -> str:
    return environment().get_template("report.md.j2").render(report=report, meta=report.meta)


def render_json(report: Report) -> str:
    tree = to_jsonable(dataclasses.replace(report, metrics={}, fidelity=(), drilldown=None))
    for key in ("metrics", "fidelity", "drilldown"):
        tree.pop(key, None)
    doc = {"schema": JSON_SCHEMA_VERSION, "run_id": report.run_id, **to_jsonable(report.metrics),
           "fidelity": to_jsonable(report.fidelity), "report": tree}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)


def to_jsonable(obj: Any) -> Any:
    """Plain JSON values; NaN becomes null; blocks carry their type name."""
    if isinstance(obj, Estimate | TestResult | PairedComparison):
        return {k: to_jsonable(v) for k, v in dataclasses.asdict(obj).items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        body = {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        if isinstance(obj, Table | Figure | Callout | Facts | Paragraph):
            body = {"type": type(obj).__name__.lower(), **body}
        return body
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    return obj
