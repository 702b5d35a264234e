"""A tiny keyword memory. It knows nothing of LSREP: it could ship on its own."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field

STOPWORDS = frozenset("a an and at did do does i in is it my me now of on or the to was what which who".split())


def words(text: str) -> set[str]:
    """Lowercase words of text, without stopwords."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


@dataclass(frozen=True)
class Entry:
    """One remembered line, under the caller's key."""

    key: str
    session: str
    text: str


@dataclass
class KeywordMemory:
    """Lines in the order they were added; recall ranks them by words shared with a question."""

    entries: list[Entry] = field(default_factory=list)

    def add(self, key: str, session: str, text: str) -> bool:
        """Remember a line; a key already held is not stored again (returns False)."""
        if any(e.key == key for e in self.entries):
            return False
        self.entries.append(Entry(key, session, text))
        return True

    def search(self, question: str, limit: int) -> list[tuple[Entry, int]]:
        """Up to `limit` entries sharing words with the question: most shared first, older first on ties."""
        asked = words(question)
        scored = [(e, len(asked & words(e.text))) for e in self.entries]
        hits = [(e, n) for e, n in scored if n > 0]
        hits.sort(key=lambda hit: -hit[1])  # a stable sort keeps time order among ties
        return hits[:limit]

    def recent(self, n: int) -> list[Entry]:
        """The last n entries, oldest first."""
        return self.entries[-n:] if n > 0 else []

    def dump(self) -> list[dict[str, str]]:
        return [asdict(e) for e in self.entries]

    def load(self, rows: list[dict[str, str]]) -> None:
        self.entries = [Entry(**row) for row in rows]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.dump(), sort_keys=True).encode()).hexdigest()
