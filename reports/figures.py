"""Figures: report-tree `Figure` data → self-contained inline SVG (matplotlib, Agg backend).

The SVG carries no XML prolog, namespace URLs or metadata (nothing that looks
like an external reference) and its element ids are prefixed per figure, so
several figures can share one HTML page.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from lsrep.reports.palette import PALETTE, condition_colors  # noqa: E402
from lsrep.reports.tree import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator, PercentFormatter  # noqa: E402

CONDITION_COLORS = PALETTE  # colours are keyed on condition names: lsrep.reports.palette
OUTCOME_COLORS = {
    "correct": "#2a9d8f", "stale": "#e9a23b", "future": "#9b5de5", "abstained": "#b8c2d1",
    "wrong": "#d1495b", "error": "#4a4a4a",
}
INK, MUTED, GRID = "#1f2933", "#6b7785", "#e6e9ee"

STYLE = {
    "svg.fonttype": "none", "svg.hashsalt": "lsrep", "font.family": "DejaVu Sans", "font.size": 9,
    "axes.edgecolor": "#c5ccd6", "axes.labelcolor": INK, "axes.titlesize": 10, "axes.titleweight": "bold",
    "axes.titlecolor": INK, "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
    "grid.color": GRID, "grid.linewidth": 0.8, "xtick.color": MUTED, "ytick.color": MUTED,
    "legend.frameon": False, "figure.facecolor": "white", "axes.facecolor": "white",
    # Labels come from campaign files; a "$" in a category name must stay a dollar sign.
    "text.parse_math": False,
}


def condition_color(index: int) -> str:
    """A palette colour by position (kept for callers by index; reports key colours on names)."""
    return CONDITION_COLORS[index % len(CONDITION_COLORS)]


def render_figure(fig: Figure) -> str:
    """One figure as an inline `<svg>` element string."""
    with plt.rc_context(STYLE):
        match fig.kind:
            case "over_time":
                figure = _over_time(fig.data)
            case "outcome_mix":
                figure = _outcome_mix(fig.data)
            case "forest":
                figure = _forest(fig.data)
            case "cost":
                figure = _cost(fig.data)
            case "heatmap":
                figure = _heatmap(fig.data)
            case _:
                raise ValueError(f"unknown figure kind {fig.kind!r}")
        try:
            buf = io.StringIO()
            figure.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
        finally:
            plt.close(figure)
    return clean_svg(buf.getvalue(), prefix=fig.key, label=fig.alt or fig.title)


def clean_svg(svg: str, *, prefix: str, label: str) -> str:
    """Strip prolog, namespaces and metadata; prefix ids; make it scale with its container."""
    svg = re.sub(r"<\?xml[^>]*\?>", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = svg.replace("xlink:href=", "href=")
    # A <style> inside inline SVG applies to the whole page: keep matplotlib's rule on the figures.
    svg = svg.replace("<style type=\"text/css\">*{", "<style type=\"text/css\">svg.fig *{")
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if ids:
        pattern = re.compile(r'(\bid="|href="#|url\(#)(' + "|".join(map(re.escape, sorted(ids, key=len, reverse=True)))
                             + r')(?=["\)])')
        svg = pattern.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    width = re.search(r'<svg\b[^>]*?\bwidth="([\d.]+)pt"', svg)
    # Never upscale: at most the drawn size (pt → CSS px), smaller on narrow screens.
    style = f' style="max-width:{float(width.group(1)) * 4 / 3:.0f}px"' if width else ""
    svg = re.sub(r'<svg\b[^>]*?(viewBox="[^"]*")[^>]*>',
                 lambda m: f'<svg {m.group(1)} class="fig" role="img" aria-label="{_attr(label)}"{style} '
                           'preserveAspectRatio="xMidYMid meet">', svg, count=1)
    return svg.strip()


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _finite(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _checkpoint_ticks(ax, ticks: Sequence[int]) -> None:
    if len(ticks) <= 16:
        ax.set_xticks(list(ticks))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=12, integer=True))


def _legend_below(fig, handles, labels, ncol: int) -> None:
    fig.legend(handles, labels, loc="lower center", ncol=max(1, ncol), bbox_to_anchor=(0.5, -0.02),
               fontsize=8.5, handlelength=1.4, columnspacing=1.4)


# -- figure kinds ------------------------------------------------------------------------------
def _over_time(data: dict[str, Any]):
    conditions: Sequence[str] = data["conditions"]
    fig, ax = plt.subplots(figsize=(9.2, 3.6))
    k = max(1, len(conditions))
    # Conditions often tie; a small horizontal dodge keeps every line and interval visible.
    width = min(0.3, 0.08 * k)
    colors = condition_colors(conditions)
    ends: list[tuple[float, float, str]] = []
    for i, cond in enumerate(conditions):
        pts = [p for p in data["series"].get(cond, []) if _finite(p["value"])]
        if not pts:
            continue
        shift = (i - (k - 1) / 2) * (width / max(1, k - 1)) if k > 1 else 0.0
        xs = [p["x"] + shift for p in pts]
        ys = [p["value"] for p in pts]
        color = colors[cond]
        ax.vlines(xs, [p["lo"] for p in pts], [p["hi"] for p in pts], color=color, lw=2.2, alpha=0.35)
        ax.plot(xs, ys, marker="o", ms=5.5, lw=1.8, color=color, label=cond, markeredgecolor="white",
                markeredgewidth=0.8)
        ends.append((xs[-1], ys[-1], cond))
    _direct_labels(ax, ends, colors)
    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    _checkpoint_ticks(ax, data.get("xticks") or [])
    ax.set_xlabel(data["xlabel"])
    ax.set_ylabel(data["ylabel"])
    ax.grid(axis="x", visible=False)
    handles, labels = ax.get_legend_handles_labels()
    fig.subplots_adjust(bottom=0.24)
    _legend_below(fig, handles, labels, len(labels))
    return fig


def _direct_labels(ax, ends: list[tuple[float, float, str]], colors: dict[str, str], gap: float = 0.055) -> None:
    """Each line's name at its last point, in its colour; tied ends are spread apart vertically."""
    if not ends:
        return
    placed: list[float] = []
    for _, y, _ in sorted(ends, key=lambda e: (e[1], e[2])):
        placed.append(max(y, placed[-1] + gap) if placed else y)
    overshoot = max(0.0, placed[-1] - 1.0)
    placed = [p - overshoot for p in placed]
    right = max(x for x, _, _ in ends)
    for (x, y, cond), label_y in zip(sorted(ends, key=lambda e: (e[1], e[2])), placed, strict=True):
        ax.annotate(cond, xy=(x, y), xytext=(right + 0.25, label_y), textcoords="data", color=colors[cond],
                    fontsize=8, fontweight="bold", va="center", ha="left", annotation_clip=False,
                    arrowprops={"arrowstyle": "-", "color": colors[cond], "lw": 0.6, "alpha": 0.5})
    left, hi = ax.get_xlim()
    ax.set_xlim(left, max(hi, right + 0.25 + 0.09 * max(len(c) for _, _, c in ends)))


def _outcome_mix(data: dict[str, Any]):
    conditions: Sequence[str] = data["conditions"]
    checkpoints = data["checkpoints"]
    k = max(1, len(conditions))
    ncols = min(k, 3)
    nrows = math.ceil(k / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols + 0.4, 2.5 * nrows + 0.6), sharey=True,
                             squeeze=False)
    for ax in axes.flat[k:]:
        ax.set_visible(False)
    handles = {}
    for ax, cond in zip(axes.flat, conditions, strict=False):
        shares = data["shares"][cond]
        bottom = [0.0] * len(checkpoints)
        for outcome in data["outcomes"]:
            vals = shares[outcome]
            bars = ax.bar(checkpoints, vals, bottom=bottom, width=0.78, color=OUTCOME_COLORS[outcome],
                          edgecolor="white", linewidth=0.5)
            handles.setdefault(outcome, bars)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        (line,) = ax.plot(checkpoints, shares["leak"], color=INK, lw=1.6, marker="o", ms=3)
        handles.setdefault("proven leak", line)
        ax.set_title(cond, loc="left", fontsize=9.5)
        ax.set_ylim(0, 1.0)
        _checkpoint_ticks(ax, checkpoints)
        ax.grid(axis="x", visible=False)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    fig.supxlabel("checkpoint", fontsize=9, color=MUTED, y=0.09 if nrows == 1 else 0.05)
    fig.subplots_adjust(bottom=0.3 if nrows == 1 else 0.18, wspace=0.12, hspace=0.45)
    _legend_below(fig, list(handles.values()), list(handles), len(handles))
    return fig


def _forest(data: dict[str, Any]):
    rows = [r for r in data["rows"] if _finite(r["value"])]
    n = max(1, len(rows))
    fig, ax = plt.subplots(figsize=(9.2, 0.9 + 0.42 * n))
    ys = list(range(n))[::-1]
    for y, r in zip(ys, rows, strict=False):
        color = "#3366cc" if r["significant"] else MUTED
        ax.plot([r["lo"], r["hi"]], [y, y], color=color, lw=2.2, solid_capstyle="round")
        ax.plot([r["value"]], [y], marker="o", ms=7, color=color,
                markerfacecolor=color if r["significant"] else "white", markeredgewidth=1.8)
    ax.axvline(0, color=INK, lw=1, ls=(0, (3, 3)))
    ax.set_yticks(ys)
    ax.set_yticklabels([r["label"] for r in rows], fontsize=9, color=INK)
    lim = max([abs(v) for r in rows for v in (r["lo"], r["hi"]) if _finite(v)] + [0.05]) * 1.12
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-0.6, n - 0.4)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_xlabel(data["xlabel"])
    ax.grid(axis="y", visible=False)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    return fig


def _cost(data: dict[str, Any]):
    fig, axes = plt.subplots(1, 2, figsize=(9.2, 3.4), sharey=True)
    for ax, key, label in ((axes[0], "fragments", "mean fragments per observation"),
                           (axes[1], "total_tokens", "total tokens per observation (answer + memory model)")):
        xs = [p[key] for p in data["points"] if _finite(p.get(key))]
        colors = condition_colors([p["condition"] for p in data["points"]])
        for p in data["points"]:
            if not (_finite(p["accuracy"]) and _finite(p.get(key))):
                continue
            color = colors[p["condition"]]
            ax.errorbar([p[key]], [p["accuracy"]], yerr=[[p["accuracy"] - p["lo"]], [p["hi"] - p["accuracy"]]],
                        fmt="o", ms=7.5, color=color, ecolor=color, elinewidth=2, alpha=0.9, capsize=0,
                        markeredgecolor="white", markeredgewidth=0.8, label=p["condition"])
        span = max(xs + [1.0])
        ax.set_xlim(-0.06 * span, span * 1.12)
        ax.set_xlabel(label)
    axes[0].set_ylim(-0.03, 1.03)
    axes[0].yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    axes[0].set_ylabel("headline")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.subplots_adjust(wspace=0.08, bottom=0.27)
    _legend_below(fig, handles, labels, len(labels))
    return fig


def _heatmap(data: dict[str, Any]):
    rows = data["rows"]
    conditions = data["conditions"]
    fig, ax = plt.subplots(figsize=(min(9.2, 2.2 + 1.3 * len(conditions)), 0.8 + 0.34 * len(rows)))
    values = [[math.nan if v is None else v for v in r["values"]] for r in rows]
    cmap = matplotlib.colormaps["YlGnBu"].with_extremes(bad="#f1f3f6")
    # Vector cells (pcolormesh), not a raster image: the SVG stays text and paths only.
    ax.pcolormesh(np.ma.masked_invalid(np.array(values, dtype=float)), cmap=cmap, vmin=0, vmax=1,
                  edgecolors="white", linewidth=2)
    for y, row in enumerate(values):
        for x, v in enumerate(row):
            text = "—" if math.isnan(v) else f"{v:.0%}"
            ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=8.5,
                    color="white" if (not math.isnan(v) and v > 0.6) else INK)
    ax.set_xticks([i + 0.5 for i in range(len(conditions))])
    ax.set_xticklabels(conditions, fontsize=8.5, color=INK)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))])
    ax.set_yticklabels([r["label"] for r in rows], fontsize=8.5, color=INK)
    ax.invert_yaxis()
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(length=0)
    return fig
