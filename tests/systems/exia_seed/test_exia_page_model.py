"""EXIA's in-memory page model against the plain whole-history rules, on randomized inputs:

- `PageReader` (parse only what changed) against `load_pages` (parse every file), after random
  writes, hand edits, deletions and re-formatted lines; the pages it hands to writers against its
  shared ones, which no writer may change;
- `Page.add_fact`'s dedupe set against scanning the page, and cached fact lines against rendering;
- a `Memoire` derived from the previous one (facts, FTS5 rows, recall indexes) against one built
  afresh: facts, names, BM25 scores and order, `nodes_with`, indexes;
- a provider with the page model against one reading every file every time (`reader = None`):
  every file byte for byte, every event, every recall block and tool reply, over a random
  conversation with moves (supersessions), dates, notes with privacy labels and aliases.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from lsrep.systems.exia_seed import ExiaSeedProvider, Settings, StageEvent
from lsrep.systems.exia_seed.cache import Memoire
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import EdgeBuilder, build_edges, write_graph
from lsrep.systems.exia_seed.pages import Fact, Page, PageReader, _thaw, load_pages, picked
from lsrep.systems.exia_seed.rules import RulesModel

from tests.systems.exia_seed.test_exia_recall_index import NAMES, WORDS, index_state, random_fact

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def plain_add_fact(page: Page, fact: Fact) -> bool:
    """The rule before the dedupe set: scan the page."""
    key = (fact.text, sorted(fact.refs))
    if any((f.text, sorted(f.refs)) == key for f in page.facts):
        return False
    page.facts.append(fact)
    page.concepts = sorted(set(page.concepts) | set(fact.concepts))
    return True


def plain_line(fact: Fact) -> str:
    return Fact._render_line(fact)


@pytest.mark.parametrize("seed", range(20))
def test_add_fact_dedupes_as_scanning_the_page_did(seed):
    rng = random.Random(seed)
    fast, plain = Page(slug="p", name="P"), Page(slug="p", name="P")
    for i in range(120):
        refs = rng.sample(["r1", "r2", "r3", "r4"], rng.randint(1, 3))
        fact = Fact(id=f"f{i}", text=rng.choice(["a b", "a c", "b c", "d"]), section="episodic", refs=refs,
                    concepts=rng.sample(["x", "y", "z"], rng.randint(0, 2)))
        if rng.random() < 0.1:  # appended behind add_fact's back: the set must follow
            fast.facts.append(fact)
            plain.facts.append(copy.deepcopy(fact))
            continue
        if rng.random() < 0.05:  # a new list altogether
            fast.facts = list(fast.facts)
        assert fast.add_fact(fact) == plain_add_fact(plain, copy.deepcopy(fact))
        assert fast == plain


@pytest.mark.parametrize("seed", range(10))
def test_cached_fact_lines_follow_every_assignment(seed):
    rng = random.Random(seed)
    facts = [random_fact(rng, f"f{i}", NAMES) for i in range(30)]
    page = Page(slug="p", name="P", facts=facts)
    for _ in range(40):
        fact = rng.choice(facts)
        fact.to_line()
        field, value = rng.choice([("superseded_by", "fz"), ("superseded_by", None), ("key", "lives_in"),
                                   ("value", "Lisbon"), ("privacy", "private"), ("text", "new words"),
                                   ("refs", ["r9"]), ("concepts", ["c"]), ("lot", "c0009"), ("said", "2026-01-01")])
        setattr(fact, field, value)
        assert fact.to_line() == plain_line(fact)
        assert fact.dedupe_key() == (fact.text, tuple(sorted(fact.refs)))
    body = page.body()
    for fact in facts:
        fact.__dict__.pop("_line", None)
    assert body == page.body()


def write_random(rng: random.Random, fiches, pages: dict[str, Page]) -> None:
    """Random changes to the page files: new facts, supersessions, summaries, new and deleted
    pages, and hand edits (a re-formatted fact line, a line removed)."""
    roll = rng.random()
    if roll < 0.1 and pages:
        slug = rng.choice(sorted(pages))
        (fiches / f"{slug}.md").unlink()
        del pages[slug]
        return
    if roll < 0.2 and pages:
        slug = rng.choice(sorted(pages))
        path = fiches / f"{slug}.md"
        lines = path.read_text(encoding="utf-8").split("\n")
        facts = [i for i, ln in enumerate(lines) if ln.startswith("- ")]
        if facts:
            i = rng.choice(facts)
            if rng.random() < 0.5:
                del lines[i]
            else:  # the same fact, its metadata spaced differently
                text, _, meta = lines[i][2:].rpartition(" <!-- ")
                lines[i] = f"- {text} <!-- {json.dumps(json.loads(meta.removesuffix(' -->')), indent=None, separators=(',', ':'))} -->"
            path.write_text("\n".join(lines), encoding="utf-8")
        pages[slug] = Page.read(path)
        return
    slug = rng.choice([*sorted(pages), f"new{rng.randint(0, 99)}"])
    page = pages.get(slug) or Page(slug=slug, name=rng.choice(NAMES) + f" {slug}")
    for _ in range(rng.randint(1, 5)):
        fact = random_fact(rng, f"f{rng.randint(0, 10**9):09d}", NAMES)
        fact.superseded_by = None
        if page.add_fact(fact):
            page.supersede(fact)
    if rng.random() < 0.3:
        page.summary = " ".join(rng.sample(WORDS, 3))
    if rng.random() < 0.2:
        page.aliases.append(rng.choice(WORDS).title())
    page.rechain()
    page.write(fiches)
    pages[slug] = page


@pytest.mark.parametrize("seed", range(12))
def test_the_page_reader_reads_what_load_pages_reads_and_derived_memories_are_fresh_ones(tmp_path, seed):
    rng = random.Random(seed)
    paths = MemoryPaths(tmp_path / "mem")
    paths.fiches.mkdir(parents=True)
    reader = PageReader()
    pages: dict[str, Page] = {}
    previous = None
    for step in range(25):
        for _ in range(rng.randint(1, 3)):
            write_random(rng, paths.fiches, pages)
        shared = reader.load(paths.fiches)
        assert shared == load_pages(paths.fiches)
        frozen = copy.deepcopy(shared)
        mutable = reader.load_mutable(paths.fiches)
        assert mutable == shared
        for page in mutable.values():  # the dedupe keys handed over are the page's
            assert page._dedupe_keys() == {(f.text, tuple(sorted(f.refs))) for f in page.facts}
        for page in mutable.values():  # a writer's changes stay on its own pages
            for fact in page.facts:
                if fact.key and not fact.superseded_by:
                    fact.superseded_by = "changed"
            page.add_fact(random_fact(rng, "fnew", NAMES))
            page.aliases.append("x")
            page.concepts.append("y")
        assert shared == frozen == reader.load(paths.fiches)
        write_graph(paths, shared, NOW + timedelta(minutes=step))
        derived = Memoire(paths, reader, previous)
        fresh = Memoire(paths)
        assert_same_memoire(derived, fresh, rng)
        if rng.random() < 0.2:  # a memory used again after the next one took its FTS5 tables
            assert_same_memoire(previous or derived, previous or derived, rng)
        previous = derived
        for slug in rng.sample(sorted(derived.pages), min(2, len(derived.pages))):
            derived.index(slug)  # some indexes built, so the next derivation has some to derive


def assert_same_memoire(a: Memoire, b: Memoire, rng: random.Random) -> None:
    assert a.pages == b.pages
    assert a.unique_ids == b.unique_ids
    assert {k: (s, f) for k, (s, f) in a.facts.items()} == b.facts
    assert (a.names, a.edges, a.neighbours) == (b.names, b.edges, b.neighbours)
    for _ in range(5):
        terms = rng.sample(WORDS + [n.lower() for n in NAMES], rng.randint(1, 3))
        assert a.bm25(terms, 50) == b.bm25(terms, 50)
        assert a.bm25(terms, 3) == b.bm25(terms, 3)
        assert a.nodes_with(terms[0]) == b.nodes_with(terms[0])
    if a.unique_ids:
        for slug in a.pages:
            assert index_state(a.index(slug)) == index_state(b.index(slug))


CITIES = ["Lisbon", "Porto", "Braga", "Faro"]


def conversation(rng: random.Random, n: int):
    t = datetime(2026, 1, 5, 9, tzinfo=UTC)
    for i in range(n):
        t += timedelta(minutes=rng.choice([1, 5, 30, 60 * 20]))
        words = rng.sample(WORDS, rng.randint(3, 7))
        roll = rng.random()
        if roll < 0.12:
            text = f"I moved to {rng.choice(CITIES)} last week with {rng.choice(NAMES)}."
        elif roll < 0.2:
            text = f"Remember that {rng.choice(NAMES)} likes the {words[0]} near the {words[1]} on 2026-0{rng.randint(1, 4)}-1{rng.randint(0, 9)}."
        elif roll < 0.25:
            text = f"Next week I will visit the {words[0]} {words[1]} museum with my sister Marie."
        elif roll < 0.35:  # procedural facts: pages with two sections, whose file order is not append order
            text = f"From now on always bring the {words[0]} to {rng.choice(NAMES)} before the {words[1]} meeting."
        else:
            text = f"My friend {rng.choice(NAMES)} talked about the {' '.join(words)} today."
        yield i, t, text, f"Noted: {' '.join(rng.sample(WORDS, 3))}."


def run_twin(tmp_path, seed: int, *, plain: bool):
    rng = random.Random(seed)
    home = tmp_path / ("plain" if plain else "fast")
    events: list[StageEvent] = []
    settings = Settings(phase=2, batch_max_lines=rng.choice([6, 40]), summaries_on_consolidate=rng.random() < 0.7)
    provider = ExiaSeedProvider(settings, complete=RulesModel().complete, on_event=events.append)
    provider.initialize("s1", hermes_home=home, platform="test", agent_context="primary")
    if plain:
        provider.reader = provider.edges = None
        provider.cache.reader = None
    out = []
    for i, t, user, agent in conversation(rng, 70):
        provider.sync_turn(user, agent, now=t, origins=(f"u{i}", f"a{i}"))
        roll = rng.random()
        if roll < 0.1:
            provider.on_session_end(now=t)
        elif roll < 0.13:
            provider.on_memory_write("add", "memory", f"{rng.choice(NAMES)} prefers {rng.choice(WORDS)}", now=t)
        elif roll < 0.16:
            provider.handle_tool_call("memoire_noter", {"texte": f"{rng.choice(NAMES)} is private about {rng.choice(WORDS)}",
                                                        "confidentialite": rng.choice(["private", "confidential"]),
                                                        "noeud": rng.choice(NAMES)}, now=t)
        elif roll < 0.18:
            out.append(provider.consolidate(t, force=True))
        if rng.random() < 0.3 and provider.reader is not None:  # what the page model holds is the files
            assert provider.reader.load(provider.paths.fiches) == load_pages(provider.paths.fiches)
        if rng.random() < 0.3:
            query = f"What about {rng.choice(NAMES)} and the {rng.choice(WORDS)}? Where do I live?"
            out.append(provider.prefetch(query, now=t))
            out.append(provider.handle_tool_call("memoire_chercher", {"requete": query}, now=t))
            out.append(provider.handle_tool_call("memoire_lire", {"sujet": rng.choice(NAMES)}, now=t))
    files = {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}
    return out, events, files


@pytest.mark.parametrize("seed", range(6))
def test_a_provider_with_the_page_model_writes_and_answers_as_one_reading_every_file(tmp_path, seed):
    fast = run_twin(tmp_path, seed, plain=False)
    plain = run_twin(tmp_path, seed, plain=True)
    assert fast[2] == plain[2]  # every file, byte for byte
    assert fast[1] == plain[1]
    assert fast[0] == plain[0]
    pages = [k for k in fast[2] if "/fiches/" in k]
    assert pages and any(b"superseded_by" in fast[2][k] for k in pages)  # supersessions were exercised
    assert any(b"## procedural" in fast[2][k] and b"## episodic" in fast[2][k] for k in pages)


def test_a_fact_line_read_back_is_the_same_object_only_while_unchanged(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    page = Page(slug="p", name="P", facts=[Fact(id="f1", text="a", section="episodic", refs=["r"]),
                                           Fact(id="f2", text="b", section="episodic", refs=["r"], key="k", value="v")])
    page.write(paths.fiches)
    reader = PageReader()
    first = reader.load(paths.fiches)["p"]
    assert reader.load(paths.fiches)["p"] is first  # unchanged file: the same page
    page.facts.append(Fact(id="f3", text="c", section="semantic", refs=["r"]))
    page.write(paths.fiches)
    second = reader.load(paths.fiches)["p"]
    by_id = {f.id: f for f in second.facts}
    assert second is not first and by_id["f1"] is first.facts[0]  # unchanged line: the same fact
    mutable = {f.id: f for f in reader.load_mutable(paths.fiches)["p"].facts}
    assert mutable["f1"] is by_id["f1"]
    assert mutable["f2"] is not by_id["f2"] and mutable["f2"] == by_id["f2"]  # keyed: a copy


@pytest.mark.parametrize("seed", range(40))
def test_the_edge_builder_gives_build_edges_after_every_change(seed):
    rng = random.Random(seed)
    builder = EdgeBuilder()
    pages: dict[str, Page] = {}
    refs = [f"brut:b1:{i}" for i in range(12)]
    for _ in range(40):
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            if roll < 0.08 and pages:
                del pages[rng.choice(sorted(pages))]
            elif roll < 0.18 and pages:  # an alias: a page's names change
                rng.choice(list(pages.values())).aliases.append(rng.choice(WORDS + ["ab", "Rexy"]))
            elif roll < 0.28 and pages:  # facts gone (a hand edit), or the page read again as new objects
                page = rng.choice(list(pages.values()))
                if page.facts and rng.random() < 0.5:
                    page.facts.pop(rng.randrange(len(page.facts)))
                else:
                    page.facts = [replace(f) for f in page.facts]
            elif roll < 0.33 and pages:  # a fact whose text changed: a new object, or assigned
                page = rng.choice(list(pages.values()))
                if page.facts:
                    i = rng.randrange(len(page.facts))
                    text = f"{rng.choice(NAMES)} {rng.choice(WORDS)}"
                    if rng.random() < 0.5:
                        page.facts[i] = replace(page.facts[i], text=text)
                    else:
                        page.facts[i].text = text
            else:
                slug = rng.choice([*sorted(pages), f"s{rng.randint(0, 6)}"])
                page = pages.setdefault(slug, Page(slug=slug, name=rng.choice(NAMES + WORDS).title()))
                for _ in range(rng.randint(1, 3)):
                    words = rng.sample(WORDS, 2) + ([rng.choice(NAMES + WORDS)] if rng.random() < 0.5 else [])
                    page.facts.append(Fact(id=f"f{rng.randint(0, 40)}", text=" ".join(words), section="episodic",
                                           refs=rng.sample(refs, rng.randint(1, 2))))
        assert builder.build(pages) == build_edges(pages)


def plain_sections(page: Page) -> dict[str, list[Fact]]:
    """The rule before `compress`: one pass appending to each section's list."""
    from lsrep.systems.exia_seed.pages import SECTION_ORDER
    grouped: dict[str, list[Fact]] = {}
    for fact in page.facts:
        grouped.setdefault(fact.section, []).append(fact)
    order = [s for s in SECTION_ORDER if s in grouped] + sorted(set(grouped) - set(SECTION_ORDER))
    return {s: grouped[s] for s in order}


@pytest.mark.parametrize("seed", range(10))
def test_sections_group_as_one_pass_did(seed):
    rng = random.Random(seed)
    sections = ["episodic", "semantic", "procedural", "etat_agent", "zeta", "alpha", ""]
    page = Page(slug="p", name="P", facts=[Fact(id=f"f{i}", text="t", section=rng.choice(sections[:rng.randint(1, 7)]),
                                                refs=[]) for i in range(rng.randint(0, 40))])
    got = page.sections()
    assert got == plain_sections(page)
    assert [list(map(id, v)) for v in got.values()] == [list(map(id, v)) for v in plain_sections(page).values()]
    assert list(got) == list(plain_sections(page))


def plain_body(page: Page) -> str:
    """The rule before the kept section lines: every fact rendered at every call."""
    lines = [f"# {page.name}", ""]
    for section, facts in plain_sections(page).items():
        lines += [f"## {section}", *map(plain_line, facts), ""]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(15))
def test_the_kept_section_lines_give_the_rendered_body_after_every_change(tmp_path, seed):
    rng = random.Random(seed)
    fiches = tmp_path / "fiches"
    reader = PageReader()
    sections = ["episodic", "semantic", "procedural", "etat_agent", "zeta", "alpha"][:rng.randint(1, 6)]
    page = Page(slug="p", name="P")
    checked = 0

    def new(fid: str) -> Fact:  # built with its section (an assignment would count as an edit)
        return replace(random_fact(rng, fid, NAMES), section=rng.choice(sections))

    for i in range(150):
        roll = rng.random()
        if roll < 0.45:  # facts added, as consolidation adds them
            for _ in range(rng.randint(1, 3)):
                page.add_fact(new(f"f{i}-{rng.randint(0, 10**6)}"))
            shared = reader.load(fiches).get("p") if fiches.exists() else None
            if shared is not None:  # the reader's page never follows a writer's
                assert shared.body() == plain_body(shared)
        elif roll < 0.55 and page.facts:  # a field of a fact assigned (supersession, a section moved)
            fact = rng.choice(page.facts)
            field, value = rng.choice([("superseded_by", "fz"), ("text", "new words"), ("section", rng.choice(sections)),
                                       ("privacy", "private")])
            setattr(fact, field, value)
        elif roll < 0.6 and page.facts:  # a new list (the same facts), or one fact replaced in place
            if rng.random() < 0.5:
                page.facts = list(page.facts)
            else:
                page.facts[rng.randrange(len(page.facts))] = new(f"h{i}")
        elif roll < 0.65:
            page.name = rng.choice(NAMES)
        elif roll < 0.7:  # a copy of its own, made after facts were appended since the last body
            page.body()
            page.add_fact(new(f"k{i}"))
            page = _thaw(page)
        elif roll < 0.8:  # written, learned, and handed to the next writer (the lines go with it)
            body = page.body()
            page.rechain(body)
            reader.learn(fiches, page, page.write(fiches, body))
            if rng.random() < 0.3:
                assert reader.load(fiches)["p"].body() == plain_body(reader.load(fiches)["p"])
            page = reader.load_mutable(fiches)["p"]
        elif roll < 0.85:  # appended behind add_fact's back
            page.facts.append(new(f"g{i}"))
        elif roll < 0.9 and page.facts:  # taken off the end directly, and maybe another put on
            page.facts.pop()
            if rng.random() < 0.5:
                page.facts.append(new(f"p{i}"))
        if rng.random() < 0.7:
            assert page.body() == plain_body(page)
            checked += 1
    assert checked > 50 and set(sections) <= {f.section for f in page.facts}


@pytest.mark.parametrize("seed", range(10))
def test_picked_facts_are_the_comprehension_over_the_page(seed):
    rng = random.Random(seed)
    facts = [random_fact(rng, f"f{i}", NAMES) for i in range(rng.randint(0, 60))]
    facts += rng.sample(facts, min(len(facts), 5))  # the same object twice on a list
    ids = {id(f) for f in facts if rng.random() < 0.3} | {id(object())}
    got = picked(facts, ids)
    assert list(map(id, got)) == [id(f) for f in facts if id(f) in ids]
    assert picked(facts, set()) == [] and picked([], ids) == []


def plain_thaw_facts(facts: list[Fact]) -> list[Fact]:
    """The rule before the keyed facts were found in C: one comprehension over the page."""
    return [replace(f) if f.key is not None and f.superseded_by is None else f for f in facts]


@pytest.mark.parametrize("seed", range(10))
def test_a_thawed_page_copies_the_facts_the_comprehension_copied(tmp_path, seed):
    rng = random.Random(seed)
    facts = []
    for i in range(rng.randint(0, 50)):
        f = random_fact(rng, f"f{i}", NAMES)
        facts.append(replace(f, key=rng.choice([None, None, "lives_in"]), superseded_by=rng.choice([None, "fz"])))
    facts += rng.sample(facts, min(3, len(facts)))  # one object twice
    page = Page(slug="p", name="P", facts=facts)
    for source, mine in ((facts, _thaw(page)), (facts[::-1], _thaw(page, facts=facts[::-1]))):
        want = plain_thaw_facts(source)
        assert mine.facts == want and mine.facts is not page.facts
        # copied exactly where the comprehension copied: the keyed facts not superseded
        assert [f is g for f, g in zip(mine.facts, source, strict=True)] == [g is w for g, w in zip(source, want, strict=True)]
    reader = PageReader()
    reader.load(tmp_path)
    page.facts = [replace(f, section=rng.choice(["episodic", "procedural"])) for f in facts]
    reader.learn(tmp_path, page, page.write(tmp_path))
    learned = reader.load(tmp_path)["p"]
    assert learned.facts == plain_thaw_facts([f for group in page.sections().values() for f in group])
