"""Subject pages (`fiches/<slug>.md`): Markdown with front matter and one line per fact.

Layout::

    ---
    name: "Rex"
    aliases: ["the dog"]
    ...
    ---
    # Rex

    ## procedural
    - Always walk Rex before 8am. <!-- {"id": "f...", "refs": [...], ...} -->

Front-matter values and fact metadata are JSON, so the file reads back exactly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .text import fold, slugify

SECTION_ORDER = ("procedural", "etat_agent", "semantic", "episodic")
_FRONT_KEYS = (
    "name", "aliases", "concepts", "privacy", "summary", "summary_sources", "summary_of",
    "keywords", "hash", "prev_hash",
)


@dataclass
class Fact:
    """One admitted fact and its provenance."""

    id: str
    text: str
    section: str
    refs: list[str]
    said: str | None = None
    """Utterance date: the latest date among the cited sources."""
    event: str | None = None
    """Event date (`date_evenement`), when the checker kept one."""
    until: str | None = None
    """Deadline of a prospective fact (`echeance`)."""
    type: str = "fait"
    privacy: str = "normal"
    concepts: list[str] = field(default_factory=list)
    lot: str | None = None
    """Consolidation run that admitted it."""
    key: str | None = None
    """Exclusive attribute the fact states (`lives_in`, ...; attributes.py), if any."""
    value: str | None = None
    """The attribute's value as stated."""
    superseded_by: str | None = None
    """The later fact that states another value of `key` on this page (this one is history)."""

    def to_line(self) -> str:
        meta = {"id": self.id, "refs": self.refs, "said": self.said, "event": self.event, "until": self.until,
                "type": self.type, "privacy": self.privacy, "concepts": self.concepts, "lot": self.lot}
        # Written only when set, so a page without attributes reads and hashes as before.
        meta.update({k: v for k, v in (("key", self.key), ("value", self.value),
                                       ("superseded_by", self.superseded_by)) if v is not None})
        return f"- {self.text} <!-- {json.dumps(meta, ensure_ascii=False, sort_keys=True)} -->"

    @classmethod
    def from_line(cls, line: str, section: str) -> Fact:
        text, _, meta = line[2:].rpartition(" <!-- ")
        return cls(text=text, section=section, **json.loads(meta.removesuffix(" -->")))

    @property
    def shown_date(self) -> str | None:
        return self.event or self.said

    @property
    def history_mark(self) -> str:
        """` [superseded]` on a fact a later value replaced, else empty: what a reader is shown."""
        return " [superseded]" if self.superseded_by else ""


def fact_id(node: str, text: str, refs: list[str]) -> str:
    digest = hashlib.sha256(json.dumps([node, text, sorted(refs)], ensure_ascii=False).encode()).hexdigest()
    return "f" + digest[:10]


def escape_fact_text(text: str) -> str:
    return " ".join(text.split()).replace("<!--", "<!-").replace("-->", "->")


@dataclass
class Page:
    """A subject page."""

    slug: str
    name: str
    aliases: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    privacy: str = "normal"
    summary: str = ""
    summary_sources: list[str] = field(default_factory=list)
    """Fact ids whose lines fed the current summary."""
    summary_of: str = ""
    """The page hash the summary was written for (stale when it differs from `hash`)."""
    keywords: list[str] = field(default_factory=list)
    hash: str = ""
    prev_hash: str = ""
    facts: list[Fact] = field(default_factory=list)

    def names(self) -> list[str]:
        return [self.name, *self.aliases]

    def add_fact(self, fact: Fact) -> bool:
        """Append unless the same text with the same refs is already on the page."""
        key = (fact.text, sorted(fact.refs))
        if any((f.text, sorted(f.refs)) == key for f in self.facts):
            return False
        self.facts.append(fact)
        self.concepts = sorted(set(self.concepts) | set(fact.concepts))
        return True

    def supersede(self, fact: Fact) -> list[str]:
        """Mark current facts stating another value of `fact.key` superseded by it; their ids.

        Only facts said no later than `fact` are replaced (a late-consolidated older statement
        does not overwrite a newer one)."""
        if not fact.key:
            return []
        replaced = []
        for old in self.facts:
            if (old is not fact and old.key == fact.key and old.superseded_by is None
                    and (old.said or "") <= (fact.said or "") and fold(old.value or "") != fold(fact.value or "")):
                old.superseded_by = fact.id
                replaced.append(old.id)
        return replaced

    def sections(self) -> dict[str, list[Fact]]:
        grouped: dict[str, list[Fact]] = {}
        for fact in self.facts:
            grouped.setdefault(fact.section, []).append(fact)
        order = [s for s in SECTION_ORDER if s in grouped] + sorted(set(grouped) - set(SECTION_ORDER))
        return {s: grouped[s] for s in order}

    def body(self) -> str:
        lines = [f"# {self.name}", ""]
        for section, facts in self.sections().items():
            lines += [f"## {section}", *[f.to_line() for f in facts], ""]
        return "\n".join(lines)

    def rechain(self) -> bool:
        """Update the page-hash chain; return whether the body changed."""
        current = hashlib.sha256(self.body().encode()).hexdigest()
        if current == self.hash:
            return False
        self.prev_hash, self.hash = self.hash, current
        return True

    def render(self) -> str:
        front = [f"{k}: {json.dumps(getattr(self, k), ensure_ascii=False)}" for k in _FRONT_KEYS]
        return "\n".join(["---", *front, "---", self.body()])

    def write(self, fiches: Path) -> None:
        fiches.mkdir(parents=True, exist_ok=True)
        (fiches / f"{self.slug}.md").write_text(self.render(), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> Page:
        lines = path.read_text(encoding="utf-8").splitlines()
        end = lines.index("---", 1)
        front = {k: json.loads(v) for k, _, v in (ln.partition(": ") for ln in lines[1:end])}
        page = cls(slug=path.stem, **front)
        section = "episodic"
        for line in lines[end + 1:]:
            if line.startswith("## "):
                section = line[3:].strip()
            elif line.startswith("- ") and " <!-- " in line:
                page.facts.append(Fact.from_line(line, section))
        return page


def load_pages(fiches: Path) -> dict[str, Page]:
    """Every page, by slug, in slug order."""
    if not fiches.exists():
        return {}
    return {p.stem: Page.read(p) for p in sorted(fiches.glob("*.md"))}


class Catalogue:
    """Normalised names and aliases → page slug; creates pages for unknown names."""

    def __init__(self, pages: dict[str, Page]) -> None:
        self.pages = pages
        self._names: dict[str, str] = {}
        for slug, page in pages.items():
            for name in page.names():
                self._names.setdefault(fold(name), slug)

    def resolve(self, name: str) -> Page | None:
        slug = self._names.get(fold(name))
        return self.pages.get(slug) if slug else None

    def resolve_or_create(self, name: str) -> tuple[Page, bool]:
        """The page for a name; `True` when it had to be created."""
        page = self.resolve(name)
        if page is not None:
            return page, False
        slug = slugify(name)
        n = 2
        while slug in self.pages:
            slug, n = f"{slugify(name)}-{n}", n + 1
        page = Page(slug=slug, name=" ".join(name.split()))
        self.pages[slug] = page
        self._names[fold(name)] = slug
        return page, True

    def add_alias(self, page: Page, alias: str) -> bool:
        """Attach an alias unless the name already belongs to a page."""
        key = fold(alias)
        if not key or key in self._names:
            return False
        page.aliases.append(" ".join(alias.split()))
        self._names[key] = page.slug
        return True
