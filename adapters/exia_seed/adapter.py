"""`ExiaSeedAdapter`: EXIA SEED (systems.exia_seed) inside a Hermes-style host, for the harness.

Turn mapping (the harness gives one speaker per turn; Hermes syncs user/assistant pairs):

- a `user` turn is buffered until the next turn;
- an `assistant` turn is synced with the buffered user turn (or alone, if none is buffered);
- a turn of any other role is treated as a user turn;
- every turn with a speaker name reaches the provider as `"[<name>] <text>"`, the way the Hermes
  gateway renders a message in a shared multi-user session (`gateway/run.py`: `[{user_name}] `), so
  LoCoMo's two people stay apart in the raw lines, the pages and the recalled facts. Hermes does
  not prefix its own replies; a named assistant turn is prefixed too so its speaker is kept;
- a buffered user turn with no reply is synced alone when the next user turn arrives, at a
  session end and before maintenance; it is not flushed before a query (the host would not
  have completed that turn yet, and an unconsolidated line cannot be recalled anyway).

Each line keeps its own turn timestamp and its turn id, so every recalled fact traces back to
the turns it cites. The trajectory's session boundary calls `on_session_end`, which closes the
open batch.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from lsrep.systems.exia_seed import ExiaSeedProvider, Fixes, Settings, StageEvent
from lsrep.systems.exia_seed.rules import RulesModel
from pydantic import BaseModel, ConfigDict

from lsrep.contract import (
    AdapterSetup,
    DirectorySnapshot,
    Fragment,
    MechanismSpec,
    MemoryAdapter,
    QueryResult,
    ReplayTurn,
    digest_directory,
)

from .host import HermesHost
from .memory_chat import MemoryChat

SEARCH_TOOL, READ_TOOL, NOTE_TOOL = "memoire_chercher", "memoire_lire", "memoire_noter"
NOTE_REQUEST = re.compile(
    r"\b(?:please|could you|can you|would you|will you)\s+(?:remember|note(?: down)?|make a note|keep in mind|"
    r"save|store)\b(?!\s+to\b)|\bmake a note (?:of|that)\b|\bnote (?:this|that|it) down\b|\bfor future reference\b",
    re.IGNORECASE,
)
"""A request addressed to the assistant to keep something, not advice to the other person:
"remember to take breaks" and "I remember that trip" do not match (none of LoCoMo's 3,944
turns does: tests/systems/exia_seed/test_exia_adapter_notes.py)."""
_NOTE_LEAD = re.compile(r"^\s*(?:(?:that|this|it|of (?:this|that|it))\b)?\s*(?:down\b)?\s*[:,\-\u2013]?\s*", re.IGNORECASE)


class Options(BaseModel):
    """EXIA SEED options. `fix_<name>` is the provider's `fix.<name>` repair flag (all off = the seed)."""

    model_config = ConfigDict(extra="forbid")

    consolidator: Literal["auto", "standin", "rules", "llm"] = "auto"
    """Who proposes facts to the consolidator: `standin` (the seed's offline rule extractor),
    `rules` (the deterministic rules consolidator, systems/exia_seed/rules.py), `llm` (the
    condition's `[memory_llm]`, through the seed's prompts), or `auto`: `llm` when the condition
    has a `[memory_llm]`, else the harness model if one is given, else `standin`."""
    phase: Literal[1, 2] = 1
    """Automatic recall phase (SEED default 1: recall is journaled, not injected)."""
    tools: Literal["off", "auto-search", "auto-read"] = "auto-search"
    """Offline stand-in for the host model's tool use: search with the question, read the top subject, or none."""
    language: Literal["en", "fr"] = "en"
    recall_budget_tokens: int | None = None
    """Generic recall ceiling; None = the campaign's retrieval budget if set, else the seed's 1,200."""
    facts_per_subject: int = 3
    fcm_iterations: int = 3
    activation_threshold: float = 0.2
    priming_minutes: float = 10.0
    priming_bonus: float = 0.3
    batch_max_lines: int = 400
    batch_max_chars: int = 60_000
    consolidation_budget_chars: int = 24_000
    summary_excerpt_chars: int = 2_000
    checker_min_overlap: float = 0.5
    checker_min_roots: int = 2
    search_pool: int = 50
    search_limit: int = 10
    auto_consolidate: bool = True
    busy_minutes: float = 0.0
    no_agent_speaker: bool = False
    """LoCoMo mode: no speaker counts as the agent."""
    host_prefetch_timeout_s: float = 8.0
    host_seconds_per_work_unit: float = 1e-4
    """Simulated latency of one unit of recall work (the host's timeout model)."""
    host_redaction: bool = True
    agent_context: Literal["primary", "subagent", "cron", "flush"] = "primary"
    """The Hermes `agent_context` the host initializes the provider with. Only `primary` captures
    the conversation; the others (a delegated subagent, a cron job, a flush) see the same turns
    but write nothing from them, while their tools, the note tool included, stay available (E-1)."""
    notes: Literal["off", "on-request"] = "off"
    """Offline stand-in for the host model's use of the note tool: `on-request` calls
    `memoire_noter` with a user turn that asks for something to be remembered (`NOTE_REQUEST`:
    "please remember that ...", "can you note ...", "make a note of ..."), `off` never does."""
    fix_primary_only_notes: bool = False
    fix_phase2_ceiling: bool = False
    fix_trail_date_filter: bool = False
    fix_search_expiry_filter: bool = False
    fix_strict_citations: bool = False
    fix_journal_only_admitted: bool = False
    fix_cache_key_pages: bool = False
    fix_queue_when_busy: bool = False
    fix_enforce_privacy: bool = False
    fix_summary_lock: bool = False


_TO_PROMPT = ("eligible", "executed", "output", "in_prompt")
_STAGES: dict[str, tuple[str, ...]] = {
    "recall.phase2": _TO_PROMPT, "tool.search": _TO_PROMPT, "tool.read": _TO_PROMPT,
    "consolidate": ("eligible", "executed", "in_prompt"), "summaries": ("eligible", "executed", "in_prompt"),
    "recall.graph": ("eligible", "executed", "in_prompt"),
}
"""Stages each mechanism is expected to reach when it has work (the rest: eligible, executed)."""

CREDITED: frozenset[str] = frozenset({
    "exia.recall.phase2", "exia.tool.search", "exia.tool.read", "exia.consolidate", "exia.summaries",
    "exia.recall.graph",
})
"""Mechanisms that produce what a fragment shows (the block or tool reply that carries it, the
consolidation that wrote the fact, the summary writer, the graph activation that reached the
node). The cache, the checker and priming only pass facts through or reorder them."""

# EXIA's reasons for not running, in the audit's vocabulary (docs/fidelity.md).
_REASONS: dict[str, str] = {"rien en attente": "idle", "aucune arête": "idle"}


def _m(name: str, description: str, can_disable: bool = False) -> MechanismSpec:
    return MechanismSpec(name=f"exia.{name}", description=description, can_disable=can_disable,
                         stages=_STAGES.get(name))


MECHANISMS: tuple[MechanismSpec, ...] = (
    _m("ingest.gate", "primary-context gate on conversation capture"),
    _m("ingest.mask", "secret masking of captured text"),
    _m("ingest.retention", "omit-current and withdraw-previous commands"),
    _m("batch.close", "batch closure with a digest chain (day, volume, session, reset, forced)"),
    _m("consolidate", "LLM-assisted, code-controlled consolidation into subject pages", True),
    _m("consolidate.trigger", "automatic consolidation after closure, dropped when busy"),
    _m("consolidate.select", "pending batches and notes chosen within the character budget"),
    _m("consolidate.llm", "model proposal, parsed or salvaged"),
    _m("checker", "lexical citation checker on proposed facts", True),
    _m("consolidate.alias", "alias resolution to canonical pages"),
    _m("consolidate.write", "page writes with source-level dedupe and hash chain"),
    _m("consolidate.journal", "input journals advanced after a parsed response"),
    _m("consolidate.git", "best-effort Git commit (not implemented here)"),
    _m("summaries", "identity summaries under summary controls", True),
    _m("recall.cache", "shared recall cache keyed on the graph file's mtime", True),
    _m("recall.activate", "activation seeds from names and FTS5 coverage"),
    _m("recall.priming", "bonus for subjects of the previous recall", True),
    _m("recall.graph", "FCM spreading activation along graph edges", True),
    _m("recall.filter_future", "automatic recall drops future-dated facts", True),
    _m("recall.filter_expired", "automatic recall drops expired prospective facts", True),
    _m("recall.budget", "per-subject cap and estimated-token budget", True),
    _m("recall.phase1", "phase-1 recall: computed and journaled, returns nothing", True),
    _m("recall.phase2", "phase-2 recall block (summaries, procedural first, pointers)", True),
    _m("tool.search", "explicit search tool (BM25 pool, concept credit, trails)", True),
    _m("tool.read", "explicit read tool (sections, neighbour trails, fallback)", True),
    _m("tool.note", "explicit note tool into the register", True),
    _m("maintenance.rebuild_graph", "operator graph rebuild under the lock"),
    _m("maintenance.refresh_summaries", "operator summary refresh (no lock)"),
    _m("host.prefetch", "host prefetch with the 8 s timeout (simulated)"),
)


def host_message(turn: ReplayTurn) -> str:
    """A turn's text as the host hands it to the provider: `[Name] text` when the speaker is named.

    A turn of a role other than user/assistant with no name keeps its role as the name.
    """
    name = turn.speaker or (turn.role if turn.role not in ("user", "assistant") else None)
    return f"[{name}] {turn.content}" if name else turn.content


def requested_note(turn: ReplayTurn) -> str | None:
    """The note a host model would write for a turn that asks to keep something, else None: what
    follows the request, as the speaker's statement ("Please remember that Tomas is allergic to
    nuts." -> "Ana: Tomas is allergic to nuts.")."""
    m = NOTE_REQUEST.search(turn.content)
    if m is None:
        return None
    body = _NOTE_LEAD.sub("", turn.content[m.end():]).strip()
    body = (body[:-1] + "." if body.endswith("?") else body) or turn.content
    name = turn.speaker or (turn.role if turn.role not in ("user", "assistant") else None)
    return f"{name}: {body}" if name else body


def _on_node(node: str, fact: str) -> str:
    """`node: fact`, once: a fact that already opens with its node's name (a speaker's own
    account, `John: I failed ...` on John's page) is not prefixed again (`John: John: ...`)."""
    return fact if fact.startswith(f"{node}: ") else f"{node}: {fact}"


def settings_from(options: Options, setup: AdapterSetup) -> Settings:
    fixes = Fixes(**{k.removeprefix("fix_"): v for k, v in options.model_dump().items() if k.startswith("fix_")})
    budget = options.recall_budget_tokens or setup.retrieval_budget or 1200
    plain = {k: v for k, v in options.model_dump().items()
             if not k.startswith(("fix_", "host_"))
             and k not in ("tools", "recall_budget_tokens", "consolidator", "agent_context", "notes")}
    disabled = frozenset(m.removeprefix("exia.") for m in setup.disabled if m.startswith("exia."))
    return Settings(**plain, recall_budget_tokens=budget, fix=fixes, disabled=disabled)


def consolidation_model(options: Options, setup: AdapterSetup, settings: Settings):
    """The provider's `complete(messages)`, or None for its own stand-in (see `Options.consolidator`)."""
    choice = options.consolidator
    if choice == "auto":
        choice = "llm" if setup.memory_llm is not None else "harness" if setup.llm is not None else "standin"
    if choice == "llm":
        if setup.memory_llm is None:
            raise ValueError("exia-seed option consolidator = \"llm\" needs a [memory_llm] table for this condition")
        return MemoryChat(setup.memory_llm).complete
    if choice == "rules":
        return RulesModel(language=options.language, min_words=settings.standin_min_words).complete
    return setup.llm.complete if choice == "harness" else None


class ExiaSeedAdapter(MemoryAdapter):
    """EXIA SEED run as the one external provider of a Hermes-style host."""

    name = "exia-seed"
    version = "0.1.0"
    Options = Options
    mechanisms = MECHANISMS
    maintenance_operations = frozenset({"consolidate", "close_batch", "rebuild_graph", "refresh_summaries", "nightly",
                                        "refresh_during_consolidation"})
    supports_snapshot = True

    def __init__(self, setup: AdapterSetup) -> None:
        super().__init__(setup)
        self.options: Options = setup.options if isinstance(setup.options, Options) else Options()
        self.settings = settings_from(self.options, setup)
        self._complete = consolidation_model(self.options, setup, self.settings)
        self._tmp: tempfile.TemporaryDirectory | None = None
        if setup.state_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="exia-seed-")
        self.state_dir = Path(setup.state_dir or self._tmp.name)
        self.provider: ExiaSeedProvider | None = None
        self.host: HermesHost | None = None
        self._pending: ReplayTurn | None = None
        self._session: str | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def reset(self, *, conversation_id: str, now: datetime) -> None:
        if self.provider is not None:
            self.provider.shutdown()
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.state_dir.mkdir(parents=True)
        self._delivered: list[str] = []
        self.provider = ExiaSeedProvider(self.settings, complete=self._complete, on_event=self._relay)
        self.provider.initialize(conversation_id, hermes_home=self.state_dir, platform="lsrep",
                                 agent_context=self.options.agent_context)
        self.host = HermesHost(on_event=self._host_event, timeout_s=self.options.host_prefetch_timeout_s,
                               seconds_per_work_unit=self.options.host_seconds_per_work_unit,
                               redaction=self.options.host_redaction)
        self.host.add_provider(self.provider)
        self._pending, self._session = None, None
        self._reported: set[str] = set()
        for mechanism, why in self._off_by_configuration():
            self.emit(mechanism, "skipped", reason=f"disabled: {why}")

    def _off_by_configuration(self) -> list[tuple[str, str]]:
        """Mechanisms this configuration never engages (said once per reset, so the audit reads
        them as switched off rather than as never exercised)."""
        o = self.options
        off = [("exia.recall.phase2", "phase = 1 (recall is journaled, not injected)") if o.phase == 1
               else ("exia.recall.phase1", "phase = 2 (recall is injected)")]
        if not o.auto_consolidate:
            off.append(("exia.consolidate.trigger", "auto_consolidate = false (only forced consolidation)"))
        if o.tools != "auto-read":
            off.append(("exia.tool.read", f"tools = {o.tools!r}: the offline host never reads"))
        if o.tools != "auto-search":
            off.append(("exia.tool.search", f"tools = {o.tools!r}: the offline host never searches"))
        if o.notes == "off":
            off.append(("exia.tool.note", "the offline host stand-in never calls the note tool"))
        return off

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        # Idempotent per turn id: a redelivered turn (a retried ingest) changes nothing.
        if turn.turn_id in self._delivered:
            return
        self._delivered.append(turn.turn_id)
        if self._session is not None and turn.session_id != self._session:
            self.host.session_switch(turn.session_id, parent_session_id=self._session, now=turn.timestamp)
        self._session = turn.session_id
        self.host.turn_start(len(self._delivered), turn.content, now=turn.timestamp)
        turn = turn.model_copy(update={"content": host_message(turn)})
        note = requested_note(turn) if self.options.notes == "on-request" and turn.role != "assistant" else None
        if note:
            self.host.tool(NOTE_TOOL, {"texte": note}, now=turn.timestamp)
        if turn.role == "assistant":
            user, self._pending = self._pending, None
            self.host.sync(user.content if user else "", turn.content, session_id=turn.session_id,
                           now=turn.timestamp, user_time=user.timestamp if user else None,
                           origins=(user.turn_id if user else None, turn.turn_id))
            return
        self._flush()
        self._pending = turn

    def end_session(self, session_id: str, *, now: datetime) -> None:
        self._flush()
        self.host.session_end(now=now)

    def maintain(self, operation: str, *, now: datetime) -> None:
        self._flush()
        match operation:
            case "consolidate":
                self.provider.consolidate(now)
            case "nightly":
                self.provider.consolidate(now, force=True)
            case "close_batch":
                self.provider.close_batch(now)
            case "rebuild_graph":
                self.provider.rebuild_graph(now)
            case "refresh_summaries":
                self.provider.refresh_summaries(now, write=True)
            case "refresh_during_consolidation":
                self.provider.refresh_during_consolidation(now)
            case _:
                raise ValueError(f"unsupported maintenance operation: {operation!r}")

    def _flush(self) -> None:
        """Sync a buffered user turn that got no reply."""
        if self._pending is None:
            return
        user, self._pending = self._pending, None
        self.host.sync(user.content, "", session_id=user.session_id, now=user.timestamp,
                       user_time=user.timestamp, origins=(user.turn_id, None))

    # -- query ----------------------------------------------------------------------------
    def query(self, question: str, *, now: datetime) -> QueryResult:
        prefetch = self.host.prefetch(question, session_id=self._session or "", now=now)
        status = self.provider.recall_status()
        placed: list[tuple[Fragment, tuple[str, ...]]] = []
        parts: list[str] = []
        if prefetch.block and status is not None:
            placed += self._recall_fragments(status)
            parts.append(prefetch.block)
        tool = self._tool_call(question, status, now)
        if tool is not None:
            name, reply = tool
            placed += self._tool_fragments(name, json.loads(reply))
            parts.append(f"[tool {name}]\n{reply}")
        self._report_in_prompt(placed)  # the system's own account: every mechanism that touched a fact
        self._report_untriggered()
        fragments = tuple(f.model_copy(update={"mechanisms": tuple(m for m in f.mechanisms if m in CREDITED)})
                          for f, _ in placed)
        return QueryResult(fragments=fragments, context_text="\n\n".join(parts) or None)

    def _tool_call(self, question: str, status: Any, now: datetime) -> tuple[str, str] | None:
        if self.options.tools == "auto-search":
            return SEARCH_TOOL, self.host.tool(SEARCH_TOOL, {"requete": question}, now=now)
        if self.options.tools == "auto-read" and status is not None and status.subjects:
            return READ_TOOL, self.host.tool(READ_TOOL, {"sujet": status.subjects[0]}, now=now)
        return None

    def _recall_fragments(self, status: Any) -> list[tuple[Fragment, tuple[str, ...]]]:
        base = ("exia.recall.phase2", "exia.recall.cache")
        out = []
        for line in status.lines:
            mechanisms = list(base)
            if line.kind in ("fact", "summary"):
                mechanisms += self._admission_mechanisms()
            if line.kind == "summary":
                mechanisms.append("exia.summaries")
            if line.node in status.graph_reached:
                mechanisms.append("exia.recall.graph")
            if line.node in status.primed:
                mechanisms.append("exia.recall.priming")
            out.append((self._fragment(line.text.strip(), line.fact_ids, mechanisms, line.kind), line.fact_ids))
        return out

    def _tool_fragments(self, name: str, reply: dict[str, Any]) -> list[tuple[Fragment, tuple[str, ...]]]:
        mechanism = "exia.tool.search" if name == SEARCH_TOOL else "exia.tool.read"
        mechanisms = [mechanism, "exia.recall.cache", *self._admission_mechanisms()]
        views: list[tuple[str, dict[str, Any]]] = [("search", v) for v in reply.get("faits", [])]
        views += [("section", v) for vs in reply.get("sections", {}).values() for v in vs]
        views += [("trail", v) for t in reply.get("pistes", []) for v in t.get("faits", [])]
        views += [("fallback", v) for v in reply.get("repli", [])]
        out = []
        for kind, view in views:
            when = f" ({view['date']})" if view.get("date") else ""
            mark = " [superseded]" if view.get("remplace_par") else ""
            text = f"{_on_node(view['noeud'], view['fait'])}{when}{mark}"
            fragment = self._fragment(text, (view["id"],), mechanisms, kind, score=view.get("score"))
            out.append((fragment, (view["id"],)))
        return out

    def _admission_mechanisms(self) -> list[str]:
        return ["exia.consolidate"] + (["exia.checker"] if self.enabled("exia.checker") else [])

    def _fragment(self, text: str, fact_ids: tuple[str, ...], mechanisms: list[str], kind: str,
                  score: float | None = None) -> Fragment:
        sources = self.provider.origins(self.provider.fact_refs(fact_ids))
        return Fragment(text=text, source_turn_ids=sources, tokens=(len(text) + 3) // 4,
                        mechanisms=tuple(dict.fromkeys(mechanisms)), score=score, kind=kind)

    def _report_in_prompt(self, placed: list[tuple[Fragment, tuple[str, ...]]]) -> None:
        """One `in_prompt` event per contributing mechanism, with the fact ids it placed."""
        by_mechanism: dict[str, list[tuple[Fragment, tuple[str, ...]]]] = {}
        for fragment, fact_ids in placed:
            for mechanism in fragment.mechanisms:
                by_mechanism.setdefault(mechanism, []).append((fragment, fact_ids))
        for mechanism, items in sorted(by_mechanism.items()):
            turns = tuple(dict.fromkeys(t for f, _ in items for t in f.source_turn_ids))
            ids = tuple(dict.fromkeys(i for _, fact_ids in items for i in fact_ids))
            self.emit(mechanism, "in_prompt", count=len(items), ids=ids, source_turn_ids=turns)

    # -- events ---------------------------------------------------------------------------
    def emit(self, mechanism: str, stage, **fields: Any) -> None:
        reported = getattr(self, "_reported", None)
        if reported is not None:
            reported.add(mechanism)
        super().emit(mechanism, stage, **fields)

    def _report_untriggered(self) -> None:
        # A declared mechanism that has had nothing to do says so once per history, so a silent one
        # (declared but never running) stays distinguishable from one not yet triggered.
        for name in self.mechanism_names():
            if name not in self._reported:
                self.emit(name, "ineligible", reason="not triggered in this history so far")

    def _relay(self, event: StageEvent) -> None:
        turns = self.provider.origins(event.refs) if event.refs and self.provider else ()
        reason = event.reason
        if event.stage in ("ineligible", "skipped") and reason:
            if reason in _REASONS:
                reason = f"{_REASONS[reason]}: {reason}"
            elif reason.startswith("pas de dépôt Git"):
                reason = f"disabled: {reason}"
        self.emit(f"exia.{event.mechanism}", event.stage, reason=reason, count=event.count,
                  ids=event.ids, source_turn_ids=turns, params=dict(event.params))

    def _host_event(self, mechanism: str, stage: str, params: dict[str, Any]) -> None:
        reason = params.pop("reason", None)
        self.emit(f"exia.{mechanism}", stage, reason=reason, params=params)

    # -- snapshots ------------------------------------------------------------------------
    def _runtime(self) -> dict[str, Any]:
        state, _ = self.provider.capture_runtime()
        pending = self._pending.model_dump(mode="json") if self._pending else None
        return {"provider": state, "pending": pending, "session": self._session,
                "delivered": list(self._delivered)}

    def snapshot(self) -> Any:
        _, cache = self.provider.capture_runtime()
        return DirectorySnapshot.take(self.state_dir), copy.deepcopy(self._runtime()), cache

    def restore(self, snapshot: Any) -> None:
        directory, runtime, cache = snapshot
        directory.restore_into(self.state_dir)
        self.provider.restore_runtime(runtime["provider"], cache)
        self._pending = ReplayTurn.model_validate(runtime["pending"]) if runtime["pending"] else None
        self._session = runtime["session"]
        self._delivered = list(runtime["delivered"])

    def state_digest(self) -> str:
        """Files under the state directory plus the provider's and host's in-process state."""
        if self.provider is None:
            return digest_directory(self.state_dir)
        runtime = json.dumps(self._runtime(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256((digest_directory(self.state_dir) + runtime).encode()).hexdigest()

    def close(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
