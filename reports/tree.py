"""The format-neutral report tree: what a report says, not how it looks.

Renderers (HTML, Markdown, JSON) walk this tree. Table cells hold raw values
(numbers, `Estimate`s, strings); a column's `kind` tells a renderer which pure
formatter shows it. Figures hold the data to draw, not a drawing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CellKind = Literal[
    "text", "code", "int", "number", "tokens", "ms", "rate", "estimate", "rate_estimate", "rate_interval", "pvalue", "p_holm", "label",
    "digest", "mix", "condition", "status", "verdict", "untrusted", "answer", "share_bar", "bool", "delta",
]


@dataclass(frozen=True)
class Column:
    key: str
    """Key of the value in each row."""
    label: str
    """Header text."""
    kind: CellKind = "text"
    """How the value is formatted."""
    note: str = ""
    """Short explanation shown under the header (e.g. the resampling unit)."""


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]
    caption: str = ""
    notes: tuple[str, ...] = ()
    """Footnotes: what an interval resamples, what a column counts."""
    empty: str = "No rows."
    """Shown instead of an empty table."""


@dataclass(frozen=True)
class Figure:
    key: str
    """Figure id, unique in the report."""
    kind: Literal["over_time", "outcome_mix", "forest", "cost", "heatmap"]
    title: str
    data: dict[str, Any]
    caption: str = ""
    alt: str = ""
    """Text alternative describing what the figure shows."""


@dataclass(frozen=True)
class Callout:
    tone: Literal["info", "warn", "danger", "ok"]
    title: str
    text: str = ""


@dataclass(frozen=True)
class Facts:
    """A definition list of (label, value, kind) triples."""

    items: tuple[tuple[str, Any, CellKind], ...]
    title: str = ""


@dataclass(frozen=True)
class Paragraph:
    text: str


Block = Table | Figure | Callout | Facts | Paragraph


@dataclass(frozen=True)
class Section:
    id: str
    """Anchor id; stable across runs (tests and links rely on it)."""
    title: str
    lead: str = ""
    """One or two sentences: what the section shows and how to read it."""
    blocks: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Report:
    title: str
    run_id: str
    subtitle: str
    conditions: tuple[str, ...]
    """Condition names in campaign order; renderers key colours on this order."""
    banner: tuple[Callout, ...]
    """Shown above everything (answerer and judge provenance, run status)."""
    highlights: tuple[tuple[str, Any, CellKind], ...]
    """A few headline numbers for the top of the page."""
    sections: tuple[Section, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    """Judge, bootstrap settings, generation details."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """The machine-readable metrics record (`reports.metrics`); JSON puts it at the top level."""
    fidelity: tuple[dict[str, Any], ...] = ()
    """Machine-readable fidelity audit, one record per (condition, mechanism) (`audit.fidelity_records`)."""
    drilldown: Any = None
    """`reports.drilldown.Drilldown` (or a no-argument callable building it, so that Markdown and
    JSON reports never pay for it): every observation, compressed, for the HTML drill-down only."""

    def section(self, section_id: str) -> Section:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)
