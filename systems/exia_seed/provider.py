"""`ExiaSeedProvider`: the Hermes `MemoryProvider` surface over EXIA SEED's mechanisms.

Time is always passed in: every method that depends on it takes `now=` (a simulated clock);
nothing here reads the wall clock. Consolidation, which the seed runs in a background
subprocess after a batch closes, runs inline at the same point; `busy_minutes` emulates the
window in which it would still be running, and a trigger in that window is dropped (SEED, E-13)
or, with `fix.queue_when_busy`, run at the first call after the window.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .cache import RecallCache
from .consolidation import Complete, Consolidator, FaultHook
from .events import Emitter, EventHook
from .files import LockBusy, MemoryPaths, append_jsonl, file_lock
from .graph import EdgeBuilder, write_graph, write_index
from .ingestion import RawLine, RawWriter, omit_requested, origin_map, split_withdrawal
from .masking import contains_secret, mask_secrets
from .pages import PageReader, load_pages
from .prompts import LABELS
from .recall import RecallLine, Selection, select, souvenirs
from .registre import Registre
from .settings import Settings, load_settings
from .standin import StandInModel
from .summaries import refresh_summaries
from .tools import NOTE_TOOL, READ_TOOL, SEARCH_TOOL, TOOL_SCHEMAS, read, search

PRIMARY_CONTEXTS = (None, "", "primary")
_TRIVIAL = {"ok", "okay", "thanks", "thank you", "thx", "yes", "no", "sure", "cool", "great", "merci", "oui", "non",
            "d'accord", "hi", "hello", "bonjour", "salut"}


def is_trivial_prompt(text: str) -> bool:
    """Hermes' recall skip: acknowledgements and slash commands."""
    stripped = text.strip().lower().rstrip("!.?")
    return not stripped or stripped in _TRIVIAL or stripped.startswith("/")


@dataclass(frozen=True)
class RecallStatus:
    """What the last automatic recall computed and injected."""

    provider_label: str
    count: int
    """Facts injected (0 in phase 1)."""
    phase: int
    lines: tuple[RecallLine, ...] = ()
    """The injected block, line by line, with the fact ids behind each line."""
    subjects: tuple[str, ...] = ()
    """Subjects of the generic selection (computed in both phases)."""
    selected: tuple[str, ...] = ()
    """Fact ids the generic selection kept."""
    graph_reached: tuple[str, ...] = ()
    """Subjects kept only because activation spread to them along edges."""
    primed: tuple[str, ...] = ()
    tokens: int = 0
    """Estimated tokens of the returned block."""
    work: int = 0
    """Units of work done; a host may turn this into simulated latency."""
    glyph: str = "🧠"


@dataclass
class Runtime:
    """In-process state the seed keeps outside its files (counters, priming, busy window)."""

    counters: dict[str, int] = field(default_factory=lambda: {
        "tours_ignores": 0, "tours_omis": 0, "secrets_masques": 0, "retraits": 0, "consolidations": 0,
        "consolidations_sautees": 0, "prefetch_queue": 0,
    })
    primed_at: str | None = None
    primed: list[str] = field(default_factory=list)
    busy_until: str | None = None
    queued: bool = False


class ExiaSeedProvider:
    """EXIA SEED as a Hermes memory provider."""

    def __init__(self, settings: Settings | None = None, *, complete: Complete | None = None,
                 on_event: EventHook | None = None, fault_hook: FaultHook | None = None) -> None:
        self._given_settings = settings
        self.settings = settings or Settings()
        self._complete = complete
        self.emit = Emitter(on_event)
        self.fault_hook = fault_hook
        self.runtime = Runtime()
        self.session_id = ""
        self.agent_context: str | None = None
        self.paths: MemoryPaths | None = None
        self.registre: Registre | None = None
        self.cache: RecallCache | None = None
        self.reader: PageReader | None = None
        self.edges: EdgeBuilder | None = None
        self._raw: RawWriter | None = None
        self._last: RecallStatus | None = None
        self._origins: tuple[int, dict[str, str]] | None = None

    # -- identity and setup ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return "exia_seed"

    def is_available(self) -> bool:
        return True

    @property
    def active(self) -> bool:
        """`_actif`: conversation writing is on (primary contexts only)."""
        return self.agent_context in PRIMARY_CONTEXTS and self._raw is not None

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = Path(kwargs["hermes_home"])
        self.settings = self._given_settings or load_settings(home)
        self.session_id = session_id
        self.agent_context = kwargs.get("agent_context")
        self.paths = MemoryPaths(home / self.settings.memory_dir)
        self.paths.ensure()
        self.registre = Registre(self.paths)
        self.reader = PageReader()
        self.edges = EdgeBuilder()
        self.cache = RecallCache(self.paths, self.settings, self.emit, self.reader)
        primary = self.agent_context in PRIMARY_CONTEXTS
        self._raw = RawWriter(self.paths, self.settings, self.emit) if primary else None
        self._labels = LABELS.get(self.settings.language, LABELS["en"])

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(TOOL_SCHEMAS)

    def system_prompt_block(self) -> str:
        return ""

    @property
    def complete(self) -> Complete:
        if self._complete is not None:
            return self._complete
        return StandInModel(language=self.settings.language, min_words=self.settings.standin_min_words).complete

    # -- turn sync ------------------------------------------------------------------------
    def on_turn_start(self, turn_number: int, message: str, *, now: datetime, **kwargs: Any) -> None:
        """Hermes' per-turn hook: the first call after a busy window runs queued consolidation."""
        self._run_queued(now)

    def on_pre_compress(self, messages: Sequence[dict[str, Any]] | None = None, *, now: datetime) -> str:
        """Before the host compresses its context: the turns are already in raw capture; nothing to add."""
        self._run_queued(now)
        return ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Sequence[dict[str, Any]] | None = None, now: datetime,
                  user_time: datetime | None = None, origins: tuple[str | None, str | None] = (None, None),
                  transcript: str | None = None) -> None:
        """Write a completed turn. `origins` are the host's ids for the user and assistant messages."""
        self._run_queued(now)
        self.emit("ingest.gate", "eligible")
        if not self.active:
            self.runtime.counters["tours_ignores"] += 1
            self.emit("ingest.gate", "skipped", reason="contexte non primaire" if self._raw is None else "inactif")
            return
        if transcript and "[voice]" in user_content:
            user_content = user_content.replace("[voice]", transcript)
        if omit_requested(user_content):
            self.runtime.counters["tours_omis"] += 1
            self.emit("ingest.retention", "output", reason="omit-current", count=1)
            self.emit("ingest.gate", "skipped", reason="tour omis")
            return
        withdraw, user_content = split_withdrawal(user_content)
        if withdraw:
            refs = self._raw.withdraw_previous(now)
            self.runtime.counters["retraits"] += 1
            self.emit("ingest.retention", "output", reason="withdraw-previous", count=len(refs), refs=refs)
        user_text, n_user = mask_secrets(user_content)
        agent_text, n_agent = mask_secrets(assistant_content)
        self.runtime.counters["secrets_masques"] += n_user + n_agent
        self.emit("ingest.mask", "output" if n_user + n_agent else "executed", count=n_user + n_agent,
                  params={"user": n_user, "agent": n_agent})
        user_label, agent_label = self._labels
        lines = []
        if user_text.strip():
            lines.append(RawLine(user_time or now, user_label, user_text, origins[0]))
        if agent_text.strip():
            lines.append(RawLine(max(now, user_time or now), agent_label, agent_text, origins[1]))
        refs, closures = self._raw.append(lines)
        self.emit("ingest.gate", "executed", count=len(refs), refs=refs)
        for closure in closures:
            self._trigger(now, closure.reason)

    def on_session_end(self, messages: Sequence[dict[str, Any]] | None = None, *, now: datetime) -> None:
        self._close_and_trigger(now, "session")

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str | None = None,
                          reset: bool = False, rewound: bool = False, now: datetime) -> None:
        if reset:
            self._close_and_trigger(now, "reset")
        self.session_id = new_session_id

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict | None = None,
                        *, now: datetime) -> None:
        """Mirror a native MEMORY.md/USER.md write as a note (a removal becomes a descriptive note)."""
        text = f"user removed: {content}" if action == "remove" else content
        self._note({"texte": text, "noeud": None}, now, source="mirror")

    def shutdown(self) -> None:
        if self.cache is not None:
            self.cache.drop()

    # -- recall ---------------------------------------------------------------------------
    def prefetch(self, query: str, *, session_id: str = "", now: datetime) -> str:
        """Automatic recall: phase 1 journals and returns ""; phase 2 returns `_souvenirs`."""
        self._run_queued(now)
        phase = 2 if int(self.settings.phase) >= 2 else 1
        mechanism = f"recall.phase{phase}"
        label = "EXIA SEED"
        if self.agent_context not in PRIMARY_CONTEXTS or not self.settings.auto_recall:
            self.emit(mechanism, "ineligible", reason="contexte non primaire ou rappel désactivé")
            self._last = RecallStatus(label, 0, phase)
            return ""
        if is_trivial_prompt(query) or not self.settings.on(mechanism):
            self.emit(mechanism, "skipped", reason="trivial" if is_trivial_prompt(query) else "disabled")
            self._last = RecallStatus(label, 0, phase)
            return ""
        self.emit(mechanism, "eligible")
        memoire = self.cache.get()
        primed = self._primed(now)
        sel = select(memoire, query, now, self.settings, primed, self.emit)
        lines = souvenirs(memoire, sel, self.settings) if phase == 2 else []
        block = "\n".join(line.text for line in lines)
        self._journal(query, phase, sel, block, now)
        self.runtime.primed_at, self.runtime.primed = now.isoformat(), sel.subjects
        shown = [i for line in lines if line.kind == "fact" for i in line.fact_ids]
        self._last = RecallStatus(label, len(shown), phase, tuple(lines), tuple(sel.subjects),
                                  tuple(s.fact_id for s in sel.selected), tuple(sel.graph_reached),
                                  tuple(sorted(sel.primed)),
                                  (len(block) + 3) // 4, sel.work)
        if phase == 1:
            self.emit(mechanism, "executed", count=len(sel.selected), params={"journaled_tokens": sel.tokens})
            return ""
        self.emit(mechanism, "output" if lines else "executed", count=len(shown), ids=shown,
                  params={"estimated_tokens": self._last.tokens, "subjects": len(sel.subjects),
                          "summaries": sum(1 for line in lines if line.kind == "summary")})
        if shown:
            self.emit(mechanism, "selected", ids=shown, count=len(shown))
        return block

    def queue_prefetch(self, query: str, *, session_id: str = "", now: datetime) -> None:
        """EXIA computes recall inline in `prefetch`; nothing is prepared in the background."""
        self.runtime.counters["prefetch_queue"] += 1

    def recall_status(self) -> RecallStatus | None:
        return self._last

    def _primed(self, now: datetime) -> set[str]:
        if not self.runtime.primed_at:
            return set()
        since = datetime.fromisoformat(self.runtime.primed_at)
        if now - since > timedelta(minutes=self.settings.priming_minutes):
            return set()
        return set(self.runtime.primed)

    def _journal(self, query: str, phase: int, sel: Selection, block: str, now: datetime) -> None:
        append_jsonl(self.paths.recall_journal, [{
            "ts": now.isoformat(), "requete": query, "phase": phase, "faits": [s.fact_id for s in sel.selected],
            "sujets": sel.subjects, "jetons_generiques": sel.tokens, "jetons_bloc": (len(block) + 3) // 4,
        }])

    # -- tools ----------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], *, now: datetime | None = None,
                         **kwargs: Any) -> str:
        """Run a tool and return its JSON reply. Requires `now=` (Hermes passes extra kwargs through)."""
        if not isinstance(now, datetime):
            return json.dumps({"error": "now (simulated time) is required"})
        mechanism = {NOTE_TOOL: "tool.note", SEARCH_TOOL: "tool.search", READ_TOOL: "tool.read"}.get(tool_name)
        if mechanism is None:
            return json.dumps({"error": f"outil inconnu: {tool_name}"})
        if self.paths is None:
            return json.dumps({"error": "fournisseur non initialisé"})
        if not self.settings.on(mechanism):
            self.emit(mechanism, "skipped", reason="disabled")
            return json.dumps({"error": "outil désactivé"})
        self.emit(mechanism, "eligible")
        try:
            if tool_name == NOTE_TOOL:
                reply = self._note(args, now, source="tool")
            elif tool_name == SEARCH_TOOL:
                reply = search(self.cache.get(), args, now, self.settings, self.emit)
            else:
                reply = read(self.cache.get(), args, now, self.settings, self.emit)
        except Exception as exc:  # tool failures degrade to error JSON (SEED)
            self.emit(mechanism, "error", reason=str(exc)[:200])
            reply = {"error": str(exc)[:200]}
        return json.dumps(reply, ensure_ascii=False)

    def _note(self, args: dict[str, Any], now: datetime, *, source: str) -> dict[str, Any]:
        text = str(args.get("texte", "")).strip()
        if self.settings.fix.primary_only_notes and self.agent_context not in PRIMARY_CONTEXTS:
            self.emit("tool.note", "skipped", reason="contexte non primaire")
            return {"error": "notes réservées au contexte principal"}
        if not text:
            return {"error": "note vide"}
        if contains_secret(text):
            self.emit("tool.note", "skipped", reason="secret")
            return {"error": "la note contient un secret"}
        note_id = self.registre.noter(text, now=now, confidentialite=str(args.get("confidentialite") or "normal"),
                                      noeud=args.get("noeud"), contexte=self.agent_context or "primary")
        self.emit("tool.note", "output", ids=[note_id], count=1, refs=[f"registre:{note_id}"],
                  params={"context": self.agent_context or "primary", "source": source})
        return {"ok": True, "id": note_id}

    # -- consolidation and operator maintenance ------------------------------------------
    def consolidate(self, now: datetime, *, force: bool = False) -> dict[str, Any]:
        """The consolidation CLI; `force` (the nightly `--forcer`) first closes today's open batch."""
        if force:
            self.close_batch(now, reason="forcer")
        return self._consolidate(now, trigger="forcer" if force else "manuel")

    def close_batch(self, now: datetime, *, reason: str = "operateur") -> str | None:
        if self._raw is None:
            return None
        closure = self._raw.close(now, reason)
        return closure.batch_id if closure else None

    def rebuild_graph(self, now: datetime) -> int:
        """`graphe --calculer`, under the consolidation lock."""
        self.emit("maintenance.rebuild_graph", "eligible")
        try:
            with file_lock(self.paths.lock, blocking=False):
                pages = load_pages(self.paths.fiches)
                write_index(self.paths, pages)
                edges = write_graph(self.paths, pages, now)
        except LockBusy:
            self.emit("maintenance.rebuild_graph", "skipped", reason="verrou occupé")
            return -1
        self.emit("maintenance.rebuild_graph", "executed", count=edges)
        return edges

    def refresh_summaries(self, now: datetime, *, write: bool = True, all_pages: bool = False) -> dict[str, Any]:
        """`fiches [--ecrire] [--toutes]`: no lock, no graph rebuild unless `fix.summary_lock`."""
        return refresh_summaries(self.paths, self.settings, self.complete, self.emit, now,
                                 write=write, all_pages=all_pages)

    def refresh_during_consolidation(self, now: datetime) -> dict[str, Any]:
        """The E-16 race, interleaved deterministically: `fiches --ecrire --toutes` reads the pages,
        a consolidation runs (it takes the lock unless the refresh holds it), then the refresh writes.
        Without `fix.summary_lock` the consolidation's page writes are overwritten and the detector
        reports each one; with it the consolidation finds the lock held and defers."""
        return refresh_summaries(self.paths, self.settings, self.complete, self.emit, now, write=True,
                                 all_pages=True, concurrent=lambda: self._consolidate(now, trigger="concurrent"))

    def fact_refs(self, fact_ids: Sequence[str]) -> list[str]:
        """Source refs of facts, from the cache the last recall or tool call read."""
        memoire = self.cache.memoire if self.cache else None
        if memoire is None:
            return []
        return [r for fid in fact_ids if fid in memoire.facts for r in memoire.facts[fid][1].refs]

    def origins(self, refs: Sequence[str]) -> tuple[str, ...]:
        """Host message ids behind raw refs (notes have none), deduplicated, in order."""
        size = self.paths.origins.stat().st_size if self.paths.origins.exists() else 0
        if self._origins is None or self._origins[0] > size:
            self._origins = (size, origin_map(self.paths))
        elif self._origins[0] < size:
            # The file only grows by whole lines between restores: read what was appended.
            with self.paths.origins.open("rb") as fh:
                fh.seek(self._origins[0])
                tail = fh.read(size - self._origins[0]).decode("utf-8")
            known = self._origins[1]
            for line in tail.splitlines():
                if line.strip():
                    row = json.loads(line)
                    known[row["ref"]] = row["origine"]
            self._origins = (size, known)
        known = self._origins[1]
        seen: dict[str, None] = {}
        for ref in refs:
            if ref in known:
                seen.setdefault(known[ref], None)
        return tuple(seen)

    def _close_and_trigger(self, now: datetime, reason: str) -> None:
        if self._raw is None:
            return
        closure = self._raw.close(now, reason)
        if closure is not None:
            self._trigger(now, reason)

    def _trigger(self, now: datetime, reason: str) -> None:
        """A closure asks for automatic consolidation (the seed's background launch)."""
        if not self.settings.auto_consolidate:
            return
        self.emit("consolidate.trigger", "eligible", reason=reason)
        busy = self.runtime.busy_until and now < datetime.fromisoformat(self.runtime.busy_until)
        if busy:
            self.runtime.counters["consolidations_sautees"] += 1
            queued = self.settings.fix.queue_when_busy
            self.runtime.queued = self.runtime.queued or queued
            self.emit("consolidate.trigger", "skipped", reason="queued_busy" if queued else "skipped_busy")
            return
        self.emit("consolidate.trigger", "executed", reason=reason)
        self._consolidate(now, trigger=reason)

    def _run_queued(self, now: datetime) -> None:
        if self.runtime.queued and not (self.runtime.busy_until and now < datetime.fromisoformat(self.runtime.busy_until)):
            self.runtime.queued = False
            self.emit("consolidate.trigger", "executed", reason="queued")
            self._consolidate(now, trigger="queued")

    def _consolidate(self, now: datetime, *, trigger: str) -> dict[str, Any]:
        if not self.settings.on("consolidate"):
            self.emit("consolidate", "skipped", reason="disabled")
            return {"statut": "désactivé"}
        self.emit("consolidate", "eligible", reason=trigger)
        if self.settings.busy_minutes > 0:
            self.runtime.busy_until = (now + timedelta(minutes=self.settings.busy_minutes)).isoformat()
        consolidator = Consolidator(self.paths, self.settings, self.complete, self.emit, self.registre,
                                    self.fault_hook, self.reader, self.edges)
        try:
            report = consolidator.run(now)
        except Exception as exc:  # not transactional: whatever was written stays (SEED)
            self.emit("consolidate", "error", reason=str(exc)[:200])
            report = {"statut": "erreur", "erreur": str(exc)[:200]}
        self.runtime.counters["consolidations"] += 1
        return report

    # -- snapshot support for hosts -------------------------------------------------------
    def capture_runtime(self) -> tuple[dict[str, Any], Any]:
        """In-process state as (JSON-able dict, opaque cache handle) for a host's snapshot."""
        state = copy.deepcopy(self.runtime.__dict__)
        return state, (self.cache.memoire, self.cache.key) if self.cache else None

    def restore_runtime(self, state: dict[str, Any], cache_handle: Any) -> None:
        self.runtime = Runtime(**copy.deepcopy(state))
        if self.cache is not None and cache_handle is not None:
            self.cache.memoire, self.cache.key = cache_handle
