"""Consolidation: pending raw lines and notes become checked facts on subject pages.

Code owns progression and writes; the model (an injected `complete(messages) -> str`) only
proposes. Steps, in the seed's order: take the non-blocking lock; load pending batches and
notes; select batches within the character budget (the first is taken even when it alone
exceeds it; all notes are appended); number the sources; call the model; parse or salvage the
JSON; check each fact; resolve aliases; write pages (source-level dedupe, hash chain);
summaries; advance the journals; regenerate index and graph. Not transactional (SEED): a crash
after the page writes leaves the journals behind, and a rerun relies on dedupe.

Journals advance past rejected facts once the response parses (SEED, E-9): every selected line
and note is marked integrated. `fix.journal_only_admitted` keeps inputs behind rejected facts,
and notes no fact cites, pending for up to `max_retries` runs.

Supersession (CHOICE, not in the seed): a proposed fact may carry `attribut`/`valeur`, an
exclusive attribute of its page (the rules consolidator fills them; the seed's prompt does not
ask for them). Writing it marks the page's older facts with another value of that attribute
superseded by it (`Page.supersede`); they stay on the page as history.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .checker import Verdict, check_fact, cited_refs
from .events import Emitter
from .files import LockBusy, MemoryPaths, file_lock, read_json, write_json
from .graph import EdgeBuilder, write_graph, write_index
from .ingestion import Lot, pending_lots
from .pages import Catalogue, Fact, Page, PageReader, escape_fact_text, fact_id, load_pages
from .progress import load_progress, mark_lines_integrated, read_progress, save_progress, set_tries
from .prompts import DEFAULT_NODE, LABELS, Source, consolidation_messages
from .registre import Registre, normalise_privacy
from .settings import Settings
from .summaries import summarise
from .text import fold, parse_day

Complete = Callable[[Sequence[dict[str, str]]], str]
FaultHook = Callable[[str], None]
_PRIVACY_RANK = {"normal": 0, "private": 1, "confidential": 2}


@dataclass
class Proposal:
    """The model's reply, parsed."""

    status: str
    """`json`, `salvaged` or `invalid`."""
    facts: list[dict[str, Any]] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)


def parse_proposal(reply: str) -> Proposal:
    """Parse the reply as JSON, else salvage its complete fact objects; nothing → invalid."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", reply.strip())
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return _salvage(text)
    facts = data.get("faits", []) if isinstance(data, dict) else data if isinstance(data, list) else []
    concepts = data.get("nouveaux_concepts", []) if isinstance(data, dict) else []
    return Proposal("json", [f for f in facts if isinstance(f, dict)],
                    [str(c) for c in concepts if isinstance(c, str)])


def _salvage(text: str) -> Proposal:
    decoder = json.JSONDecoder()
    facts: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and "fait" in obj:
            facts.append(obj)
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    concepts: list[str] = []
    m = re.search(r'"nouveaux_concepts"\s*:\s*(\[[^\]]*\])', text)
    if m:
        try:
            concepts = [str(c) for c in json.loads(m.group(1)) if isinstance(c, str)]
        except json.JSONDecodeError:
            concepts = []
    return Proposal("salvaged" if facts else "invalid", facts, concepts)


def select_lots(lots: list[Lot], budget: int) -> tuple[list[Lot], bool]:
    """Lots in order while they fit; the first always goes. Returns (chosen, first-lot overrun)."""
    chosen: list[Lot] = []
    total = 0
    for lot in lots:
        if chosen and total + lot.chars > budget:
            break
        chosen.append(lot)
        total += lot.chars
    return chosen, bool(chosen) and chosen[0].chars > budget


class Consolidator:
    """One consolidation run per call to `run`."""

    def __init__(self, paths: MemoryPaths, settings: Settings, complete: Complete, emit: Emitter,
                 registre: Registre, fault_hook: FaultHook | None = None, reader: PageReader | None = None,
                 edges: EdgeBuilder | None = None) -> None:
        self.paths = paths
        self.reader = reader
        self.edges = edges
        """Keeps the graph's edges from one run to the next (the same edges as `build_edges`)."""
        """Parses only the pages that changed since its last read (the same pages as `load_pages`)."""
        self.settings = settings
        self.complete = complete
        self.emit = emit
        self.registre = registre
        self.fault_hook = fault_hook

    def run(self, now: datetime) -> dict[str, Any]:
        try:
            with file_lock(self.paths.lock, blocking=False):
                return self._run(now)
        except LockBusy:
            self.emit("consolidate", "skipped", reason="verrou occupé")
            return {"statut": "verrou occupé"}

    def _run(self, now: datetime) -> dict[str, Any]:
        agent_label = LABELS.get(self.settings.language, LABELS["en"])[1]
        lots, overrun = select_lots(pending_lots(self.paths, self.settings, agent_label),
                                    self.settings.consolidation_budget_chars)
        notes = self.registre.pending()
        if not lots and not notes:
            self.emit("consolidate.select", "ineligible", reason="rien en attente")
            return {"statut": "rien à consolider"}
        sources = {s.ref: s for lot in lots for s in lot.sources}
        for note in notes:
            sources[f"registre:{note['id']}"] = Source(f"registre:{note['id']}", note["texte"], False, note["ts"][:10])
        chars = sum(lot.chars for lot in lots)
        self.emit("consolidate.select", "executed", count=len(sources),
                  ids=[lot.batch_id for lot in lots] + [n["id"] for n in notes],
                  params={"chars": chars, "budget": self.settings.consolidation_budget_chars,
                          "first_lot_overrun": overrun, "notes": len(notes)})

        pages = self.reader.load_mutable(self.paths.fiches) if self.reader is not None else load_pages(self.paths.fiches)
        thesaurus = read_json(self.paths.thesaurus, {"vocabulaire": []})
        vocabulary = list(thesaurus["vocabulaire"])
        messages = consolidation_messages(self.settings.language, list(sources.values()),
                                          [(p.name, p.aliases) for p in pages.values()], vocabulary)
        self.emit("consolidate.llm", "eligible", count=len(messages))
        try:
            reply = self.complete(messages)
        except Exception as exc:  # the model failed: inputs stay pending
            self.emit("consolidate.llm", "error", reason=str(exc)[:200])
            return {"statut": "erreur modèle", "erreur": str(exc)[:200]}
        response_hash = hashlib.sha256(reply.encode()).hexdigest()
        proposal = parse_proposal(reply)
        if proposal.status == "invalid":
            self.emit("consolidate.llm", "error", reason="json invalide", params={"response_sha256": response_hash})
            return {"statut": "json invalide", "response_sha256": response_hash}
        self.emit("consolidate.llm", "output", count=len(proposal.facts),
                  params={"parse": proposal.status, "response_sha256": response_hash})

        progress = read_progress(self.paths)
        lot_id = f"c{progress['consolidations'] + 1:04d}"
        admitted, rejected = self._check(proposal, sources)
        catalogue = Catalogue(pages)
        touched, written, refs_by_note, duplicates, used = self._write(
            admitted, sources, catalogue, set(vocabulary) | set(proposal.concepts), lot_id)
        if self.fault_hook is not None:
            self.fault_hook("pages_written")
        if self.settings.summaries_on_consolidate and self.settings.on("summaries"):
            for page in touched.values():
                if summarise(page, self.complete, self.settings, self.emit):
                    self._written(page, page.write(self.paths.fiches))
        new_concepts = sorted(used - set(vocabulary))
        if new_concepts:
            write_json(self.paths.thesaurus, {"vocabulaire": sorted(set(vocabulary) | set(new_concepts))})
        cited = {r for _frag, _verdict, refs in admitted for r in refs}
        held = self._journal(lots, notes, cited, rejected, refs_by_note, lot_id)
        write_index(self.paths, catalogue.pages)
        edges = write_graph(self.paths, catalogue.pages, now, self.edges)
        self.emit("consolidate.git", "skipped", reason="pas de dépôt Git dans la réimplémentation")
        self.emit("consolidate", "output" if written else "executed", count=len(written), ids=written)
        return {
            "statut": "ok", "lot": lot_id, "parse": proposal.status, "admis": len(written),
            "doublons": duplicates, "rejetes": [(text, reason) for text, reason, _ in rejected],
            "fiches": sorted(touched), "aretes": edges, "en_attente": sorted(held),
            "nouveaux_concepts": new_concepts, "response_sha256": response_hash,
        }

    def _check(self, proposal: Proposal, sources: dict[str, Source]):
        admitted: list[tuple[dict[str, Any], Verdict, list[str]]] = []
        rejected: list[tuple[str, str, list[str]]] = []
        checking = self.settings.on("checker")
        self.emit("checker", "eligible" if checking else "ineligible", count=len(proposal.facts),
                  reason=None if checking else "disabled")
        for frag in proposal.facts:
            refs = [r for r in cited_refs(frag) if r in sources]
            if checking:
                verdict = check_fact(frag, sources, self.settings)
            else:
                verdict = Verdict(bool(refs) and bool(str(frag.get("fait", "")).strip()), "contrôle désactivé",
                                  parse_day(frag.get("date_evenement")), parse_day(frag.get("echeance")))
            if verdict.ok:
                admitted.append((frag, verdict, refs))
            else:
                rejected.append((str(frag.get("fait", ""))[:120], verdict.reason, refs))
        if checking:
            self.emit("checker", "executed", count=len(proposal.facts),
                      params={"accepted": len(admitted), "rejected": [[t, r] for t, r, _ in rejected]})
        return admitted, rejected

    def _write(self, admitted, sources: dict[str, Source], catalogue: Catalogue, known: set[str], lot_id: str):
        touched: dict[str, Page] = {}
        written: list[str] = []
        refs_by_note: dict[str, set[str]] = {}
        duplicates = 0
        used: set[str] = set()
        created: list[str] = []
        superseded: list[str] = []
        default_node = DEFAULT_NODE.get(self.settings.language, "user")
        for frag, verdict, refs in admitted:
            node = " ".join(str(frag.get("noeud") or default_node).split()) or default_node
            canonical = frag.get("alias_de")
            if isinstance(canonical, str) and canonical.strip() and fold(canonical) != fold(node):
                page, new = catalogue.resolve_or_create(canonical)
                catalogue.add_alias(page, node)
            else:
                page, new = catalogue.resolve_or_create(node)
            if new:
                created.append(page.slug)
            text = escape_fact_text(str(frag["fait"]))
            concepts = sorted({str(c) for c in frag.get("concepts") or [] if str(c) in known})
            section = re.sub(r"[^a-z_]", "", fold(str(frag.get("section") or "episodic")).replace(" ", "_"))
            fact = Fact(
                id=fact_id(page.slug, text, refs), text=text, section=section or "episodic", refs=sorted(refs),
                said=max(sources[r].day for r in refs), event=_iso(verdict.event), until=_iso(verdict.until),
                type=str(frag.get("type") or "fait"), privacy=normalise_privacy(frag.get("confidentialite")),
                concepts=concepts, lot=lot_id, **_attribute(frag),
            )
            if not page.add_fact(fact):
                duplicates += 1
                continue
            superseded += page.supersede(fact)
            used |= set(concepts)
            if _PRIVACY_RANK[fact.privacy] > _PRIVACY_RANK.get(page.privacy, 0):
                page.privacy = fact.privacy
            touched[page.slug] = page
            written.append(fact.id)
            for ref in refs:
                if ref.startswith("registre:"):
                    refs_by_note.setdefault(ref.removeprefix("registre:"), set()).add(page.slug)
        self.emit("consolidate.alias", "executed", count=len(admitted), ids=created, params={"created": created})
        for page in touched.values():
            body = page.body()
            page.rechain(body)
            self._written(page, page.write(self.paths.fiches, body))
        params: dict[str, Any] = {"pages": sorted(touched), "duplicates": duplicates}
        if superseded:
            params["superseded"] = superseded
        self.emit("consolidate.write", "output" if written else "executed", count=len(written), ids=written,
                  params=params)
        if written:
            self.emit("checker", "selected", ids=written, count=len(written))
        return touched, written, refs_by_note, duplicates, used

    def _written(self, page: Page, text: str) -> None:
        if self.reader is not None:
            self.reader.learn(self.paths.fiches, page, text)

    def _journal(self, lots: list[Lot], notes: list[dict[str, Any]], cited: set[str],
                 rejected: list[tuple[str, str, list[str]]], refs_by_note: dict[str, set[str]],
                 lot_id: str) -> set[str]:
        """Mark inputs integrated; return the refs held back (only with the repair flag)."""
        with file_lock(self.paths.brut / ".verrou", blocking=True):
            progress = load_progress(self.paths)
            progress["consolidations"] += 1
            inputs = [s.ref for lot in lots for s in lot.sources] + [f"registre:{n['id']}" for n in notes]
            held: set[str] = set()
            if self.settings.fix.journal_only_admitted:
                suspect = {r for _t, _reason, refs in rejected for r in refs} - cited
                suspect |= {f"registre:{n['id']}" for n in notes} - cited
                tries = {ref: progress["tentatives"].get(ref, 0) + 1 for ref in sorted(suspect)}
                set_tries(progress, tries, lot_id)
                held = {ref for ref, n in tries.items() if n < self.settings.max_retries}
            done = [r for r in inputs if r not in held]
            mark_lines_integrated(progress, [r for r in done if r.startswith("brut:")], lot_id)
            save_progress(self.paths, progress)
        for note in notes:
            if f"registre:{note['id']}" not in held:
                self.registre.marquer_integre(note["id"], ",".join(sorted(refs_by_note.get(note["id"], ()))), lot_id)
        uncited = [r for r in done if r not in cited]
        behind_rejected = {r for _t, _reason, refs in rejected for r in refs} - cited
        unretried = [r for r in done if r in behind_rejected and not progress["tentatives"].get(r)]  # E-9
        self.emit("consolidate.journal", "executed", count=len(done), ids=done,
                  params={"integrated_without_fact": len(uncited), "held": sorted(held),
                          "rejected_integrated": len(unretried)})
        return held


def _attribute(frag: dict[str, Any]) -> dict[str, str]:
    """`key`/`value` of a proposed exclusive attribute (`attribut`/`valeur`), when both are strings."""
    key, value = frag.get("attribut"), frag.get("valeur")
    if isinstance(key, str) and key.strip() and isinstance(value, str) and value.strip():
        return {"key": " ".join(key.split()), "value": " ".join(value.split())}
    return {}


def _iso(day) -> str | None:
    return day.isoformat() if day else None
