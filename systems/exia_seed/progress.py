"""The progress journal: `etat/progress.json` (the head) and `etat/journal.jsonl` (the history).

The state is what `progress.json` alone held until 2026-12-07: the open batch, every closed batch
with its digest and the previous batch's digest, which lines consolidation has integrated, the
retry counts, the last turn's refs and the consolidation counter. Rewritten and parsed whole at
every turn, that file grew with the history. Its growing parts are now rows appended to
`etat/journal.jsonl`, one JSON object a line, in the order they happened:

- `{"ferme": {id, date, fichier, lignes, digest, digest_precedent, ferme_a, raison}}`: a batch closed;
- `{"integres": {batch: [line, ...]}, "lot": "c0003"}`: lines newly integrated (by that run);
- `{"tentatives": {ref: n}, "lot": "c0003"}`: retry counts set (`fix.journal_only_admitted`).

`progress.json` keeps the rest, small, rewritten at each save: `lot_ouvert`, `dernier_tour`,
`consolidations`, and `journal`: the `lignes`, `octets` and `sha256` of the journal it goes with. A
save appends its rows at that recorded size (dropping any tail a crash left after it), then
replaces `progress.json` atomically: the head is the commit point, as the single file was, and a
crash between the two leaves the state of the previous save. A load reads the head; the journal
is read (up to `octets`, checked against `sha256`) only when it is not the one this process holds.
Per-day batch counters (`compteur_jour`) are not stored: when a batch is opened none is open, so
the day's counter was the number of closed batches of that day (`Progress.days`).

A `progress.json` in the single-file layout (it has `lots_fermes`) is read as it is, and its
first save writes the journal whole. `tests/systems/exia_seed/test_exia_progress_journal.py`
compares this store with the single-file rule along random histories, reopened from disk.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from . import jsonfast
from .files import MemoryPaths

HEAD = {"lot_ouvert": None, "dernier_tour": [], "consolidations": 0}
"""The head's values, and their defaults."""


class JournalMismatch(RuntimeError):
    """`etat/journal.jsonl` is not the journal `etat/progress.json` records."""


class Progress(dict):
    """The state as one dict with the keys `progress.json` held: `lot_ouvert`, `dernier_tour` and
    `consolidations` (the head: change them freely), and `lots_fermes`, `integres` and
    `tentatives` (from the journal: change them only through `close_batch`,
    `mark_lines_integrated` and `set_tries`, which log the rows the next save appends)."""

    def __init__(self, head: dict[str, Any] | None = None) -> None:
        super().__init__(lot_ouvert=None, dernier_tour=[], consolidations=0, lots_fermes=[], integres={},
                         tentatives={})
        self.set_head(head or {})
        self.rows: list[dict[str, Any]] = []
        """Rows logged since the last save."""
        self.marker: tuple[int, int, str] | None = (0, 0, hashlib.sha256().hexdigest())
        """(rows, bytes, sha256) of the journal this state was read from; None: not from a journal."""
        self.sha = hashlib.sha256()
        """The running digest of that journal."""
        self.days: dict[str, int] = {}
        """Closed batches per day (the day's batch counter when a batch is opened)."""
        self.pending: dict[str, dict[str, Any]] = {}
        """Closed batches with lines not integrated, by id, in closing order."""

    def set_head(self, head: dict[str, Any]) -> None:
        self["lot_ouvert"] = head.get("lot_ouvert")
        self["dernier_tour"] = list(head.get("dernier_tour", []))
        self["consolidations"] = head.get("consolidations", 0)

    def log(self, row: dict[str, Any]) -> None:
        self.apply(row)
        self.rows.append(row)

    def apply(self, row: dict[str, Any]) -> None:
        """One journal row's change."""
        batch = row.get("ferme")
        if batch is not None:
            self["lots_fermes"].append(batch)
            self.days[batch["date"]] = self.days.get(batch["date"], 0) + 1
            if len(self["integres"].get(batch["id"], ())) < batch["lignes"]:
                self.pending[batch["id"]] = batch
        integres = self["integres"]
        for batch_id, numbers in row.get("integres", {}).items():
            done = integres.get(batch_id)
            merged = sorted(set(done).union(numbers)) if done else list(numbers)
            integres[batch_id] = merged
            closed = self.pending.get(batch_id)
            if closed is not None and len(merged) >= closed["lignes"]:
                del self.pending[batch_id]
        self["tentatives"].update(row.get("tentatives", {}))


def close_batch(progress: dict[str, Any], record: dict[str, Any]) -> None:
    """Record a closed batch."""
    if isinstance(progress, Progress):
        progress.log({"ferme": record})
    else:
        progress["lots_fermes"].append(record)


def mark_lines_integrated(progress: dict[str, Any], refs: Sequence[str], lot: str | None = None) -> None:
    """Record raw refs as integrated in the consolidation journal (by run `lot`, when given)."""
    new: dict[str, set[int]] = {}
    for ref in refs:
        _, batch_id, number = ref.split(":")
        new.setdefault(batch_id, set()).add(int(number))
    integres = progress["integres"]
    if not isinstance(progress, Progress):
        for batch_id, numbers in new.items():
            integres[batch_id] = sorted(numbers.union(integres.get(batch_id, [])))
        return
    added = {b: sorted(n.difference(integres.get(b, ()))) for b, n in new.items()}
    added = {b: n for b, n in added.items() if n}
    if added:
        progress.log({"integres": added, **({"lot": lot} if lot else {})})


def set_tries(progress: dict[str, Any], tries: dict[str, int], lot: str | None = None) -> None:
    """Record retry counts (`fix.journal_only_admitted`)."""
    if not tries:
        return
    if isinstance(progress, Progress):
        progress.log({"tentatives": dict(tries), **({"lot": lot} if lot else {})})
    else:
        progress["tentatives"].update(tries)


def whole_rows(progress: dict[str, Any]) -> list[dict[str, Any]]:
    """Journal rows giving a state's closed batches, integrated lines and retry counts."""
    rows: list[dict[str, Any]] = [{"ferme": batch} for batch in progress.get("lots_fermes", [])]
    if progress.get("integres"):
        rows.append({"integres": {b: list(n) for b, n in progress["integres"].items()}})
    if progress.get("tentatives"):
        rows.append({"tentatives": dict(progress["tentatives"])})
    return rows


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def replay(rows: Iterable[dict[str, Any]], head: dict[str, Any] | None = None) -> Progress:
    state = Progress(head)
    for row in rows:
        state.apply(row)
    return state


class ProgressStore:
    """`progress.json` and `journal.jsonl` of one state directory, the state kept in memory.

    A load hands back the state it holds when the head on disk records the journal that state was
    read from or last saved (its head values are always the file's); otherwise it reads the
    journal. The state handed out is the caller's to change and save; rows logged and not saved
    make the next load read the journal again."""

    def __init__(self, paths: MemoryPaths) -> None:
        self.head = paths.progress
        self.journal = paths.journal
        self._state: Progress | None = None
        self.reads = 0
        """Journals read from disk (work counter)."""

    def load(self) -> Progress:
        if not self.head.exists():
            self._state = Progress()
            return self._state
        head = json.loads(self.head.read_text(encoding="utf-8"))
        if "lots_fermes" in head:  # the single-file layout: its first save writes the journal
            state = replay(whole_rows(head), head)
            state.marker = None
            self._state = state
            return state
        marker = (head["journal"]["lignes"], head["journal"]["octets"], head["journal"]["sha256"])
        state = self._state
        if state is None or state.rows or state.marker != marker:
            state = self._read(head, marker)
        else:
            state.set_head(head)
        self._state = state
        return state

    def _read(self, head: dict[str, Any], marker: tuple[int, int, str]) -> Progress:
        self.reads += 1
        lines, size, digest = marker
        data = b""
        if size:
            with self.journal.open("rb") as fh:
                data = fh.read(size)
        sha = hashlib.sha256(data)
        texts = data.decode("utf-8").splitlines()
        if len(data) != size or len(texts) != lines or sha.hexdigest() != digest:
            raise JournalMismatch(f"{self.journal} is not the journal {self.head} records")
        state = replay(map(json.loads, texts), head)
        state.marker, state.sha = marker, sha
        return state

    def save(self, progress: dict[str, Any]) -> None:
        if isinstance(progress, Progress) and progress.marker is not None:
            lines, size, _ = progress.marker
            data = "".join(map(_line, progress.rows)).encode("utf-8")
            if data:
                self.journal.parent.mkdir(parents=True, exist_ok=True)
                with self.journal.open("a+b") as fh:
                    if fh.seek(0, os.SEEK_END) < size:
                        raise JournalMismatch(f"{self.journal} is shorter than {self.head} records")
                    fh.truncate(size)
                    fh.write(data)
                progress.sha.update(data)
            marker = (lines + len(progress.rows), size + len(data), progress.sha.hexdigest())
            state: Progress | None = progress
        else:  # a state from elsewhere, or in the single-file layout: the journal written whole
            rows = whole_rows(progress)
            data = "".join(map(_line, rows)).encode("utf-8")
            self.journal.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.journal.with_name(self.journal.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, self.journal)
            marker = (len(rows), len(data), hashlib.sha256(data).hexdigest())
            state = None
        head = {k: progress.get(k, default) for k, default in HEAD.items()}
        head["journal"] = {"lignes": marker[0], "octets": marker[1], "sha256": marker[2]}
        self.head.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.head.with_name(self.head.name + ".tmp")
        tmp.write_text(jsonfast.dumps(head) + "\n", encoding="utf-8")
        os.replace(tmp, self.head)
        if state is not None:
            state.rows, state.marker = [], marker
        self._state = state


_STORES: OrderedDict[str, ProgressStore] = OrderedDict()
_STORES_KEPT = 8
"""Stores kept in memory (the most recently used state directories)."""


def store(paths: MemoryPaths) -> ProgressStore:
    key = str(paths.progress)
    found = _STORES.pop(key, None) or ProgressStore(paths)
    _STORES[key] = found
    while len(_STORES) > _STORES_KEPT:
        _STORES.popitem(last=False)
    return found


def load_progress(paths: MemoryPaths) -> Progress:
    """The progress state, the caller's to change and save."""
    return store(paths).load()


def read_progress(paths: MemoryPaths) -> Progress:
    """The progress state, for reading (the same as `load_progress`)."""
    return store(paths).load()


def save_progress(paths: MemoryPaths, progress: dict[str, Any]) -> None:
    store(paths).save(progress)
