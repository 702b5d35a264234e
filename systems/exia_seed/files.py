"""The state directory's layout, deterministic JSON files, and the advisory file locks."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import jsonfast


class LockBusy(RuntimeError):
    """The non-blocking consolidation lock is held by another writer."""


@dataclass(frozen=True)
class MemoryPaths:
    """Every path under `<hermes_home>/<memory_dir>/`."""

    root: Path

    @property
    def brut(self) -> Path:
        return self.root / "brut"

    @property
    def progress(self) -> Path:
        return self.root / "etat" / "progress.json"

    @property
    def journal(self) -> Path:
        """The progress journal's history: closed batches, integrated lines, retry counts."""
        return self.root / "etat" / "journal.jsonl"

    @property
    def retraits(self) -> Path:
        return self.root / "etat" / "retraits.jsonl"

    @property
    def origins(self) -> Path:
        """Which host message (turn id) each raw line came from."""
        return self.root / "etat" / "origines.jsonl"

    @property
    def notes(self) -> Path:
        return self.root / "registre" / "notes.jsonl"

    @property
    def integrated_notes(self) -> Path:
        return self.root / "registre" / "integres.jsonl"

    @property
    def fiches(self) -> Path:
        return self.root / "fiches"

    @property
    def index(self) -> Path:
        return self.root / "index.md"

    @property
    def aretes(self) -> Path:
        return self.root / "graphe" / "aretes.json"

    @property
    def thesaurus(self) -> Path:
        return self.root / "concepts" / "thesaurus.json"

    @property
    def recall_journal(self) -> Path:
        return self.root / "journal" / "rappel.jsonl"

    @property
    def lock(self) -> Path:
        """The consolidation lock shared by cooperating writers."""
        return self.root / ".lock"

    def ensure(self) -> None:
        for sub in ("brut", "etat", "registre", "fiches", "graphe", "concepts", "journal"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.lock.touch(exist_ok=True)


def read_json(path: Path, default: Any) -> Any:
    if not path.exists():
        return default
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    """Write sorted, indented JSON through a temporary file and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # The text of json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True), written faster.
    tmp.write_text(jsonfast.dumps(data) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def append_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


@contextmanager
def file_lock(path: Path, *, blocking: bool) -> Iterator[None]:
    """Hold an exclusive `flock` on `path`; non-blocking raises `LockBusy` when it is taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        flags = fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(fh.fileno(), flags)
        except BlockingIOError as exc:
            raise LockBusy(str(path)) from exc
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
