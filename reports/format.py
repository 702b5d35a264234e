"""Formatters: pure functions from a cell value to text (Markdown) or escaped markup (HTML).

Registered as Jinja filters by `reports.render`; templates call them and never
compute. Every string that reaches HTML passes through `markupsafe.escape`
here or through autoescaping in the template.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from lsrep.reports.figures import OUTCOME_COLORS
from lsrep.reports.palette import condition_colors
from markupsafe import Markup, escape

from lsrep.audit import STATUS_CLASS
from lsrep.stats import Estimate

DASH = "—"
MIX_ORDER = ("correct", "stale", "future", "abstained", "wrong", "error", "unjudged")
MIX_SHORT = {"correct": "correct", "stale": "stale", "future": "future", "abstained": "abst.",
             "wrong": "wrong", "error": "error", "unjudged": "unjudged"}


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


# -- text ------------------------------------------------------------------------------------
def fmt_int(v: Any) -> str:
    return DASH if _missing(v) else f"{int(v):,}"


def fmt_number(v: Any, digits: int = 3) -> str:
    if _missing(v):
        return DASH
    if isinstance(v, int | bool) and not isinstance(v, bool):
        return f"{v:,}"
    return f"{float(v):,.{digits}f}"


def fmt_rate(v: Any, digits: int = 1) -> str:
    return DASH if _missing(v) else f"{float(v) * 100:.{digits}f}%"


def fmt_pvalue(p: Any) -> str:
    if _missing(p):
        return DASH
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}"


def fmt_signed(v: Any, digits: int = 3) -> str:
    if _missing(v):
        return DASH
    v = 0.0 if abs(v) < 0.5 * 10**-digits else float(v)
    return f"{v:+.{digits}f}".replace("-", "−")


def fmt_interval(e: Estimate, kind: str) -> str:
    lo, hi = e.interval
    if _missing(lo) or _missing(hi):
        return ""
    if kind in ("rate_estimate", "rate_interval"):
        return f"[{lo * 100:.1f}, {hi * 100:.1f}]"
    if kind == "delta":
        return f"[{fmt_signed(lo)}, {fmt_signed(hi)}]"
    digits = 1 if max(abs(lo), abs(hi)) >= 10 else 3
    return f"[{lo:,.{digits}f}, {hi:,.{digits}f}]"


def fmt_estimate(e: Any, kind: str = "estimate") -> str:
    """`57.1% [43.0, 70.2]`, `0.412 [0.31, 0.52]`, `+0.050 [−0.01, +0.11]`."""
    if not isinstance(e, Estimate):
        return fmt_value(e, "number")
    if _missing(e.value):
        return DASH
    match kind:
        case "rate_interval":
            return fmt_interval(e, kind) or DASH
        case "rate_estimate":
            head = fmt_rate(e.value)
        case "delta":
            head = fmt_signed(e.value)
        case _:
            head = fmt_number(e.value, 1 if abs(e.value) >= 10 else 3)
    tail = fmt_interval(e, kind)
    return f"{head} {tail}".strip()


def fmt_mix(mix: Any) -> str:
    if not isinstance(mix, dict):
        return DASH
    return " · ".join(f"{mix[k]} {MIX_SHORT[k]}" for k in MIX_ORDER if mix.get(k))


def fmt_digest(v: Any) -> str:
    return DASH if _missing(v) or v == "" else str(v)


def fmt_value(v: Any, kind: str = "text") -> str:
    """Plain-text form of any cell (Markdown, titles, JSON-free contexts)."""
    if isinstance(v, Estimate):
        return fmt_estimate(v, kind if kind in ("rate_estimate", "rate_interval", "delta") else "estimate")
    if _missing(v):
        return DASH
    match kind:
        case "int" | "tokens":
            return fmt_int(v)
        case "number":
            return fmt_number(v)
        case "ms":
            return f"{float(v):,.2f}"
        case "rate" | "share_bar":
            return fmt_rate(v)
        case "pvalue":
            return fmt_pvalue(v)
        case "p_holm":
            return f"{fmt_pvalue(v[0])} (Holm {fmt_pvalue(v[1])})"
        case "delta":
            return fmt_signed(v)
        case "mix":
            return fmt_mix(v)
        case "bool":
            return "yes" if v else "no"
        case "status":
            return str(v)
        case "answer" if isinstance(v, dict):
            return f"{v.get('text') or ''} [{v.get('outcome') or 'unjudged'}]"
    if isinstance(v, dict | list | tuple):
        return json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)
    return str(v)


_LINK_SYNTAX = re.compile(r"\]\s*[(\[:]")


def _no_links(text: str) -> str:
    # Link and image syntax from data (`[x](javascript:...)`, `![](http://...)`, `[x][ref]`,
    # `[ref]: url`) is shown literally: its brackets are escaped. Text without it is unchanged.
    if "]" in text and _LINK_SYNTAX.search(text):
        text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return text


def _md_safe(text: str) -> str:
    # Link syntax is shown literally; only what Markdown would read as HTML is escaped: `<` opening
    # a tag and `&` opening an entity. `p < 0.05`, `<0.001` and `a & b` stay as written.
    text = _no_links(text)
    text = re.sub(r"&(?=#?\w+;)", "&amp;", text)
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def md_cell(v: Any, kind: str = "text") -> str:
    """A Markdown table cell: plain text with pipes, newlines, link syntax and HTML metacharacters neutralised."""
    text = fmt_value(v, kind)
    text = text if kind in ("code", "digest") else _md_safe(text)
    text = text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return f"`{text}`" if kind in ("code", "digest") and text != DASH and "`" not in text else text


def md_text(v: Any) -> str:
    """Free Markdown text from the report (titles, notes), with HTML metacharacters neutralised;
    `code` spans are kept verbatim (Markdown shows their content literally)."""
    parts = re.split(r"(`[^`\n]+`)", str(v))
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else _md_safe(p) for p in parts)


def prose(v: Any) -> Markup:
    """Free text for the HTML report: escaped, with `code` spans as <code> (no literal backticks)."""
    parts = re.split(r"`([^`\n]+)`", str(v))
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else Markup(escape(p))
                           for i, p in enumerate(parts))


# -- HTML ------------------------------------------------------------------------------------
def html_cell(v: Any, kind: str = "text", conditions: Sequence[str] = ()) -> Markup:
    """One table cell's inner HTML; every string inside is escaped."""
    if kind == "condition" and not _missing(v):
        return swatch(v, conditions)
    if isinstance(v, Estimate):
        return _html_estimate(v, kind)
    if _missing(v):
        return Markup('<span class="na">—</span>')
    match kind:
        case "pvalue":
            cls = "p sig" if v < 0.05 else "p"
            return Markup('<span class="{}">{}</span>').format(cls, fmt_pvalue(v))
        case "p_holm":
            raw, adjusted = v
            cls = "p sig" if adjusted is not None and adjusted < 0.05 else "p"
            return Markup('<span class="{}">{}</span><span class="ci holm">Holm {}</span>').format(
                cls, fmt_pvalue(raw), fmt_pvalue(adjusted))
        case "label":
            return Markup('<span class="label">{}</span>').format(str(v))
        case "rate" | "share_bar":
            return _share_bar(float(v)) if kind == "share_bar" else Markup(escape(fmt_rate(v)))
        case "mix":
            return _mix_bar(v)
        case "status":
            klass = STATUS_CLASS.get(v, "")
            return Markup('<span class="badge b-{}" title="{}">{}</span>').format(
                klass.split()[0] if klass else "x", klass, str(v).replace("_", " "))
        case "verdict":
            return Markup('<span class="badge v-{}">{}</span>').format(str(v).split()[0], str(v).replace("_", " "))
        case "code":
            return Markup("<code>{}</code>").format(fmt_value(v))
        case "digest":
            return Markup('<code class="digest">{}</code>').format(fmt_digest(v))
        case "untrusted":
            return Markup('<span class="ut">{}</span>').format(str(v))
        case "answer":
            return _answer(v)
        case "delta":
            return Markup('<span class="num">{}</span>').format(fmt_signed(v))
    return Markup(escape(fmt_value(v, kind)))


def _answer(v: Any) -> Markup:
    if not isinstance(v, dict):
        return Markup('<span class="ut">{}</span>').format(str(v))
    outcome = v.get("outcome") or "unjudged"
    return Markup('<span class="oc" style="border-color:{}">{}</span> <span class="ut">{}</span>').format(
        OUTCOME_COLORS.get(outcome, "#999"), outcome, v.get("text") or "")


def swatch(name: Any, conditions: Sequence[str]) -> Markup:
    if name not in conditions:
        return Markup('<span class="cond other">{}</span>').format(str(name))
    return Markup('<span class="cond"><span class="sw" style="background:{}"></span>{}</span>').format(
        condition_colors(conditions)[str(name)], str(name))


def _pct(x: float) -> str:
    return f"{max(0.0, min(1.0, x)) * 100:.1f}%"


def _html_estimate(e: Estimate, kind: str) -> Markup:
    if _missing(e.value):
        return Markup('<span class="na">—</span>')
    head = "" if kind == "rate_interval" else fmt_estimate(e, kind).split(" [")[0]
    tail = fmt_interval(e, kind)
    title = f"{e.method}; unit: {e.unit}; n={e.n}, clusters={e.clusters}"
    lo, hi = e.interval
    cls = "est"
    if kind == "delta" and not (_missing(lo) or _missing(hi)) and (lo > 0 or hi < 0):
        cls += " pos" if lo > 0 else " neg"
    bar = Markup("")
    if kind in ("rate_estimate", "rate_interval") and not (_missing(lo) or _missing(hi)):
        bar = Markup('<span class="ebar"><span class="eci" style="left:{};width:{}"></span>'
                     '<span class="ept" style="left:{}"></span></span>').format(
            _pct(lo), _pct(hi - lo), _pct(e.value))
    return Markup('<span class="{}" title="{}"><span class="v">{}</span> <span class="ci">{}</span>{}</span>').format(
        cls, title, head, tail, bar)


def _share_bar(x: float) -> Markup:
    return Markup('<span class="share"><span class="sbar"><span style="width:{}"></span></span>'
                  '<span class="v">{}</span></span>').format(_pct(x), fmt_rate(x))


def _mix_bar(mix: Any) -> Markup:
    if not isinstance(mix, dict):
        return Markup('<span class="na">—</span>')
    total = sum(v for v in mix.values())
    if not total:
        return Markup('<span class="na">—</span>')
    parts = Markup("").join(
        Markup('<span style="width:{};background:{}" title="{}: {}"></span>').format(
            _pct(mix[k] / total), OUTCOME_COLORS.get(k, "#999"), k, mix[k])
        for k in MIX_ORDER if mix.get(k))
    return Markup('<span class="mix"><span class="mbar">{}</span><span class="mtext">{}</span></span>').format(
        parts, fmt_mix(mix))


def outcome_color(name: str) -> str:
    return OUTCOME_COLORS.get(name, "#999")


FILTERS = {
    "cell": html_cell, "md_cell": md_cell, "md_text": md_text, "prose": prose, "fmt": fmt_value, "swatch": swatch,
    "outcome_color": outcome_color,
}
"""Jinja filters, by name."""
