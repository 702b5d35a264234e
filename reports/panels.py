"""Diagnostics panels: per-system figures computed from the stored fidelity events alone.

Each panel is a function `panel(view: PanelView) -> tuple[Block, ...]` for one condition. The
generic panel runs for every condition; a system panel runs for conditions of its system:

- built in: `thalia`, `ice`, `exia-seed` (below);
- a third-party adapter adds one through the entry-point group `lsrep.panels` (name = the
  system's registry name, value = `"module:function"`), or at run time with `register_panel`.

A panel reads only `PanelView` (the condition's events with parsed `params` and
`source_turn_ids`, its observations and its manifest entry), so every figure traces back to
stored rows; see docs/fidelity.md.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib.metadata import entry_points
from typing import Any

from lsrep.reports import exia_defects
from lsrep.reports.common import Context
from lsrep.reports.haystack import Haystack
from lsrep.reports.tree import Callout, Column, Table

Block = Table | Callout
Panel = Callable[["PanelView"], tuple[Block, ...]]
ENTRY_POINT_GROUP = "lsrep.panels"
TOKEN_PANELS = frozenset({"ice", "thalia"})
"""Systems whose panel reads harness-counted fragment tokens (loaded only for them)."""
REPLAY = "replay"
"""Checkpoint label of events outside a checkpoint (ingest, session ends, maintenance)."""


@dataclass(frozen=True)
class PanelView:
    """What a panel may read: one condition's stored rows."""

    condition: str
    system: str
    spec: dict[str, Any]
    """The condition's manifest entry (system, options, disable, mechanisms...)."""
    events: tuple[dict[str, Any], ...]
    """Its fidelity events in stored order, `params` and `source_turn_ids` parsed."""
    observations: tuple[dict[str, Any], ...]
    maintenance: tuple[dict[str, Any], ...] = ()
    """Its scheduled maintenance rows (operation, sim_time, status), in stored order."""
    prompt_tokens: tuple[tuple[str, int], ...] = ()
    """(mechanism, harness-counted tokens) for every prompt fragment naming that mechanism."""
    turns: tuple[dict[str, Any], ...] = ()
    """Every stored trajectory turn of the run (trajectory, idx, turn_id, content, ...)."""

    def of(self, mechanism: str, stage: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events if e["mechanism"] == mechanism and (stage is None or e["stage"] == stage)]

    @cached_property
    def checkpoints(self) -> list[Any]:
        seen = sorted({e["checkpoint"] for e in self.events if e["checkpoint"] is not None})
        return seen + ([REPLAY] if any(e["checkpoint"] is None for e in self.events) else [])

    def by_probe(self, mechanisms: Iterable[str], stages: Iterable[str]) -> dict[tuple, set[str]]:
        """(unit, checkpoint, probe) → source turns named by these mechanisms' events at these stages."""
        mechs, sts = set(mechanisms), set(stages)
        out: dict[tuple, set[str]] = defaultdict(set)
        for e in self.events:
            if e["mechanism"] in mechs and e["stage"] in sts and e["probe_id"] is not None:
                out[(e["unit_id"], e["checkpoint"], e["probe_id"])].update(e["source_turn_ids"])
        return out


_REGISTERED: dict[str, Panel] = {}


def register_panel(system: str, panel: Panel) -> None:
    """Add (or replace) the diagnostics panel of a system, by its registry name."""
    _REGISTERED[system] = panel


def panel_for(system: str) -> Panel | None:
    if system in _REGISTERED:
        return _REGISTERED[system]
    if system in BUILTIN:
        return BUILTIN[system]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == system:
            return ep.load()
    return None


def views(ctx: Context) -> list[PanelView]:
    data = ctx.data
    conditions = data.manifest.get("conditions", {})
    events: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in data.events:
        events[e["condition"]].append({**e, "params": _loads(e.get("params"), "{}"),
                                       "source_turn_ids": _loads(e.get("source_turn_ids"), "[]")})
    obs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for o in data.observations:
        obs[o["condition"]].append(o)
    maint: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in data.maintenance:
        maint[m["condition"]].append(m)
    tokens: dict[str, list[tuple[str, int]]] = defaultdict(list)
    turns = tuple(data.turns.values())
    wanted = [c for c in ctx.conditions if conditions.get(c, {}).get("system") in TOKEN_PANELS]
    if ctx.store is not None and wanted:
        marks = ",".join("?" * len(wanted))
        for f in ctx.store.rows(
                "select o.condition, f.mechanisms, f.tokens from fragments f join observations o "
                f"on o.obs_id = f.obs_id where o.run_id = ? and o.condition in ({marks}) "
                "order by f.obs_id, f.rank", [data.run["run_id"], *wanted]):
            for mech in _names(f["mechanisms"] or "[]"):
                tokens[f["condition"]].append((mech, f["tokens"] or 0))
    return [PanelView(c, str(conditions.get(c, {}).get("system", "")), conditions.get(c, {}),
                      tuple(events.get(c, ())), tuple(obs.get(c, ())), tuple(maint.get(c, ())),
                      tuple(tokens.get(c, ())), turns) for c in ctx.conditions]


def _loads(text: Any, empty: str) -> Any:
    if text is None or text == "" or text == empty:
        return json.loads(empty)
    return json.loads(text) if isinstance(text, str) else text


@lru_cache(maxsize=4096)
def _names(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


def diagnostics(ctx: Context) -> tuple[Block, ...]:
    """The generic panel for every condition, then each condition's system panel."""
    vs = views(ctx)
    blocks: list[Block] = [generic_panel(vs)]
    for v in vs:
        panel = panel_for(v.system)
        if panel is not None and v.events:
            blocks.extend(panel(v))
    return tuple(blocks)


# -- generic --------------------------------------------------------------------------------------
def generic_panel(vs: list[PanelView]) -> Table:
    """Per mechanism, per checkpoint: executed / output / in-prompt event counts."""
    rows = []
    cps = sorted({c for v in vs for c in v.checkpoints if c != REPLAY})
    shown = cps[:12]
    for v in vs:
        tally: dict[str, Counter] = defaultdict(Counter)
        for e in v.events:
            cp = e["checkpoint"] if e["checkpoint"] is not None else REPLAY
            tally[e["mechanism"]][(cp, e["stage"])] += 1
        for mech in sorted(tally):
            t = tally[mech]
            row: dict[str, Any] = {"condition": v.condition, "mechanism": mech}
            for cp in [*shown, REPLAY]:
                row[f"cp{cp}"] = f"{t[(cp, 'executed')]}/{t[(cp, 'output')]}/{t[(cp, 'in_prompt')]}"
            rows.append(row)
    columns = (Column("condition", "Condition", "condition"), Column("mechanism", "Mechanism", "code"),
               *(Column(f"cp{cp}", f"Checkpoint {cp}", "text") for cp in shown),
               Column(f"cp{REPLAY}", "Replay", "text", "ingest, session ends, maintenance"))
    notes = ("Each cell: executed / output / in-prompt events of the mechanism at that checkpoint's probes "
             "(in-prompt from the harness assembler).",)
    if len(cps) > len(shown):
        notes += (f"Only the first {len(shown)} of {len(cps)} checkpoints are shown.",)
    caption = ("Diagnostics: stage counts per mechanism over checkpoints" if len(cps) > 1
               else "Diagnostics: stage counts per mechanism")
    return Table(columns, tuple(rows), caption=caption, notes=notes, empty="No fidelity events were recorded.")


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


# -- THALIA -----------------------------------------------------------------------------------------
THALIA_INSPECTOR = ("thalia.inspector.grep", "thalia.inspector.fallback_order", "thalia.inspector.fallback_overlap",
                    "thalia.recall.fts")
THALIA_RANKING = ("thalia.retriever.lexical", "thalia.retriever.semantic")


def thalia_panel(v: PanelView) -> tuple[Block, ...]:
    """Evidence recall along the funnel (Inspector → ranking → prompt), the candidate funnel, and
    how often the adaptive window and the fallbacks fired, per checkpoint."""
    inspector = v.by_probe(THALIA_INSPECTOR, ("output", "selected"))
    ranking = v.by_probe(THALIA_RANKING, ("output",))
    prompt = v.by_probe([e["mechanism"] for e in v.events], ("in_prompt",))
    by_traj: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in v.turns:
        by_traj[t["trajectory"]].append(t)
    stacks = {traj: Haystack(rows) for traj, rows in by_traj.items()}
    recall_rows = []
    for cp in [c for c in v.checkpoints if c != REPLAY]:
        n = hit_h = hit_i = hit_r = hit_p = 0
        for o in v.observations:
            evidence = set(json.loads(o["evidence_ids"] or "[]"))
            if o["checkpoint"] != cp or not evidence:
                continue
            key = (o["unit_id"], cp, o["probe_id"])
            n += 1
            stack = stacks.get(o["trajectory"])
            hit_h += bool(stack and evidence & set(stack.top(o["question"], o["prefix_len"], 10)))
            hit_i += bool(evidence & inspector.get(key, set()))
            hit_r += bool(evidence & ranking.get(key, set()))
            hit_p += bool(evidence & prompt.get(key, set()))
        recall_rows.append({"checkpoint": cp, "probes": n, "haystack": _share(hit_h, n),
                            "inspector": _share(hit_i, n), "ranking": _share(hit_r, n),
                            "prompt": _share(hit_p, n)})
    funnel: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for e in v.of("thalia.reasoner.citations", "selected"):
        if "funnel" in e["params"]:
            funnel[e["checkpoint"]].append(e["params"]["funnel"])
    trig: dict[Any, Counter] = defaultdict(Counter)
    for e in v.events:
        if e["stage"] == "executed" and e["mechanism"] in (
                "thalia.inspector.adaptive_windows", "thalia.inspector.fallback_order",
                "thalia.inspector.fallback_overlap", "thalia.inspector.partition"):
            trig[e["checkpoint"]][e["mechanism"].rsplit(".", 1)[1]] += 1
    queries = Counter(e["checkpoint"] for e in v.of("thalia.inspector.peek", "executed"))
    keys = ("raw_lines", "inspector_windows", "recalled", "ranked", "inline", "cited")
    funnel_rows = []
    for cp in sorted(set(funnel) | set(queries), key=lambda c: (0, c, "") if isinstance(c, int) else (1, 0, str(c))):
        items = funnel.get(cp, [])
        row: dict[str, Any] = {"checkpoint": cp, "queries": queries.get(cp, 0)}
        row.update({k: _median([f[k] for f in items if k in f]) for k in keys})
        # The prompt count (windows the Reasoner read, after ReAct integrate) is in funnels since it was recorded.
        told = [f for f in items if "prompt" in f]
        row["prompt_windows"] = sum(f["prompt"] for f in told) if told else None
        row["cited_windows"] = sum(f["cited"] for f in told) if told else None
        row["cited_share"] = _share(row["cited_windows"] or 0, row["prompt_windows"] or 0)
        row["narrowed"] = sum(f["prompt"] < f["inline"] for f in told) if told else None
        row["dropped"] = sum(f["inline"] - f["prompt"] for f in told) if told else None
        row.update({k: trig[cp][k] for k in ("adaptive_windows", "fallback_order", "fallback_overlap", "partition")})
        funnel_rows.append(row)
    return (
        Table((Column("checkpoint", "Checkpoint", "int"), Column("probes", "Probes with evidence", "int"),
               Column("haystack", "Ranking recall (full haystack)", "rate",
                      "harness BM25 hit@10 over every turn before the checkpoint"),
               Column("inspector", "Inspector recall", "rate", "evidence among the Inspector's windows"),
               Column("ranking", "Lane recall", "rate", "evidence among the lanes' ranked lists"),
               Column("prompt", "Prompt recall", "rate", "evidence among prompt fragments")),
              tuple(recall_rows), caption=f"THALIA ({v.condition}): where evidence is lost",
              notes=("Share of probes (with evidence turns) whose evidence appears at each step; from the "
                     "source turns of `inspector.*`/`recall.fts` output, `retriever.lexical/semantic` output "
                     "and the harness's `in_prompt` events. Full-haystack ranking recall is the harness's own "
                     "BM25 (k1 1.5, b 0.75) over the stored turns before the checkpoint, top 10 (seed-systems "
                     "T-1: Inspector recall below it means the Inspector discards evidence before ranking).",)),
        Table((Column("checkpoint", "Checkpoint", "text"), Column("queries", "Queries", "int"),
               *(Column(k, k.replace("_", " ").capitalize(), "number", "median") for k in keys)),
              tuple(funnel_rows), caption=f"THALIA ({v.condition}): candidate funnel",
              notes=("Funnel medians from `reasoner.citations` (params.funnel).",)),
        Table((Column("checkpoint", "Checkpoint", "text"), Column("queries", "Queries", "int"),
               Column("prompt_windows", "Prompt windows", "int", "windows the Reasoner read, after ReAct integrate"),
               Column("cited_windows", "Cited", "int"),
               Column("cited_share", "Cited share", "rate", "cited / prompt windows"),
               Column("narrowed", "Integrate narrowed", "int", "queries whose ReAct integrate dropped windows"),
               Column("dropped", "Windows dropped", "int", "inline windows integrate left out of the prompt")),
              tuple(funnel_rows), caption=f"THALIA ({v.condition}): citations and integrate",
              notes=("Totals over each checkpoint's queries, from `reasoner.citations` (params.funnel). A window "
                     "is cited only if it shares a said word with the answer (rendering prefixes excluded), so a "
                     "share below 100% means some prompt windows were not cited.",)),
        Table((Column("checkpoint", "Checkpoint", "text"),
               Column("adaptive_windows", "Adaptive window", "int", "times it widened"),
               Column("fallback_order", "Fallback: order", "int"),
               Column("fallback_overlap", "Fallback: overlap", "int"),
               Column("partition", "Partition", "int", "times it filtered")),
              tuple(funnel_rows), caption=f"THALIA ({v.condition}): Inspector triggers",
              notes=("Triggers count `executed` events of each Inspector mechanism.",)),
        thalia_bullets_table(v),
    )


def thalia_bullets_table(v: PanelView) -> Table:
    """The Memory Gate's dual key on the replayed turns, and what its MEMORY.md bullets cost in the
    answer context (harness-counted fragment tokens), for the bullets ablation."""
    criteria = [e for e in v.of("thalia.gate.criteria", "executed") if e["params"].get("trigger") == "turn"]
    done = v.of("thalia.gate.consolidate", "executed")
    with_bullets = {(e["unit_id"], e["checkpoint"], e["probe_id"])
                    for e in v.of("thalia.gate.consolidate", "in_prompt") if e["probe_id"] is not None}
    bullet_tokens = sum(n for mech, n in v.prompt_tokens if mech == "thalia.memory.snapshot")
    context = sum(o["context_tokens"] or 0 for o in v.observations)
    held = sum(o["context_tokens"] or 0 for o in v.observations
               if (o["unit_id"], o["checkpoint"], o["probe_id"]) in with_bullets)
    row = {"turns": len(criteria), "r_n": sum(bool(e["params"].get("r_N")) for e in criteria),
           "passed": len(v.of("thalia.gate.consolidate", "eligible")),
           "appended": sum(e["params"].get("action") == "append_memory" for e in done),
           "updated": sum(e["params"].get("action") == "update_memory" for e in done),
           "ablated": sum("ablated" in (e["reason"] or "") for e in v.of("thalia.gate.consolidate", "skipped")),
           "observations": len(v.observations), "with_bullets": len(with_bullets),
           "bullet_tokens": bullet_tokens / len(with_bullets) if with_bullets else None,
           "share_all": bullet_tokens / context if context else None,
           "share_held": bullet_tokens / held if held else None}
    return Table(
        (Column("turns", "Turns", "int"), Column("r_n", "r_N", "int"), Column("passed", "Dual key", "int"),
         Column("appended", "Appended", "int"), Column("updated", "Updated", "int"),
         Column("ablated", "Ablated", "int"), Column("observations", "Obs.", "int"),
         Column("with_bullets", "With bullets", "int"), Column("bullet_tokens", "Bullet tokens", "number"),
         Column("share_all", "Token share", "rate"), Column("share_held", "Share where present", "rate")),
        (row,), caption=f"THALIA ({v.condition}): Memory Gate and MEMORY.md bullets",
        notes=("Turns: user turns through the gate; r_N: those the knowledge-update/memory-request rule "
               "flagged; Dual key: r_N and a criterion held (at the turn or its session end); Appended / "
               "Updated: `append_memory` / `update_memory` consolidations; Ablated: consolidations the "
               "condition switched off. Obs.: observations; With bullets: those whose prompt held MEMORY.md "
               "bullets; Bullet tokens: harness-counted tokens of the `thalia.memory.snapshot` fragments per "
               "observation with bullets; Token share: bullet tokens / context tokens over every observation; "
               "Share where present: over the observations with bullets.",
               "Compare with the condition that switches `thalia.gate.consolidate` off for the bullets' effect.",))


# -- ICE --------------------------------------------------------------------------------------------
ICE_LEGS = ("episodic_vector", "episodic_lexical", "graph", "procedural", "document", "summary")


def ice_panel(v: PanelView) -> tuple[Block, ...]:
    """Budget binding rate and tokens per phase, per-leg yield and prompt tokens, worker runs."""
    p1, p2 = v.of("ice.budget.phase1", "executed"), v.of("ice.budget.phase2", "executed")
    bound = sum(1 for e in p2 if (e["params"].get("skipped_not_fitting") or 0) > 0)
    budget_rows = [{"phase": name, "runs": len(evs),
                    "bound": (_share(bound, len(evs)) if name == "phase 2" else None),
                    "b_mem": _median([e["params"]["b_mem"] for e in evs if "b_mem" in e["params"]]),
                    "tokens": _median([e["params"]["tokens_used"] for e in evs if "tokens_used" in e["params"]])}
                   for name, evs in (("phase 1", p1), ("phase 2", p2))]
    leg_tokens: Counter = Counter()
    for mech, n in v.prompt_tokens:
        leg_tokens[mech] += n
    n_obs = len(v.observations)
    leg_rows = []
    for leg in ICE_LEGS:
        name = f"ice.leg.{leg}"
        c = Counter(e["stage"] for e in v.of(name))
        idle = sum(1 for e in v.of(name, "executed") if (e["reason"] or "").startswith("idle"))
        leg_rows.append({"leg": name, "eligible": c["eligible"], "executed": c["executed"], "idle": idle,
                         "output": c["output"], "selected": c["selected"], "in_prompt": c["in_prompt"],
                         "yield": _share(c["in_prompt"], c["executed"]),
                         "candidates": sum(e["count"] or 0 for e in v.of(name, "output")),
                         "tokens": leg_tokens[name] / n_obs if n_obs else None})
    workers: dict[str, Counter] = defaultdict(Counter)
    for e in v.events:
        if e["mechanism"].startswith(("ice.worker.", "ice.extract.")) and e["stage"] in ("executed", "output"):
            workers[e["mechanism"]][(e["step"] or "").split(":")[0] + ":" + e["stage"]] += 1
    worker_rows = [{"worker": w, "maintenance_runs": c["maintenance:executed"],
                    "maintenance_output": c["maintenance:output"],
                    "ingest_runs": c["ingest:executed"], "ingest_output": c["ingest:output"]}
                   for w, c in sorted(workers.items())]
    blocks = (
        Table((Column("phase", "Budget phase", "text"), Column("runs", "Runs", "int"),
               Column("bound", "Binding rate", "rate", "share of runs that skipped a fragment for not fitting"),
               Column("b_mem", "B_mem", "tokens", "median"), Column("tokens", "Tokens used", "tokens", "median")),
              tuple(budget_rows), caption=f"ICE ({v.condition}): memory budget",
              notes=("From `budget.phase1/phase2` executed events (params b_mem, tokens_used, "
                     "skipped_not_fitting).",)),
        Table((Column("leg", "Leg", "code"), Column("eligible", "Eligible", "int"),
               Column("executed", "Executed", "int"), Column("idle", "Idle", "int", "ran, nothing matched"),
               Column("output", "Output", "int"), Column("candidates", "Candidates", "int", "sum over runs"),
               Column("selected", "Packed", "int"), Column("in_prompt", "In prompt", "int"),
               Column("yield", "Yield", "rate", "in prompt / executed"),
               Column("tokens", "Prompt tokens / obs.", "number", "harness-counted")),
              tuple(leg_rows), caption=f"ICE ({v.condition}): per-leg yield",
              notes=("Counts of `ice.leg.*` events; in prompt from the harness assembler. Prompt tokens: the "
                     "harness's count of every prompt fragment the leg produced (a fragment two legs produced "
                     "counts for both), per observation.",)),
        Table((Column("n", "#", "int"), Column("operation", "Maintenance", "code"),
               Column("sim_time", "Simulated time", "text"), Column("status", "Status", "text"),
               Column("mean_strength", "Mean strength after decay", "number")),
              tuple(_ice_clock(v)), caption=f"ICE ({v.condition}): scheduled workers on the simulated clock",
              notes=("Maintenance rows of the first trajectory in schedule order; mean strength from the "
                     "matching `worker.decay` output event (params.mean_strength).",),
              empty="No maintenance was scheduled."),
        Table((Column("worker", "Worker", "code"), Column("maintenance_runs", "Runs at maintenance", "int"),
               Column("maintenance_output", "Output at maintenance", "int"),
               Column("ingest_runs", "Runs at ingest", "int"), Column("ingest_output", "Output at ingest", "int")),
              tuple(worker_rows), caption=f"ICE ({v.condition}): workers on the simulated clock",
              notes=("Executed / output events of `ice.worker.*` and `ice.extract.*` by the replay step that "
                     "ran them (scheduled maintenance vs post-flight at ingest).",),
              empty="No worker or extraction ran."),
    )
    # A table with nothing to show (e.g. no maintenance in a one-checkpoint diagnostic) is left out.
    return tuple(t for t in blocks if t.rows)


def _ice_clock(v: PanelView) -> list[dict[str, Any]]:
    if not v.maintenance:
        return []
    unit = v.maintenance[0]["unit_id"]
    decays = iter(e["params"].get("mean_strength") for e in v.events
                  if e["unit_id"] == unit and e["mechanism"] == "ice.worker.decay" and e["stage"] == "output")
    rows = []
    for n, m in enumerate((m for m in v.maintenance if m["unit_id"] == unit), start=1):
        decayed = m["status"] == "ok" and m["operation"] in ("decay", "nightly")
        rows.append({"n": n, "operation": m["operation"], "sim_time": m["sim_time"], "status": m["status"],
                     "mean_strength": next(decays, None) if decayed else None})
    return rows


# -- EXIA SEED --------------------------------------------------------------------------------------
def exia_panel(v: PanelView) -> tuple[Block, ...]:
    """Recall latency per phase, admission and forget decisions, nightly effects, seed defects E-1…E-21."""
    phase = 2 if int((v.spec.get("options") or {}).get("phase", 1)) >= 2 else 1
    pre = [e["params"] for e in v.of("exia.host.prefetch", "executed")]
    secs = [p["simulated_seconds"] for p in pre if "simulated_seconds" in p]
    over = sum(1 for p in pre if p.get("simulated_seconds", 0) > p.get("timeout_s", float("inf")))
    ms = [o["query_ms"] for o in v.observations if o.get("query_ms") is not None]
    budget = [e["params"] for e in v.of(f"exia.recall.phase{phase}", "executed")]
    latency = ({"phase": phase, "queries": len(pre), "median_s": _median(secs), "max_s": max(secs) if secs else None,
                "timeouts": over, "median_ms": _median(ms)},)
    accepted = sum(e["params"].get("accepted", 0) for e in v.of("exia.checker", "executed"))
    rejected = Counter(r if isinstance(r, str) else json.dumps(r, sort_keys=True)
                       for e in v.of("exia.checker", "executed") for r in e["params"].get("rejected", []))
    retention = Counter(e["stage"] for e in v.of("exia.ingest.retention"))
    busy = sum(1 for e in v.of("exia.consolidate.trigger") if "busy" in (e["reason"] or ""))
    decisions = (
        {"decision": "facts admitted (checker)", "count": accepted},
        {"decision": "facts rejected (checker)", "count": sum(rejected.values())},
        {"decision": "forget / retention commands", "count": retention["executed"] + retention["output"]},
        {"decision": "consolidation triggers dropped while busy", "count": busy},
        {"decision": "pages written", "count": sum(len(e["params"].get("pages", []))
                                                   for e in v.of("exia.consolidate.write", "output"))},
        {"decision": f"phase-{phase} recall blocks", "count": len(budget)},
    )
    nightly: dict[str, Counter] = defaultdict(Counter)
    for e in v.events:
        step = e["step"] or ""
        if step.startswith("maintenance:"):
            nightly[(step.split(":", 1)[1], e["mechanism"])][e["stage"]] += 1
    nightly_rows = [{"operation": op, "mechanism": m, "executed": c["executed"], "output": c["output"],
                     "skipped": c["skipped"] + c["ineligible"]} for (op, m), c in sorted(nightly.items())]
    return (
        Table((Column("phase", "Recall phase", "int"), Column("queries", "Prefetches", "int"),
               Column("median_s", "Median simulated s", "number"), Column("max_s", "Max simulated s", "number"),
               Column("timeouts", "Over the host timeout", "int"), Column("median_ms", "Median query ms", "ms")),
              latency, caption=f"EXIA SEED ({v.condition}): recall latency",
              notes=("Simulated seconds from `host.prefetch` (params.simulated_seconds vs timeout_s); query "
                     "ms from the harness's timing of each observation.",)),
        Table((Column("decision", "Decision", "text"), Column("count", "Count", "int")), decisions,
              caption=f"EXIA SEED ({v.condition}): admission and forget decisions",
              notes=("From `checker` (params accepted/rejected), `ingest.retention`, `consolidate.trigger` "
                     "reasons and `consolidate.write` (params.pages).",)),
        Table((Column("operation", "Maintenance", "code"), Column("mechanism", "Mechanism", "code"),
               Column("executed", "Executed", "int"), Column("output", "Output", "int"),
               Column("skipped", "Skipped / ineligible", "int")), tuple(nightly_rows),
              caption=f"EXIA SEED ({v.condition}): effects of scheduled jobs",
              notes=("Events recorded during each scheduled maintenance step.",),
              empty="No maintenance step ran."),
        Table((Column("defect", "Seed defect", "text"), Column("flag", "Repair flag", "code"),
               Column("state", "In this condition", "text"), Column("observed", "Observed in this run", "text")),
              tuple(exia_defects.defect_rows(v)), caption=f"EXIA SEED ({v.condition}): seed defects E-1…E-21",
              notes=exia_defects.definitions()),
    )


BUILTIN: dict[str, Panel] = {"thalia": thalia_panel, "ice": ice_panel, "exia-seed": exia_panel}
