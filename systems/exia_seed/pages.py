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
from dataclasses import dataclass, field, replace
from itertools import chain, compress, count, repeat
from operator import attrgetter, eq, is_, is_not
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

    def __setattr__(self, name: str, value: object) -> None:
        # Any assignment drops the cached line (`to_line`) and dedupe key (`dedupe_key`); an
        # assignment to a field already set (not the constructor's) is counted (`fact_edits`).
        d = self.__dict__
        if name in d:
            _EDITS[0] += 1
        d[name] = value
        d.pop("_line", None)
        d.pop("_dk", None)

    def dedupe_key(self) -> tuple[str, tuple[str, ...]]:
        """(text, sorted refs): what `Page.add_fact` compares (cached until a field is assigned)."""
        key = self.__dict__.get("_dk")
        if key is None:
            key = self.__dict__["_dk"] = (self.text, tuple(sorted(self.refs)))
        return key

    def to_line(self) -> str:
        """The fact's line (cached until a field is assigned; `refs`/`concepts` are never changed
        in place)."""
        line = self.__dict__.get("_line")
        if line is None:
            line = self.__dict__["_line"] = self._render_line()
        return line

    def _render_line(self) -> str:
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


_section_of = attrgetter("section")
_key_of = attrgetter("key")
_EDITS = [0]


def fact_edits() -> int:
    """How many times a field of an existing `Fact` was assigned, in this process: while it
    stands, no fact changed in place (`graph.EdgeBuilder` checks facts' texts only when it moved)."""
    return _EDITS[0]


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
        """Append unless the same text with the same refs is already on the page.

        The page's keys are kept in a set beside `facts`, rebuilt whenever `facts` is another list
        or its length is not the one the set followed (facts appended other than here)."""
        key = fact.dedupe_key()
        keys = self._dedupe_keys()
        if key in keys:
            return False
        self.facts.append(fact)
        keys.add(key)
        self.__dict__["_keys"] = (self.facts, len(self.facts), keys)
        self.concepts = sorted(set(self.concepts) | set(fact.concepts))
        return True

    def _dedupe_keys(self) -> set[tuple[str, tuple[str, ...]]]:
        cached = self.__dict__.get("_keys")
        if cached is not None and cached[0] is self.facts and cached[1] == len(self.facts):
            return cached[2]
        keys = {f.dedupe_key() for f in self.facts}
        self.__dict__["_keys"] = (self.facts, len(self.facts), keys)
        return keys

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
        """Facts by section, sections in `SECTION_ORDER` then the others sorted, page order within.
        (Each section's facts are picked by C-level `compress` over the facts' sections.)"""
        facts = self.facts
        names = list(map(_section_of, facts))
        present = set(names)
        order = _section_order(present)
        if len(order) == 1:
            return {order[0]: list(facts)}
        return {s: list(compress(facts, map(eq, names, repeat(s)))) for s in order}

    def body(self) -> str:
        """The page below its front matter. The lines of each section are kept (`_lines`), so the
        facts appended since the last call are the only ones rendered."""
        lines = self._lines()
        order = _section_order(lines.keys())
        out = [f"# {self.name}", ""]
        for section in order:
            out.append(f"## {section}")
            out += lines[section]
            out.append("")
        return "\n".join(out)

    def _lines(self) -> dict[str, list[str]]:
        """Each section's fact lines, in page order. Kept from the last call while the facts then
        are still the first ones of `facts`, object for object, and no fact field was assigned
        since (`fact_edits`): only the facts after them are rendered. (The objects are compared
        in C, `map(is_, ...)`; anything else, a fact replaced, removed or moved, renders again.)"""
        facts = self.facts
        known = self.__dict__.get("_body")
        if known is not None and _body_valid(known, facts):
            lines = known[2]
            for fact in facts[len(known[0]):]:
                lines.setdefault(fact.section, []).append(fact.to_line())
        else:
            lines = {s: list(map(Fact.to_line, group)) for s, group in self.sections().items()}
        self.__dict__["_body"] = (tuple(facts), _EDITS[0], lines)
        return lines

    def rechain(self, body: str | None = None) -> bool:
        """Update the page-hash chain; return whether the body changed. `body`: `self.body()`, if known."""
        current = hashlib.sha256((self.body() if body is None else body).encode()).hexdigest()
        if current == self.hash:
            return False
        self.prev_hash, self.hash = self.hash, current
        return True

    def render(self, body: str | None = None) -> str:
        front = [f"{k}: {json.dumps(getattr(self, k), ensure_ascii=False)}" for k in _FRONT_KEYS]
        return "\n".join(["---", *front, "---", self.body() if body is None else body])

    def write(self, fiches: Path, body: str | None = None) -> str:
        """Write the page file; return its text. `body`: `self.body()`, if known."""
        fiches.mkdir(parents=True, exist_ok=True)
        text = self.render(body)
        (fiches / f"{self.slug}.md").write_text(text, encoding="utf-8")
        return text

    @classmethod
    def read(cls, path: Path) -> Page:
        return cls.parse(path.stem, path.read_text(encoding="utf-8"))

    @classmethod
    def parse(cls, slug: str, text: str, known: dict[tuple[str, str], Fact] | None = None,
              previous: dict[tuple[str, str], Fact] | None = None) -> Page:
        """A page from its file's text. `previous`: facts parsed before, by (section, line); a line
        found there gives that very object (never changed afterwards: see `PageReader`). `known`
        receives every fact of this page by (section, line)."""
        lines = text.splitlines()
        end = lines.index("---", 1)
        front = {k: json.loads(v) for k, _, v in (ln.partition(": ") for ln in lines[1:end])}
        page = cls(slug=slug, **front)
        section = "episodic"
        facts = page.facts
        reuse = previous.get if previous is not None else {}.get
        for line in lines[end + 1:]:
            if line.startswith("## "):
                section = line[3:].strip()
            elif line.startswith("- ") and " <!-- " in line:
                key = (section, line)
                fact = reuse(key)
                if fact is None:
                    fact = Fact.from_line(line, section)
                if known is not None:
                    known[key] = fact
                facts.append(fact)
        return page


def load_pages(fiches: Path) -> dict[str, Page]:
    """Every page, by slug, in slug order."""
    if not fiches.exists():
        return {}
    return {p.stem: Page.read(p) for p in sorted(fiches.glob("*.md"))}


class PageReader:
    """`load_pages` that parses only what changed since its last read of the same directory.

    Each page file is read in full every time (the files are the memory: any writer may have
    changed them); a file whose text is the one this reader last saw gives the same parsed `Page`,
    and in a changed file every fact line seen before in the same section gives the same `Fact`
    object. These shared objects are read-only: `load` hands them to readers (the recall cache);
    `load_mutable` gives writers (consolidation) pages of their own, whose facts are the shared
    objects except those a writer may change (`Page.supersede` assigns `superseded_by` on facts
    with a `key`), which are copies. A writer that writes a page tells the reader (`learn`) the
    text it wrote and the page, which the reader keeps as the parse of that text: the same
    fields, and the facts in file order (by section). `tests/systems/exia_seed/test_exia_page_model.py`
    compares both with `load_pages` after random writes and along random conversations.
    """

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._pages: dict[str, tuple[str, Page, dict[tuple[str, str], Fact] | None]] = {}

    def load(self, fiches: Path) -> dict[str, Page]:
        """Every page, by slug, in slug order (shared: do not change them)."""
        if self._dir != fiches:
            self._dir, self._pages = fiches, {}
        if not fiches.exists():
            self._pages = {}
            return {}
        seen: dict[str, tuple[str, Page, dict[tuple[str, str], Fact] | None]] = {}
        for path in sorted(fiches.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            entry = self._pages.get(path.stem)
            if entry is None or entry[0] != text:
                previous = _lines(entry) if entry is not None else None
                known: dict[tuple[str, str], Fact] = {}
                entry = (text, Page.parse(path.stem, text, known, previous), known)
            seen[path.stem] = entry
        self._pages = seen
        return {slug: entry[1] for slug, entry in seen.items()}

    def load_mutable(self, fiches: Path) -> dict[str, Page]:
        """`load`, as pages a writer may change (see the class docstring); a page's dedupe keys,
        when the shared page has them, are copied rather than computed again."""
        out = {}
        for slug, page in self.load(fiches).items():
            mine = out[slug] = _thaw(page)
            keys = page.__dict__.get("_keys")
            if keys is None or keys[0] is not page.facts or keys[1] != len(page.facts):
                keys = page.__dict__["_keys"] = (page.facts, len(page.facts), {f.dedupe_key() for f in page.facts})
            mine.__dict__["_keys"] = (mine.facts, len(mine.facts), set(keys[2]))
        return out

    def learn(self, fiches: Path, page: Page, text: str) -> None:
        """`page` was just written to `fiches` as `text` (`Page.write`'s return). The reader keeps
        a copy: the writer may go on changing its page (the facts a writer may change are copied)."""
        if self._dir != fiches:
            return
        copy = _thaw(page, facts=list(chain.from_iterable(page.sections().values())))
        keys = page.__dict__.get("_keys")
        if keys is not None and keys[0] is page.facts and keys[1] == len(page.facts):
            # The same facts in another order: the same dedupe keys (a copy: the writer's set moves on).
            copy.__dict__["_keys"] = (copy.facts, len(copy.facts), set(keys[2]))
        self._pages[page.slug] = (text, copy, None)


def _lines(entry: tuple[str, Page, dict[tuple[str, str], Fact] | None]) -> dict[tuple[str, str], Fact]:
    """A page's facts by (section, line); for a learned page, from its facts' lines."""
    if entry[2] is not None:
        return entry[2]
    return {(f.section, f.to_line()): f for f in entry[1].facts}


def _thaw(page: Page, *, facts: list[Fact] | None = None) -> Page:
    """A page of its own (lists copied), with the given facts or the page's (the same facts, in
    page order or by section); the facts a writer may change (keyed, not superseded:
    `Page.supersede`) copied. The page's section lines (`Page._lines`), when current, go with it."""
    facts = list(page.facts if facts is None else facts)
    for i in compress(count(), map(is_not, map(_key_of, facts), repeat(None))):  # the keyed ones, found in C
        if facts[i].superseded_by is None:
            facts[i] = replace(facts[i])
    copy = Page(slug=page.slug, name=page.name, aliases=list(page.aliases), concepts=list(page.concepts),
                privacy=page.privacy, summary=page.summary, summary_sources=list(page.summary_sources),
                summary_of=page.summary_of, keywords=list(page.keywords), hash=page.hash,
                prev_hash=page.prev_hash, facts=facts)
    known = page.__dict__.get("_body")
    if known is not None and len(known[0]) == len(page.facts) and _body_valid(known, page.facts):
        copy.__dict__["_body"] = (tuple(facts), known[1], {s: list(lines) for s, lines in known[2].items()})
    return copy


def _body_valid(known: tuple, facts: list[Fact]) -> bool:
    """Whether `Page._lines`' kept lines `known` hold for `facts` (see there)."""
    kept, edits, _lines = known
    return edits == _EDITS[0] and len(facts) >= len(kept) and all(map(is_, kept, facts))


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


def picked(facts: list[Fact], ids: set[int]) -> list[Fact]:
    """The facts whose `id()` is in `ids`, in order: `[f for f in facts if id(f) in ids]`, the
    page walked once, in C (their positions by `compress`), rather than one Python step a fact."""
    return list(map(facts.__getitem__, compress(count(), map(ids.__contains__, map(id, facts)))))


def _section_order(present) -> list[str]:
    """The sections present (a set or a dict's keys), in `SECTION_ORDER`, then the others sorted."""
    return [s for s in SECTION_ORDER if s in present] + sorted(present - set(SECTION_ORDER))
