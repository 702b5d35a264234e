"""Stage semantics of the fidelity audit: what each event says, and what a run of them proves.

A mechanism reports stages (`eligible`, `executed`, `output`, `selected`, `in_prompt`, and
the negatives `ineligible`, `skipped`, `error`). Each event falls into one *stage outcome*:

- `produced`: `output`, `selected` or `in_prompt` (only the harness writes `in_prompt`).
- `ran`: `executed` with real input.
- `idle`: ran or was skipped with nothing to do (empty input, nothing over a cap); the event's
  reason starts with `idle` (`"idle: nothing over the cap"`).
- `disabled`: skipped or ineligible because configuration or an ablation switched it off; the
  reason starts with `disabled` (older adapters: `"off by configuration"`, `"<x> is off"`).
- `not_eligible`: `ineligible` for any other reason (its input condition did not hold).
- `skipped`: `skipped` with some other declared reason (e.g. "read-only probe").
- `error`: ran and failed.
- `reported`: the system's own account of its internal prompt (`reported_in_prompt`), kept
  beside, never merged with, the harness's `in_prompt`.

A mechanism's *applicable stages* say how far it is expected to get when it has work:
`MechanismSpec.stages`, or, for an adapter that declares nothing, `eligible` and `executed`
only, so that silence about output is never read as "produced nothing". `output` applicable:
a run with input must produce output. `selected` and `in_prompt` applicable: what is selected
must reach the prompt. `in_prompt` applicable at all: the harness may credit the mechanism
with prompt fragments (a declared mechanism without it is a pass-through and is not credited).

Verdicts, from the whole run of one condition (see docs/fidelity.md):
`contributing`, `exercised_no_effect`, `exercised` (ran; no ablation measured its effect),
`idle`, `disabled`, `never_exercised`, `defective`. `defective` needs positive evidence:
an error; eligible with no run and no reason given; ran with input yet never produced output
where output applies; selected yet never in the prompt where the prompt applies; or ran while
the condition switched it off.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OUTCOMES: tuple[str, ...] = (
    "produced", "ran", "idle", "disabled", "not_eligible", "skipped", "error", "reported",
)
"""Stage outcomes of single events, in report order."""

VERDICTS: tuple[str, ...] = (
    "contributing", "exercised_no_effect", "exercised", "idle", "disabled", "never_exercised", "defective",
)
"""Per-mechanism verdicts."""

DEFAULT_STAGES: tuple[str, ...] = ("eligible", "executed")
"""Applicable stages of a mechanism whose adapter declares none."""

PIPELINE: tuple[str, ...] = ("eligible", "executed", "output", "selected", "in_prompt")

_DISABLED = re.compile(r"^\s*(disabled|switched off|off by configuration|ablat)|\bis off\b", re.I)
_IDLE = re.compile(r"^\s*idle\b", re.I)


def outcome_of(stage: str, reason: str | None) -> str | None:
    """The stage outcome of one event (None for `eligible`, which only opens an occasion)."""
    reason = reason or ""
    match stage:
        case "output" | "selected" | "in_prompt":
            return "produced"
        case "reported_in_prompt":
            return "reported"
        case "error":
            return "error"
        case "executed":
            return "idle" if _IDLE.search(reason) else "ran"
        case "skipped" | "ineligible":
            if _DISABLED.search(reason):
                return "disabled"
            if _IDLE.search(reason):
                return "idle"
            return "not_eligible" if stage == "ineligible" else "skipped"
    return None


@dataclass
class Tally:
    """Everything the verdict needs about one (condition, mechanism)."""

    stages: Counter = field(default_factory=Counter)
    """Raw stage counts."""
    outcomes: Counter = field(default_factory=Counter)
    """Stage-outcome counts (see OUTCOMES)."""
    reasons: dict[str, Counter] = field(default_factory=dict)
    """Outcome → reason → count, for the evidence line."""

    def add(self, stage: str, reason: str | None) -> None:
        self.stages[stage] += 1
        out = outcome_of(stage, reason)
        if out is not None:
            self.outcomes[out] += 1
            if reason:
                self.reasons.setdefault(out, Counter())[reason] += 1

    def top_reason(self, outcome: str) -> str:
        reasons = self.reasons.get(outcome)
        return reasons.most_common(1)[0][0] if reasons else ""


def tally_events(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], Tally]:
    """Tallies per (condition, mechanism); each event row needs condition, mechanism, stage, reason."""
    out: dict[tuple[str, str], Tally] = {}
    for ev in events:
        out.setdefault((ev["condition"], ev["mechanism"]), Tally()).add(ev["stage"], ev.get("reason"))
    return out


@dataclass(frozen=True)
class Verdict:
    verdict: str
    """One of VERDICTS, before any ablation contrast (`exercised` may become contributing)."""
    evidence: str
    """A short reason a reader can check against the stage counts."""


def judge(t: Tally, applicable: Sequence[str], *, switched_off: bool) -> Verdict:
    """The verdict of one mechanism in one condition from its tally (ablation handled later)."""
    s, o = t.stages, t.outcomes
    ran = o["ran"] + o["error"]
    produced = s["output"] + s["selected"] + s["in_prompt"]
    if switched_off:
        if ran or produced:
            return Verdict("defective", f"switched off by the condition, yet ran {ran} time(s) "
                                        f"and produced {produced} stage event(s)")
        return Verdict("disabled", "switched off by the condition (ablation)")
    if o["error"]:
        return Verdict("defective", f"ran and failed {o['error']} time(s): {t.top_reason('error')}")
    if not ran and not produced:
        if s["eligible"] and "executed" in applicable and not (o["idle"] or o["skipped"] or o["disabled"]):
            return Verdict("defective", f"eligible {s['eligible']} time(s), never ran, no reason given")
        if o["idle"] or o["skipped"]:
            why = t.top_reason("idle") or t.top_reason("skipped")
            return Verdict("idle", f"nothing to do ({why})" if why else "nothing to do")
        if o["disabled"]:
            return Verdict("disabled", f"switched off by configuration ({t.top_reason('disabled')})")
        why = t.top_reason("not_eligible")
        return Verdict("never_exercised", f"never eligible ({why})" if why else "no event in the run: no input or scheduled step engaged it")
    if "output" in applicable and not produced:
        idle = f"; {o['idle']} idle" if o["idle"] else ""
        return Verdict("defective", f"ran {o['ran']} time(s) with input, never produced output{idle}")
    if "in_prompt" in applicable and "selected" in applicable and s["selected"] and not s["in_prompt"]:
        return Verdict("defective", f"selected {s['selected']} time(s), never reached the prompt")
    if s["in_prompt"]:
        return Verdict("exercised", f"reached the prompt {s['in_prompt']} time(s)")
    if s["selected"]:
        return Verdict("exercised", f"selected {s['selected']} time(s); the prompt stage does not apply")
    if s["output"]:
        return Verdict("exercised", f"produced output {s['output']} time(s)")
    idle = f" ({o['idle']} idle)" if o["idle"] else ""
    return Verdict("exercised", f"ran {o['ran']} time(s){idle}")


def applicable_stages(spec: Mapping[str, Any], mechanism: str) -> tuple[str, ...]:
    """A condition's declared applicable stages for a mechanism (manifest `mechanism_stages`)."""
    declared = (spec.get("mechanism_stages") or {}).get(mechanism)
    return tuple(declared) if declared else DEFAULT_STAGES
