"""The register of explicit notes: the second admission path, beside raw conversation.

`Registre.noter` escapes structure, normalises privacy and the node hint, numbers the note and
appends it under a lock. It does not filter secrets itself (SEED, E-12): the provider's note
tool refuses them before calling it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from .files import MemoryPaths, append_jsonl, file_lock, read_jsonl
from .text import fold

PRIVACY_LEVELS = {
    "normal": "normal", "public": "normal", "": "normal",
    "private": "private", "prive": "private", "privee": "private", "personal": "private",
    "confidential": "confidential", "confidentiel": "confidential", "confidentielle": "confidential",
    "secret": "confidential",
}


def normalise_privacy(value: object) -> str:
    """Map a free privacy label onto `normal`, `private` or `confidential`."""
    return PRIVACY_LEVELS.get(fold(str(value or "")), "normal")


def escape_structure(text: str) -> str:
    """Neutralise Markdown headings, rules, front-matter fences and comment delimiters."""
    text = " ".join(text.split())
    text = text.replace("<!--", "<!-").replace("-->", "->")
    text = re.sub(r"^(#+|-{3,}|={3,})", lambda m: "\\" + m.group(1), text)
    return text


class Registre:
    """Append-only notes with an integration journal (`registre/integres.jsonl`)."""

    def __init__(self, paths: MemoryPaths) -> None:
        self.paths = paths
        self._lock = paths.notes.with_name(".verrou")

    def noter(self, texte: str, *, now: datetime, confidentialite: str = "normal",
              noeud: str | None = None, contexte: str = "primary") -> str:
        """Append a note and return its id."""
        with file_lock(self._lock, blocking=True):
            number = len(read_jsonl(self.paths.notes)) + 1
            note_id = f"n{number:05d}"
            append_jsonl(self.paths.notes, [{
                "id": note_id, "texte": escape_structure(texte), "confidentialite": normalise_privacy(confidentialite),
                "noeud": " ".join(noeud.split()) if noeud else None, "ts": now.isoformat(), "contexte": contexte,
            }])
        return note_id

    def pending(self) -> list[dict[str, Any]]:
        """Notes absent from the integration journal, in order."""
        done = {row["note_id"] for row in read_jsonl(self.paths.integrated_notes)}
        return [n for n in read_jsonl(self.paths.notes) if n["id"] not in done]

    def marquer_integre(self, note_id: str, cite_dans: str, lot_id: str) -> None:
        append_jsonl(self.paths.integrated_notes, [{"note_id": note_id, "cite_dans": cite_dans, "lot_id": lot_id}])

    def all_notes(self) -> dict[str, dict[str, Any]]:
        return {n["id"]: n for n in read_jsonl(self.paths.notes)}
