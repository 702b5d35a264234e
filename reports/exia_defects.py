"""EXIA SEED's defects E-1…E-21 (seed-systems.md §8.2): each one's repair flag, its state in a
condition (from the recorded options) and how often the run's recorded events show it happened.

A count is evidence only: it is computed from stored `exia.*` events, and a defect whose
occurrence the events do not carry is reported as not observable, never guessed. Each count's
definition is in `DEFECTS` and is printed under the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

NOT_OBSERVABLE = "not observable from events"
NO_FLAG = "none in the seed"
PRIMARY = (None, "", "primary")
"""The agent contexts the provider treats as primary (systems/exia_seed/provider.py)."""


@dataclass(frozen=True)
class Defect:
    code: str
    text: str
    flag: str | None
    """The condition option (`fix_*`) that repairs it, None when the seed has no repair."""
    count: Callable[[Any], int] | None = None
    """How many times the run's events show it happened; None = not observable from events."""
    definition: str = ""


def _of(v: Any, mechanism: str, stage: str | None = None) -> list[dict[str, Any]]:
    return v.of(f"exia.{mechanism}", stage)


def _non_primary_notes(v: Any) -> int:
    return sum(1 for e in _of(v, "tool.note", "output") if e["params"].get("context") not in PRIMARY)


def _phase1_tool_memory(v: Any) -> int:
    if int((v.spec.get("options") or {}).get("phase", 1)) >= 2:
        return 0
    return sum(1 for m in ("tool.search", "tool.read") for e in _of(v, m, "output") if (e["count"] or 0) > 0)


def _phase2_over_budget(v: Any) -> int:
    n, budget = 0, None
    for e in v.events:  # stored order: each prefetch's recall.budget precedes its recall.phase2 output
        if e["mechanism"] == "exia.recall.budget" and e["stage"] == "executed":
            budget = e["params"].get("budget")
        elif e["mechanism"] == "exia.recall.phase2" and e["stage"] in ("output", "executed"):
            tokens = e["params"].get("estimated_tokens")
            if budget is not None and tokens is not None and tokens > budget:
                n += 1
    return n


def _future_in_read(v: Any) -> int:
    return sum(e["params"].get("future_in_trail_or_fallback", 0) for e in _of(v, "tool.read", "output"))


def _expired_in_search(v: Any) -> int:
    return sum(e["params"].get("expired_returned", 0) for e in _of(v, "tool.search", "output"))


AGENT_ONLY = "repose seulement sur des paroles de l'agent"
INVENTED = ("nombre absent des sources", "nom absent des sources")
"""The checker's rejection reasons (systems/exia_seed/checker.py) for E-7 and E-8."""


def _rejected_by(prefixes: tuple[str, ...]) -> Callable[[Any], int]:
    def count(v: Any) -> int:
        return sum(1 for e in _of(v, "checker", "executed") for pair in e["params"].get("rejected", [])
                   if isinstance(pair, list) and len(pair) > 1 and str(pair[1]).startswith(prefixes))
    return count


def _journal_past_rejection(v: Any) -> int:
    return sum(e["params"].get("rejected_integrated", 0) for e in _of(v, "consolidate.journal", "executed"))


def _busy_drops(v: Any) -> int:
    return sum(1 for e in _of(v, "consolidate.trigger", "skipped") if e["reason"] == "skipped_busy")


def _lost_writes(v: Any) -> int:
    return sum(e["params"].get("lost_facts", 0) for e in _of(v, "maintenance.refresh_summaries", "error")
               if "E-16" in (e["reason"] or ""))


def _priming(v: Any) -> int:
    return len(_of(v, "recall.priming", "output"))


def _first_lot_overrun(v: Any) -> int:
    return sum(1 for e in _of(v, "consolidate.select", "executed") if e["params"].get("first_lot_overrun"))


def _host_timeouts(v: Any) -> int:
    return len(_of(v, "host.prefetch", "error"))


DEFECTS: tuple[Defect, ...] = (
    Defect("E-1", "notes admitted from non-primary contexts", "fix_primary_only_notes", _non_primary_notes,
           "`tool.note` output events whose params.context is not primary."),
    Defect("E-2", "phase 1 is not no-read (memory reaches the prompt through tools)", None, _phase1_tool_memory,
           "in a phase-1 condition, `tool.search` / `tool.read` output events that returned at least one fact."),
    Defect("E-3", "phase-2 additions bypass the recall ceiling", "fix_phase2_ceiling", _phase2_over_budget,
           "`recall.phase2` blocks whose params.estimated_tokens exceed the params.budget of the "
           "`recall.budget` event of the same prefetch."),
    Defect("E-4", "future-dated facts via read trail / fallback", "fix_trail_date_filter", _future_in_read,
           "sum of `tool.read` params.future_in_trail_or_fallback (trail and fallback facts dated after the clock)."),
    Defect("E-5", "expired prospective facts via search", "fix_search_expiry_filter", _expired_in_search,
           "sum of `tool.search` params.expired_returned (returned facts whose deadline has passed)."),
    Defect("E-6", "lenient citation checker", "fix_strict_citations"),
    Defect("E-7", "agent-only facts rejected (seed behaviour, not a defect)", None,
           _rejected_by((AGENT_ONLY,)),
           "`checker` rejections with the reason \"relies only on the agent's words\"."),
    Defect("E-8", "invented numbers or names rejected (seed behaviour, not a defect)", None,
           _rejected_by(INVENTED),
           "`checker` rejections for a number or name absent from the sources."),
    Defect("E-9", "journals advance past rejected facts", "fix_journal_only_admitted", _journal_past_rejection,
           "sum of `consolidate.journal` params.rejected_integrated (inputs cited only by rejected facts, "
           "marked integrated without a retry)."),
    Defect("E-10", "cache keyed on the graph file's mtime only", "fix_cache_key_pages"),
    Defect("E-11", "withdrawal does not retract consolidated facts", None),
    Defect("E-12", "secret masking has unguarded paths", None),
    Defect("E-13", "busy consolidation does not queue", "fix_queue_when_busy", _busy_drops,
           "`consolidate.trigger` skipped events with reason `skipped_busy` (the trigger was dropped)."),
    Defect("E-14", "unconsolidated tail absent from recall", None),
    Defect("E-15", "privacy labels not enforced", "fix_enforce_privacy"),
    Defect("E-16", "summary writer takes no lock", "fix_summary_lock", _lost_writes,
           "facts lost by the E-16 overlap detector: sum of params.lost_facts of "
           "`maintenance.refresh_summaries` error events whose reason names E-16."),
    Defect("E-17", "non-transactional consolidation crash", None),
    Defect("E-18", "procedural-first truncation", None),
    Defect("E-19", "priming side effect across probes", None, _priming,
           "`recall.priming` output events (priming from an earlier recall changed the activation)."),
    Defect("E-20", "first lot sent whole over the consolidation budget", None, _first_lot_overrun,
           "`consolidate.select` events with params.first_lot_overrun true."),
    Defect("E-21", "synchronous phase-2 recall over the host timeout", None, _host_timeouts,
           "`host.prefetch` error events (simulated_seconds over timeout_s: the host dropped the block)."),
)


def defect_rows(v: Any) -> list[dict[str, Any]]:
    """One row per defect: flag, state in this condition, count observed in this run's events."""
    options: Mapping[str, Any] = v.spec.get("options") or {}
    rows = []
    for d in DEFECTS:
        if d.flag is None:
            state = "seed behaviour (no repair)"
        else:
            state = "repaired (fix on)" if options.get(d.flag) else "reproduced (seed)"
        rows.append({"code": d.code, "defect": f"{d.code} {d.text}", "flag": d.flag or NO_FLAG, "state": state,
                     "observed": d.count(v) if d.count else NOT_OBSERVABLE})
    return rows


def definitions() -> tuple[str, ...]:
    """The note under the table: what each count counts."""
    told = "; ".join(f"{d.code}: {d.definition}" for d in DEFECTS if d.count)
    silent = ", ".join(d.code for d in DEFECTS if d.count is None)
    return (f"State from the condition's recorded options (`fix_*` off = the seed's code path). "
            f"Observed = a count over this run's `exia.*` events: {told}",
            f"{silent}: the events do not carry whether it happened, so nothing is claimed.")
