"""ICE v2: pre-flight (classify, retrieve, fuse, pack, assemble) and post-flight (store, extract).

`IceSystem` owns one state directory of SQLite stores. Every call takes the simulated
`now`; nothing reads a clock. Model calls (extraction, summaries) go through an injected
one-method model, defaulting to the deterministic rule-based stand-in; vectors come from an
injected embedder, defaulting to the hashing embedder.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .assemble import Assembly, ContextFragment, assemble, fit_slots, recent_window
from .classify import Classification, classify, classify_topic
from .config import LEGS, IceConfig
from .embedding import Embedder, HashingEmbedder, embed_one
from .episodic import StoredTurn, TurnRecord
from .events import EventCallback, EventRelay
from .extraction import LanguageModel, RuleBasedModel
from .fusion import apply_bonuses, cap_other_conversations, fuse
from .legs import Candidate, LegContext, run_legs
from .packing import MemoryBudget, Packing, memory_budget, pack
from .stores import Stores
from .text import estimate_tokens
from .workers import extract_turn, run_decay, run_extraction, run_summaries


@dataclass(frozen=True)
class Preflight:
    """Everything pre-flight produced for one message."""

    fragments: tuple[ContextFragment, ...]
    """Slots, retrieved fragments and recent turns, in prompt order."""
    context_text: str
    messages: tuple[dict[str, str], ...]
    """The assembled chat prompt, ending with the live message."""
    classification: Classification
    route: str
    budget: MemoryBudget
    block_tokens: dict[str, int]
    counts: dict[str, int] = field(default_factory=dict)
    """Candidates per leg, fused, after the cap, packed, skipped."""
    unattributable: int = 0
    recent_dropped_tokens: int = 0
    """Tokens of the last turns the recent window's cap left out."""
    truncated_tokens: int = 0
    """Memory tokens an external context ceiling cut below ICE's own budget."""
    message_only_tokens: int = 0
    """What the seed's HTTP-wrapper check counts (the live message only): not a ceiling."""

    @property
    def memory(self) -> tuple[ContextFragment, ...]:
        return tuple(f for f in self.fragments if f.kind == "memory")


class IceSystem:
    """One ICE v2 instance over a state directory."""

    def __init__(self, state_dir: Path, *, config: IceConfig | None = None,
                 embedder: Embedder | None = None, lm: LanguageModel | None = None,
                 on_event: EventCallback | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.config = config or IceConfig()
        self.embedder = embedder or HashingEmbedder(self.config.embed_dim)
        self.lm = lm or RuleBasedModel(self.config.summary_max_chars)
        self.emit = EventRelay(on_event)
        self.fingerprint = self.config.fingerprint()
        self.stores: Stores | None = Stores.open(self.state_dir, self.embedder)

    # -- state -----------------------------------------------------------------------------
    @property
    def db(self) -> Stores:
        if self.stores is None:
            self.stores = Stores.open(self.state_dir, self.embedder)
        return self.stores

    def close(self) -> None:
        """Close every store file (required before the directory is copied over)."""
        if self.stores is not None:
            self.stores.close()
            self.stores = None

    def reopen(self) -> None:
        """Open the store files again (after the directory was replaced)."""
        self.close()
        self.stores = Stores.open(self.state_dir, self.embedder)

    def wipe(self) -> None:
        """Delete all state and start empty."""
        self.close()
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.stores = Stores.open(self.state_dir, self.embedder)

    # -- user-controlled inputs ------------------------------------------------------------
    def set_slot(self, key: str, value: str, *, now: datetime) -> None:
        self.db.slots.set(key, value, now)

    def add_document(self, doc_id: str, text: str, *, now: datetime) -> list[str]:
        return self.db.documents.add(doc_id, text, target_tokens=self.config.doc_chunk_tokens,
                                     now=now)

    # -- post-flight -----------------------------------------------------------------------
    def ingest(self, turn: TurnRecord, *, now: datetime, preflight: bool = False) -> None:
        """Post-flight for a live turn: store it, then dispatch extraction.

        With `preflight`, a user turn first runs pre-flight (and its access reinforcement),
        as live use would.
        """
        if preflight and turn.role == "user":
            self.query(turn.content, conversation_id=turn.conversation_id, now=now)
        db = self.db
        topic = classify_topic(turn.content)
        self.emit("postflight.store", "eligible", ids=(turn.turn_id,))
        if not db.episodic.add(turn, embed_one(self.embedder, turn.embed_text or turn.content), topic):
            self.emit("postflight.store", "error", reason="duplicate turn id",
                      ids=(turn.turn_id,))
            return
        self.emit("postflight.store", "executed", ids=(turn.turn_id,))
        self.emit("postflight.store", "output", count=1, ids=(turn.turn_id,),
                  source_turn_ids=(turn.turn_id,))
        if self.config.extraction_mode == "postflight":
            stored = db.episodic.get(turn.turn_id)
            extract_turn(stored, stores=db, config=self.config, lm=self.lm, now=now,
                         emit=self.emit)

    # -- workers ---------------------------------------------------------------------------
    def run_decay(self, *, now: datetime) -> int:
        return run_decay(stores=self.db, config=self.config, now=now, emit=self.emit)

    def run_summaries(self, *, now: datetime) -> list[str]:
        return run_summaries(stores=self.db, config=self.config, lm=self.lm,
                             embedder=self.embedder, now=now, emit=self.emit)

    def run_extraction(self, *, now: datetime, all_turns: bool = False) -> int:
        return run_extraction(stores=self.db, config=self.config, lm=self.lm, now=now,
                              emit=self.emit, all_turns=all_turns)

    # -- pre-flight ------------------------------------------------------------------------
    def query(self, message: str, *, conversation_id: str, now: datetime,
              reinforce: bool = True, store_as: TurnRecord | None = None) -> Preflight:
        """Pre-flight for a message; `store_as` also runs post-flight on it afterwards."""
        cfg, db, emit = self.config, self.db, self.emit
        conv_turns = db.episodic.count(conversation_id)
        cls = classify(message, conversation_turns=conv_turns,
                       long_conversation_turns=cfg.long_conversation_turns,
                       names_known_entity=lambda t: bool(
                           db.codex.find_entities(t, cfg.fuzzy_threshold)))
        params = {"topic": cls.topic, "intent": cls.intent, "reliance": cls.reliance,
                  "rule": cls.rule, "intent_rule": cls.intent_rule}
        emit("classify", "eligible")
        emit("classify", "executed", params=params)
        emit("classify", "output", count=1, params=params)
        route = f"specialist:{cls.topic}"
        emit("route", "eligible")
        emit("route", "executed", params={"model": route})
        emit("route", "output", count=1, params={"model": route})
        weights = cfg.intent_weights.get(cls.intent) or cfg.intent_weights["recall_fact"]

        slots, window, dropped = self._fixed_blocks(conversation_id)
        fixed = sum(f.tokens for f in slots) + sum(t.tokens for t in window)
        ceiling = None if cfg.context_budget is None else cfg.context_budget - fixed
        budget = memory_budget(cfg, reliance=cls.reliance,
                               conversation_tokens=db.episodic.tokens(conversation_id),
                               memory_tokens=db.episodic.tokens(), ceiling=ceiling)

        self._cluster_scope_events(cls)
        ctx = LegContext(query=message, qvec=embed_one(self.embedder, message), cls=cls,
                         conversation_id=conversation_id, config=cfg,
                         emit=emit, episodic=db.episodic, codex=db.codex,
                         procedures=db.procedures, documents=db.documents,
                         summaries=db.summaries)
        results = run_legs(ctx, weights)
        fused = fuse(results, weights, cfg, emit)
        fused = apply_bonuses(fused, current_conversation=conversation_id, config=cfg, emit=emit)
        if cfg.dedupe_recent:
            shown = {f"turn:{t.turn_id}" for t in window}
            fused = [c for c in fused if c.id not in shown]
        capped = cap_other_conversations(fused, current_conversation=conversation_id,
                                         config=cfg, emit=emit)
        packing = pack(capped, budget.effective, cfg, emit)
        truncated = 0
        if budget.effective < budget.native:
            # What the external ceiling cost: ICE's own budget would have packed this much more.
            native = pack(capped, budget.native, cfg, EventRelay(None))
            truncated = max(0, native.used - packing.used)
        asm = assemble(slots, packing.packed, window, message)
        self._report_selection(results, packing, asm)
        if reinforce:
            self._reinforce(packing.packed, window, now)
        if store_as is not None:
            self.ingest(store_as, now=now)
        counts = {f"leg.{leg}": len(c) for leg, c in results.items()}
        counts.update(fused=len(fused), after_cap=len(capped), packed=len(packing.packed),
                      skipped=len(packing.skipped), type_cap_removed=len(
                          packing.removed_by_type_cap))
        return Preflight(
            fragments=asm.fragments, context_text=asm.context_text, messages=asm.messages,
            classification=cls, route=route, budget=budget, block_tokens=asm.block_tokens,
            counts=counts, unattributable=asm.unattributable, recent_dropped_tokens=dropped,
            truncated_tokens=truncated,
            message_only_tokens=estimate_tokens(message),
        )

    def _fixed_blocks(
        self, conversation_id: str
    ) -> tuple[list[ContextFragment], list[StoredTurn], int]:
        """Slots and the recent window, fitted under the context ceiling if one is set."""
        cfg, db, emit = self.config, self.db, self.emit
        ceiling = cfg.context_budget
        slots: list[ContextFragment] = []
        items = db.slots.items()
        if not items:
            emit("slots", "ineligible", reason="no slots")
        elif not cfg.is_on("slots"):
            emit("slots", "skipped", reason="disabled")
        else:
            emit("slots", "eligible", count=len(items))
            slots = fit_slots(items, ceiling)
            emit("slots", "executed", count=len(slots))
            if slots:
                emit("slots", "output", count=len(slots), ids=tuple(f.id for f in slots))
        used = sum(f.tokens for f in slots)
        turns = db.episodic.recent(conversation_id, cfg.recent_turns)
        if not turns:
            emit("recent_window", "ineligible", reason="empty current conversation")
            return slots, [], 0
        if not cfg.is_on("recent_window"):
            emit("recent_window", "skipped", reason="disabled")
            return slots, [], 0
        cap = cfg.recent_max_tokens
        if ceiling is not None:
            cap = max(0, min(cap, int(ceiling * cfg.recent_share_of_context_budget),
                             ceiling - used))
        emit("recent_window", "eligible", count=len(turns), params={"cap_tokens": cap})
        window, dropped = recent_window(turns, cap)
        emit("recent_window", "executed", count=len(window),
             params={"cap_tokens": cap, "dropped_tokens": dropped})
        if window:
            ids = tuple(t.turn_id for t in window)
            emit("recent_window", "output", count=len(window), ids=ids, source_turn_ids=ids)
        return slots, window, dropped

    def _cluster_scope_events(self, cls: Classification) -> None:
        if not self.config.cluster_scope:
            self.emit("cluster_scope", "ineligible", reason="off by configuration")
        elif cls.topic == "general":
            self.emit("cluster_scope", "ineligible", reason="no topic cluster for the query")
        else:
            self.emit("cluster_scope", "eligible", params={"topic": cls.topic})
            self.emit("cluster_scope", "executed", params={"topic": cls.topic})

    def _report_selection(self, results: dict[str, list[Candidate]], packing: Packing,
                          asm: Assembly) -> None:
        """`selected` and `in_prompt` per mechanism, then the assembly report."""
        emit = self.emit
        in_prompt = {f.id for f in asm.fragments}
        mechanisms = [f"leg.{leg}" for leg in LEGS if leg in results] + ["mera"]
        attributed = [(c, c.attribution()) for c in packing.packed]  # once per fragment
        for mech in mechanisms:
            chosen = [c for c, attribution in attributed if mech in attribution]
            if not chosen:
                continue
            ids = tuple(c.id for c in chosen)
            turns = tuple(dict.fromkeys(t for c in chosen for t in c.source_turn_ids))
            emit(mech, "selected", count=len(ids), ids=ids, source_turn_ids=turns)
            shown = tuple(i for i in ids if i in in_prompt)
            if shown:
                emit(mech, "in_prompt", count=len(shown), ids=shown, source_turn_ids=turns)
        for mech, kind in (("slots", "slot"), ("recent_window", "recent")):
            ids = tuple(f.id for f in asm.fragments if f.kind == kind)
            if ids:
                turns = tuple(t for f in asm.fragments if f.kind == kind for t in f.source_turn_ids)
                emit(mech, "selected", count=len(ids), ids=ids, source_turn_ids=turns)
                emit(mech, "in_prompt", count=len(ids), ids=ids, source_turn_ids=turns)
        emit("assemble", "eligible")
        emit("assemble", "executed", count=len(asm.fragments), params={
            "block_tokens": asm.block_tokens, "unattributable": asm.unattributable,
            "without_source_turns": asm.without_source_turns,
            "attribution": {f.id: list(f.mechanisms) for f in asm.fragments},
            "config_fingerprint": self.fingerprint,
        })
        if asm.fragments:
            emit("assemble", "in_prompt", count=len(asm.fragments),
                 ids=tuple(f.id for f in asm.fragments),
                 source_turn_ids=tuple(dict.fromkeys(
                     t for f in asm.fragments for t in f.source_turn_ids)))

    def _reinforce(self, packed: list[Candidate], window, now: datetime) -> None:
        """Access restores decay for episodic turns and patterns that reached the prompt."""
        turns = [c.source_turn_ids[0] for c in packed if c.source_type == "episodic"]
        if self.config.reinforce_recent:
            turns += [t.turn_id for t in window]
        patterns = [c.id.removeprefix("proc:") for c in packed if c.source_type == "procedural"]
        if not turns and not patterns:
            self.emit("reinforce", "ineligible", reason="no episodic turn or pattern in prompt")
            return
        self.emit("reinforce", "eligible", count=len(turns) + len(patterns))
        if not self.config.is_on("reinforce"):
            self.emit("reinforce", "skipped", reason="disabled")
            return
        self.db.episodic.reinforce(turns, now)
        self.db.procedures.reinforce(patterns, now)
        ids = tuple(turns + patterns)
        self.emit("reinforce", "executed", count=len(ids), ids=ids)
        self.emit("reinforce", "output", count=len(ids), ids=ids, source_turn_ids=tuple(turns))

