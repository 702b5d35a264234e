"""The typed stores of one ICE instance, each in its own SQLite file under the state dir."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .codex import Codex
from .documents import DocumentStore
from .embedding import Embedder
from .episodic import EpisodicStore
from .overlays import SlotStore, SummaryStore
from .procedures import ProcedureStore

FILES = ("episodic.sqlite", "codex.sqlite", "procedural.sqlite", "documents.sqlite",
         "summaries.sqlite", "slots.sqlite")


@dataclass
class Stores:
    episodic: EpisodicStore
    codex: Codex
    procedures: ProcedureStore
    documents: DocumentStore
    summaries: SummaryStore
    slots: SlotStore

    @classmethod
    def open(cls, state_dir: Path, embedder: Embedder) -> Stores:
        state_dir.mkdir(parents=True, exist_ok=True)
        return cls(
            episodic=EpisodicStore(state_dir / "episodic.sqlite"),
            codex=Codex(state_dir / "codex.sqlite", embedder),
            procedures=ProcedureStore(state_dir / "procedural.sqlite", embedder),
            documents=DocumentStore(state_dir / "documents.sqlite", embedder),
            summaries=SummaryStore(state_dir / "summaries.sqlite"),
            slots=SlotStore(state_dir / "slots.sqlite"),
        )

    def close(self) -> None:
        for store in (self.episodic, self.codex, self.procedures, self.documents, self.summaries,
                      self.slots):
            store.close()
