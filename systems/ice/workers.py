"""Post-flight extraction, and the scheduled workers: decay, batch summaries, re-extraction.

Time is always passed in; nothing here reads a clock.
"""

from __future__ import annotations

from datetime import datetime

from .config import IceConfig
from .embedding import Embedder, embed_one
from .episodic import StoredTurn
from .events import EventRelay
from .extraction import (
    ExtractionError,
    LanguageModel,
    extract_messages,
    parse_extraction,
    parse_summary,
    summarize_messages,
)
from .speakers import attribute, speaker_subject
from .stores import Stores
from .strengths import decay_power


def extract_turn(turn: StoredTurn, *, stores: Stores, config: IceConfig, lm: LanguageModel,
                 now: datetime, emit: EventRelay) -> None:
    """Dispatch extraction for one stored turn: Codex triples and procedural patterns."""
    codex_on, proc_on = config.is_on("extract.codex"), config.is_on("extract.procedural")
    if turn.role not in config.extract_roles:
        stores.episodic.mark_extracted(turn.turn_id)
        return
    if not (codex_on or proc_on):
        emit("extract.codex", "skipped", reason="disabled", ids=(turn.turn_id,))
        emit("extract.procedural", "skipped", reason="disabled", ids=(turn.turn_id,))
        return
    try:
        reply = lm.complete(extract_messages(turn.content, speaker=turn.label,
                                             date=turn.timestamp[:10]))
        result = parse_extraction(reply)
    except (ExtractionError, ValueError, KeyError) as exc:
        emit("extract.codex", "error", reason=str(exc), source_turn_ids=(turn.turn_id,))
        stores.episodic.mark_extracted(turn.turn_id)
        return
    src = (turn.turn_id,)
    if codex_on:
        emit("extract.codex", "eligible", source_turn_ids=src)
        subject = speaker_subject(stores.codex, turn.speaker, now=now, conv_id=turn.conversation_id,
                                  turn_id=turn.turn_id)
        out = stores.codex.apply(attribute(result.triples, subject), result.mentions, turn_id=turn.turn_id,
                                 conv_id=turn.conversation_id, now=now,
                                 dedupe=not config.seed_defects.extraction_duplicates)
        changed = out.edges_added + out.edges_superseded
        emit("extract.codex", "executed", count=len(result.triples), source_turn_ids=src,
             params={"entities_created": len(out.entities_created),
                     "entities_resolved": len(out.entities_resolved),
                     "edges_added": len(out.edges_added),
                     "edges_superseded": len(out.edges_superseded),
                     "edges_confirmed": len(out.edges_confirmed),
                     "duplicates_skipped": out.duplicates_skipped, "events": out.events})
        if changed or out.entities_created:
            emit("extract.codex", "output", count=len(changed) + len(out.entities_created),
                 ids=tuple(changed + out.entities_created), source_turn_ids=src)
    else:
        emit("extract.codex", "skipped", reason="disabled", source_turn_ids=src)
    if proc_on:
        emit("extract.procedural", "eligible", source_turn_ids=src)
        added, deactivated = _apply_procedures(result.procedures, turn, stores, now)
        emit("extract.procedural", "executed", count=len(result.procedures),
             source_turn_ids=src, params={"added": len(added), "deactivated": len(deactivated)})
        if added or deactivated:
            emit("extract.procedural", "output", count=len(added) + len(deactivated),
                 ids=tuple(added + deactivated), source_turn_ids=src)
    else:
        emit("extract.procedural", "skipped", reason="disabled", source_turn_ids=src)
    stores.episodic.mark_extracted(turn.turn_id)


def _apply_procedures(ops, turn: StoredTurn, stores: Stores,
                      now: datetime) -> tuple[list[str], list[str]]:
    added: list[str] = []
    deactivated: list[str] = []
    for op in ops:
        if op.action == "add" and op.instruction:
            pid, _new = stores.procedures.add(op.trigger or op.instruction, op.instruction,
                                              turn_id=turn.turn_id, now=now)
            added.append(pid)
        elif op.action == "revoke":
            hit = stores.procedures.revoke(op.about, turn_id=turn.turn_id)
            deactivated += hit
            if not hit and op.fallback_instruction:
                pid, _new = stores.procedures.add(op.about, op.fallback_instruction,
                                                  turn_id=turn.turn_id, now=now)
                added.append(pid)
    return added, deactivated


def run_extraction(*, stores: Stores, config: IceConfig, lm: LanguageModel, now: datetime,
                   emit: EventRelay, all_turns: bool = False) -> int:
    """The extraction worker: pending turns (or every turn, to re-extract). Returns turns seen."""
    name = "worker.extract"
    turns = stores.episodic.all_turns() if all_turns else stores.episodic.pending_extraction()
    if not turns:
        emit(name, "ineligible", reason="no pending turns")
        return 0
    emit(name, "eligible", count=len(turns))
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return 0
    for turn in turns:
        extract_turn(turn, stores=stores, config=config, lm=lm, now=now, emit=emit)
    emit(name, "executed", count=len(turns), params={"all_turns": all_turns})
    emit(name, "output", count=len(turns), source_turn_ids=tuple(t.turn_id for t in turns))
    return len(turns)


def decayed(strength: float, since: str, now: datetime, config: IceConfig) -> float:
    """s <- max(floor, s * 2^(-dt/h)), dt in simulated days since the strength was set."""
    return max(config.decay_floor, strength * decay_power(since, now, config.decay_half_life_days))


def decayed_all(rows: list[tuple[str, float, str]], now: datetime,
                config: IceConfig) -> list[tuple[str, float]]:
    """`decayed` of every (id, strength, set at), with the power of two computed once per
    distinct "set at" (a night's decay or a query's reinforcement stamps many rows alike):
    `decayed` multiplies the strength by that very double, so the results are the same."""
    powers: dict[str, float] = {}
    floor, half_life = config.decay_floor, config.decay_half_life_days
    out = []
    for item_id, strength, since in rows:
        power = powers.get(since)
        if power is None:
            power = powers[since] = decay_power(since, now, half_life)
        out.append((item_id, max(floor, strength * power)))
    return out


def run_decay(*, stores: Stores, config: IceConfig, now: datetime, emit: EventRelay) -> int:
    """Age every strength (turns, Codex edges, patterns). Nothing is deleted.

    A strength at the floor stays at the floor, so only strengths above it are read and
    rewritten: the cost follows what can still change. Counts and the mean strength are
    over every stored strength, as if each had been rewritten. The turns' strengths are aged
    in memory by `EpisodicStore.decay` (`StrengthArrays.decay`), the same values as
    `decayed_all` row by row; Codex edges and patterns (few) by `decayed_all`.
    """
    name = "worker.decay"
    targets = (stores.episodic, stores.codex, stores.procedures)
    counts = [stores.episodic.count()] + [s.strength_stats()[0] for s in targets[1:]]
    total = sum(counts)
    if not total:
        emit(name, "ineligible", reason="nothing stored")
        return 0
    emit(name, "eligible", count=total)
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return 0
    floor = config.decay_floor
    changed = 0
    strength_sum = 0.0
    for store, n in zip(targets, counts, strict=True):
        if store is stores.episodic:
            read, moved, new_sum = store.decay(now, floor, config.decay_half_life_days) if n else (0, 0, 0)
            changed += moved
            strength_sum += new_sum + floor * (n - read)
            continue
        rows = store.strengths(above=floor) if n else []
        updates = decayed_all(rows, now, config)
        changed += sum(1 for (_i, new), (_j, old, _a) in zip(updates, rows, strict=True)
                       if new != old)
        strength_sum += sum(s for _i, s in updates) + floor * (n - len(rows))
        if updates:
            store.set_strengths(updates, now)
    emit(name, "executed", count=total, params={
        "half_life_days": config.decay_half_life_days, "floor": config.decay_floor})
    if changed:
        emit(name, "output", count=changed, params={"mean_strength": round(strength_sum / total, 6)})
    return changed


def run_summaries(*, stores: Stores, config: IceConfig, lm: LanguageModel, embedder: Embedder,
                  now: datetime, emit: EventRelay) -> list[str]:
    """Write a batch summary for every full batch of unsummarised turns, per conversation."""
    name = "worker.summaries"
    size = config.summary_batch_turns
    batches: list[tuple[str, list[StoredTurn]]] = []
    for conv in stores.episodic.conversations():
        covered = stores.summaries.covered_turns(conv)
        turns = stores.episodic.conversation(conv, skip=covered)
        start = 0
        while len(turns) - start >= size:
            batches.append((conv, turns[start:start + size]))
            start += size
    if not batches:
        emit(name, "ineligible", reason=f"fewer than {size} unsummarised turns")
        return []
    emit(name, "eligible", count=len(batches))
    if not config.is_on(name):
        emit(name, "skipped", reason="disabled")
        return []
    written: list[str] = []
    for conv, batch in batches:
        payload = [{"role": t.role, "date": t.timestamp[:10], "text": t.content} for t in batch]
        try:
            text = parse_summary(lm.complete(summarize_messages(payload)))
        except (ExtractionError, ValueError, KeyError) as exc:
            emit(name, "error", reason=str(exc), source_turn_ids=tuple(t.turn_id for t in batch))
            break
        written.append(stores.summaries.add(
            conv, batch[0].index, batch[-1].index, batch[0].timestamp, batch[-1].timestamp,
            text, [t.turn_id for t in batch], embed_one(embedder, text), now))
    emit(name, "executed", count=len(written))
    if written:
        emit(name, "output", count=len(written), ids=tuple(written))
    return written
