"""A leak zoo: adapters that cheat or misbehave in ways only a campaign-level check can see.

Each is an honest-looking full-context memory with one defect. Adapters that need the
future read the trajectory file named in their options, as a cheating adapter could read
any file it finds; they render turns the way built-in adapters do ("[date] Speaker (role):"),
so a check that is fooled by rendering prefixes would show here too.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from datetime import datetime
from pathlib import Path

from lsrep.adapters.formatting import turn_line
from pydantic import BaseModel, ConfigDict

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn


class _Transcript(MemoryAdapter):
    """Base: keeps every ingested turn and returns them all, one fragment per turn."""

    supports_snapshot = True

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.lines: list[tuple[str, str]] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.lines.append((turn.turn_id, turn_line(turn)))

    def transcript(self) -> list[Fragment]:
        return [Fragment(text=text, source_turn_ids=(tid,)) for tid, text in self.lines]

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple(self.transcript()))

    def snapshot(self) -> list[tuple[str, str]]:
        return list(self.lines)

    def restore(self, snapshot: list[tuple[str, str]]) -> None:
        self.lines = list(snapshot)

    def state_digest(self) -> str:
        return hashlib.sha256(json.dumps(self.lines).encode()).hexdigest()


class FileOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trajectory_path: str
    """The trajectory file the cheat reads."""


class _FutureReader(_Transcript):
    Options = FileOptions

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        super().reset(conversation_id=conversation_id, now=now)
        lines = Path(self.setup.options.trajectory_path).read_text().splitlines()
        self.all_turns = [json.loads(line) for line in lines if line.strip()]

    def future(self, n: int = 3) -> list[dict]:
        seen = {tid for tid, _ in self.lines}
        return [t for t in self.all_turns if t["turn_id"] not in seen][:n]

    @staticmethod
    def render(t: dict) -> str:
        who = f"{t.get('speaker')} ({t['role']})" if t.get("speaker") else t["role"]
        return f"[{t['timestamp'][:10]} {t['timestamp'][11:16]}] {who}: {t['content']}"


class FutureReadAdapter(_FutureReader):
    """Adds the next turns of the file to every context, citing them truthfully."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        extra = [Fragment(text=self.render(t), source_turn_ids=(t["turn_id"],)) for t in self.future()]
        return QueryResult(fragments=tuple(self.transcript() + extra))


class LaunderedLeakAdapter(_FutureReader):
    """Adds the next turns' text but attributes it to the latest ingested turn (citations look clean)."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self.lines:
            return QueryResult()
        latest = self.lines[-1][0]
        extra = [Fragment(text=self.render(t), source_turn_ids=(latest,)) for t in self.future()]
        return QueryResult(fragments=tuple(self.transcript() + extra))


class SmugglingSummaryAdapter(_FutureReader):
    """Returns one derived summary of the history that smuggles in a fact said later."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self.lines:
            return QueryResult()
        ahead = self.future(1)
        said = " ".join(text.split(": ", 1)[-1] for _, text in self.lines[-3:])
        smuggled = f" Also: {ahead[0]['content']}" if ahead else ""
        summary = Fragment(text=f"Summary of the journal so far: {said}{smuggled}",
                           source_turn_ids=tuple(tid for tid, _ in self.lines[-3:]), kind="summary")
        return QueryResult(fragments=(summary,))


class DuplicateIngestAdapter(_Transcript):
    """Stores every turn twice (a double write), and returns both copies."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        super().ingest(turn, now=now)
        super().ingest(turn, now=now)


class RetryDuplicateAdapter(_Transcript):
    """A write that 'times out' after it landed and is retried: the harness sees no error, the
    store holds the turn twice, the second copy rendered without the date prefix."""

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        for attempt in range(2):
            try:
                if attempt == 0:
                    self.lines.append((turn.turn_id, turn_line(turn)))
                    raise TimeoutError("write acknowledged late")
                self.lines.append((turn.turn_id, f"{turn.speaker or turn.role}: {turn.content}"))
                return
            except TimeoutError:
                continue


class BudgetCheatAdapter(_Transcript):
    """Declares it honours the retrieval budget, then returns the whole transcript anyway."""

    honours_budget = True


class NondeterministicAdapter(_Transcript):
    """Returns a random half of its transcript, from an unseeded generator."""

    deterministic = True  # the claim the campaign check tests

    def query(self, question: str, *, now: datetime) -> QueryResult:
        frags = self.transcript()
        rng = random.SystemRandom()
        return QueryResult(fragments=tuple(f for f in frags if rng.random() < 0.5))


class UnsourcedAdapter(_Transcript):
    """Adds invented text, not declared derived, to every context."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        invented = Fragment(text="Maya adopted a grey parrot called Captain Biscuit from the zoo in Madrid.",
                            source_turn_ids=(self.lines[-1][0],) if self.lines else ())
        return QueryResult(fragments=tuple(self.transcript()) + (invented,))


class MisattributedAdapter(_Transcript):
    """Cites the wrong replayed turn for every fragment (each cites its predecessor's id)."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        frags = []
        for i, (_, text) in enumerate(self.lines):
            cited = self.lines[i - 1][0] if i else self.lines[-1][0]
            frags.append(Fragment(text=text, source_turn_ids=(cited,)))
        return QueryResult(fragments=tuple(frags))


class OverCitingAdapter(_Transcript):
    """Returns one unrelated line citing every turn it has seen: citation recall 1, content none."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self.lines:
            return QueryResult()
        text = "Weather report: cloudy skies with scattered showers expected over the northern hills tonight."
        return QueryResult(fragments=(Fragment(text=text, source_turn_ids=tuple(t for t, _ in self.lines)),))


class DeclaredNondeterministicAdapter(NondeterministicAdapter):
    """The same noise, declared: its repetitions are expected to differ."""

    deterministic = False
_SYNONYMS = {"i": "they", "my": "their", "me": "them", "we": "they", "our": "their", "went": "headed",
             "is": "seems", "was": "seemed", "and": "plus", "to": "toward", "a": "one", "the": "that",
             "it": "this", "so": "very", "got": "obtained", "have": "own", "has": "owns", "at": "by"}


def paraphrase(text: str) -> str:
    """Reworded without a verbatim word triple: function words swapped for synonyms, a filler after
    every second word; names, numbers and content words kept."""
    words = re.findall(r"[\w'-]+", text)
    out = []
    for i, w in enumerate(words):
        out.append(_SYNONYMS.get(w.lower(), w))
        if i % 2:
            out.append("basically")
    return " ".join(out)


def reorder(text: str) -> str:
    """The same words in reverse order: every word kept, no word sequence kept."""
    return " ".join(reversed(re.findall(r"[\w'-]+", text)))


class ParaphrasingLeakAdapter(_FutureReader):
    """A 'summary' (derived) that retells the next turns of the file in other words."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self.lines:
            return QueryResult()
        latest = self.lines[-1][0]
        told = [Fragment(text=f"Recap: {paraphrase(t['content'])}", source_turn_ids=(latest,), kind="summary")
                for t in self.future()]
        return QueryResult(fragments=tuple(self.transcript() + told))


class ReorderingLeakAdapter(_FutureReader):
    """Adds the next turns with their words reordered, attributed to the latest ingested turn."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if not self.lines:
            return QueryResult()
        latest = self.lines[-1][0]
        told = [Fragment(text=reorder(t["content"]), source_turn_ids=(latest,)) for t in self.future()]
        return QueryResult(fragments=tuple(self.transcript() + told))
