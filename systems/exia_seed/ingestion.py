"""Raw capture: timestamped speaker lines in daily batches, closure with a digest chain.

Batches live in `brut/<day>-<n>.open.md` while open and are renamed `brut/<day>-<n>.md` on
closure; the progress journal (`progress.py`: `etat/progress.json` and `etat/journal.jsonl`)
records the open batch, every closed batch with its digest and the previous batch's digest, and
which lines consolidation has integrated. Raw files are never rewritten: withdrawals go to
`etat/retraits.jsonl`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .events import Emitter
from .files import MemoryPaths, append_jsonl, file_lock, read_jsonl
from .progress import (  # noqa: F401  (the journal's functions, where callers found them)
    close_batch,
    load_progress,
    mark_lines_integrated,
    read_progress,
    save_progress,
)
from .prompts import Source
from .settings import Settings

_RAW_LINE = re.compile(r"^\[(?P<time>\d\d:\d\d)\] (?P<speaker>[^:]+): (?P<text>.*)$")
# Retention commands count only when addressed to the memory as a command: at the start of a
# sentence (after the host's optional `[Name]` prefix and softeners such as "please", "ok", "can you"),
# never negated or embedded ("don't ever forget that…", "I won't forget that", "lost and forget
# that"), and "forget it" (a dismissal) is no command. Measured on the 3,944 turns of the shared
# LoCoMo cut: the unanchored seed patterns fired on 3 ordinary turns, these on none.
_HOST_NAME = re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*")
_LEAD = (r"(?:^|(?<=[.!?;:\n])\s*)\s*"
         r"(?:(?:please|pls|ok(?:ay)?|oh|actually|also|and|so|hey|s'il te pla[iî]t|stp)[,\s]+)*"
         r"(?:(?:can|could|would|will) you (?:please )?|tu peux |peux-tu )?")
_END = r"(?=\s*(?:[.!?;]|$|please\b|s'il))"
_OMIT = re.compile(
    r"\boff the record\b"
    r"|" + _LEAD + r"(?:don'?t|do not) (?:remember|save|store|record|keep) (?:this|that|it)\b"
    r"|" + _LEAD + r"(?:ne retiens pas|ne m[ée]morise pas)\b|\bhors m[ée]moire\b",
    re.IGNORECASE,
)
_WITHDRAW = re.compile(
    _LEAD + r"(?:"
    r"forget (?:what|everything) i (?:just )?(?:said|told you|wrote)[^.!?\n]*"
    r"|(?:forget|scratch|delete|erase) (?:that|this) from (?:your )?memory"
    r"|forget (?:that|about that|this)" + _END +
    r"|forget (?:that|about) (?=(?:i|i'm|i've|my|we|our|me)\b)[^.!?\n]*"
    r"|oublie ce que je (?:viens de dire|t'ai dit)[^.!?\n]*"
    r"|oublie [çc]a" + _END +
    r")[.!?,;]?",
    re.IGNORECASE,
)


def omit_requested(text: str) -> bool:
    """The user asked that the current turn not be written."""
    return bool(_OMIT.search(_HOST_NAME.sub("", text, count=1)))


def split_withdrawal(text: str) -> tuple[bool, str]:
    """Whether the user withdrew the previous turn, and the text without the command.

    A command with its own object ("forget that I live in Lisbon") is removed with that object, so
    the fact asked to be forgotten is not captured again by the turn that asks.
    """
    name = _HOST_NAME.match(text)
    prefix = name.group(0) if name else ""
    stripped, n = _WITHDRAW.subn("", text[len(prefix):])
    rest = " ".join(stripped.split())
    return n > 0, f"{prefix}{rest}" if rest else ""


@dataclass(frozen=True)
class RawLine:
    """A line to append: who said what, when, and which host message it came from."""

    time: datetime
    speaker: str
    text: str
    origin: str | None = None


@dataclass(frozen=True)
class Closure:
    """A batch that was just closed."""

    batch_id: str
    reason: str
    digest: str
    previous_digest: str
    lines: int


@dataclass(frozen=True)
class Lot:
    """A closed batch's lines that consolidation has not integrated yet."""

    batch_id: str
    day: str
    sources: tuple[Source, ...]

    @property
    def chars(self) -> int:
        return sum(len(s.text) + 1 for s in self.sources)


class RawWriter:
    """Appends lines to the open batch and closes batches (day, volume, session, reset, forced)."""

    def __init__(self, paths: MemoryPaths, settings: Settings, emit: Emitter) -> None:
        self.paths = paths
        self.settings = settings
        self.emit = emit
        self._append_lock = paths.brut / ".verrou"

    def append(self, lines: Sequence[RawLine]) -> tuple[list[str], list[Closure]]:
        """Write lines in order; return their refs and the batches closed on the way."""
        refs: list[str] = []
        closures: list[Closure] = []
        with file_lock(self._append_lock, blocking=True):
            progress = load_progress(self.paths)
            for line in lines:
                day = line.time.date().isoformat()
                open_lot = progress["lot_ouvert"]
                if open_lot is not None and open_lot["date"] != day:
                    closures.append(self._close(progress, "jour", line.time))
                if progress["lot_ouvert"] is None:
                    self._open(progress, day)
                refs.append(self._write(progress, line))
                open_lot = progress["lot_ouvert"]
                if (open_lot["lignes"] >= self.settings.batch_max_lines
                        or open_lot["caracteres"] >= self.settings.batch_max_chars):
                    closures.append(self._close(progress, "volume", line.time))
            progress["dernier_tour"] = refs
            save_progress(self.paths, progress)
        origins = [{"ref": r, "origine": ln.origin} for r, ln in zip(refs, lines, strict=True) if ln.origin]
        if origins:
            append_jsonl(self.paths.origins, origins)
        return refs, closures

    def close(self, now: datetime, reason: str) -> Closure | None:
        """Close the open batch, if there is one."""
        with file_lock(self._append_lock, blocking=True):
            if read_progress(self.paths)["lot_ouvert"] is None:
                return None
            progress = load_progress(self.paths)
            closure = self._close(progress, reason, now)
            save_progress(self.paths, progress)
            return closure

    def withdraw_previous(self, now: datetime) -> list[str]:
        """Record the previous turn's lines as withdrawn; raw files and pages stay as they are."""
        progress = read_progress(self.paths)
        refs = list(progress["dernier_tour"])
        if refs:
            append_jsonl(self.paths.retraits, [{"ref": r, "ts": now.isoformat()} for r in refs])
        return refs

    def _open(self, progress: dict[str, Any], day: str) -> None:
        n = progress.days.get(day, 0) + 1  # none is open: every batch of the day is closed
        batch_id = f"{day}-{n:03d}"
        progress["lot_ouvert"] = {
            "id": batch_id, "date": day, "fichier": f"brut/{batch_id}.open.md", "lignes": 0, "caracteres": 0,
        }

    def _write(self, progress: dict[str, Any], line: RawLine) -> str:
        lot = progress["lot_ouvert"]
        text = " ".join(line.text.split())
        row = f"[{line.time.strftime('%H:%M')}] {line.speaker}: {text}\n"
        with (self.paths.root / lot["fichier"]).open("a", encoding="utf-8") as fh:
            fh.write(row)
        lot["lignes"] += 1
        lot["caracteres"] += len(row)
        return f"brut:{lot['id']}:{lot['lignes']}"

    def _close(self, progress: dict[str, Any], reason: str, now: datetime) -> Closure:
        lot = progress["lot_ouvert"]
        self.emit("batch.close", "eligible", reason=reason, ids=[lot["id"]])
        open_path = self.paths.root / lot["fichier"]
        closed_name = f"brut/{lot['id']}.md"
        open_path.rename(self.paths.root / closed_name)
        digest = hashlib.sha256((self.paths.root / closed_name).read_bytes()).hexdigest()
        previous = progress["lots_fermes"][-1]["digest"] if progress["lots_fermes"] else ""
        close_batch(progress, {
            "id": lot["id"], "date": lot["date"], "fichier": closed_name, "lignes": lot["lignes"],
            "digest": digest, "digest_precedent": previous, "ferme_a": now.isoformat(), "raison": reason,
        })
        progress["lot_ouvert"] = None
        self.emit("batch.close", "executed", reason=reason, ids=[lot["id"]], count=lot["lignes"],
                  params={"digest": digest, "digest_precedent": previous})
        return Closure(lot["id"], reason, digest, previous, lot["lignes"])


def withdrawn_refs(paths: MemoryPaths) -> set[str]:
    return {row["ref"] for row in read_jsonl(paths.retraits)}


def pending_lots(paths: MemoryPaths, settings: Settings, agent_label: str) -> list[Lot]:
    """Closed batches with lines neither integrated nor withdrawn, in closing order."""
    progress = read_progress(paths)
    withdrawn = withdrawn_refs(paths)
    lots: list[Lot] = []
    for batch in list(progress.pending.values()):  # closed batches with lines not integrated
        sources = batch_sources(paths, settings, agent_label, batch,
                                set(progress["integres"].get(batch["id"], [])), withdrawn)
        if sources:
            lots.append(Lot(batch["id"], batch["date"], tuple(sources)))
    return lots


def batch_sources(paths: MemoryPaths, settings: Settings, agent_label: str, batch: dict,
                  done: set[int], withdrawn: set[str]) -> list[Source]:
    """A closed batch's raw lines still to integrate: neither in `done` (line numbers) nor withdrawn."""
    sources: list[Source] = []
    text = (paths.root / batch["fichier"]).read_text(encoding="utf-8")
    for number, raw in enumerate(text.splitlines(), start=1):
        ref = f"brut:{batch['id']}:{number}"
        m = _RAW_LINE.match(raw)
        if number in done or ref in withdrawn or not m:
            continue
        is_agent = m["speaker"] == agent_label and not settings.no_agent_speaker
        sources.append(Source(
            ref=ref, text=f"{m['speaker']}: {m['text']}", is_agent=is_agent, day=batch["date"], time=m["time"],
        ))
    return sources


def origin_map(paths: MemoryPaths) -> dict[str, str]:
    """Raw ref → the host message id it came from."""
    return {row["ref"]: row["origine"] for row in read_jsonl(paths.origins)}
