"""The work EXIA SEED's page model saves, counted (mutation session `exia-page-model`).

The fast paths of the 2026-12-06 page model (issue #20) are exact: `test_exia_page_model.py`,
`test_exia_progress_journal.py` and `test_exia_jsonfast.py` compare what they give with the plain
rules. A mutant that turns a shortcut off gives the same output and more work, so these tests
count the work: page files parsed and fact lines read (`PageReader`), dedupe keys computed
(`load_mutable`, `learn`), values encoded again (`jsonfast.IncrementalDumps`), fact texts read by
the edge builder, sections filtered, and the fact edits counted (`fact_edits`). The progress
store's work (journals read, rows appended) is counted in `test_exia_progress_journal.py`.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from lsrep.systems.exia_seed import jsonfast
from lsrep.systems.exia_seed import pages as pages_mod
from lsrep.systems.exia_seed.graph import EdgeBuilder, build_edges
from lsrep.systems.exia_seed.pages import Fact, Page, PageReader, fact_edits, load_pages


def fact(fid: str, text: str, section: str = "episodic", refs: list[str] | None = None, **kw) -> Fact:
    return Fact(id=fid, text=text, section=section, refs=refs if refs is not None else [f"brut:b1:{fid}"], **kw)


# --- Fact: the edit counter and the caches -------------------------------------------------------

def test_fact_edits_count_each_assignment_to_a_field_already_set_once():
    before = fact_edits()
    f = fact("f1", "a")
    assert fact_edits() == before  # the constructor's assignments are not edits
    f.text = "b"
    assert fact_edits() == before + 1
    f.superseded_by = "f2"
    f.superseded_by = None
    assert fact_edits() == before + 3
    g = replace(f, text="c")  # a new object: constructed, not edited
    f.to_line()
    f.dedupe_key()  # the caches are not fields
    assert fact_edits() == before + 3
    assert g.to_line() != f.to_line() and g.dedupe_key() == ("c", ("brut:b1:f1",))


def test_a_page_of_one_section_is_not_filtered(monkeypatch):
    calls = []
    real = pages_mod.compress
    monkeypatch.setattr(pages_mod, "compress", lambda *a: calls.append(1) or real(*a))
    page = Page(slug="p", name="P", facts=[fact(f"f{i}", "t", "semantic") for i in range(3)])
    got = page.sections()
    assert got == {"semantic": page.facts} and got["semantic"] is not page.facts and calls == []
    page.facts.append(fact("g", "t", "procedural"))
    assert page.sections() == {"procedural": page.facts[3:], "semantic": page.facts[:3]} and len(calls) == 2
    assert Page(slug="e", name="E").sections() == {}


def test_a_known_body_is_not_built_again(monkeypatch, tmp_path):
    page = Page(slug="p", name="P", facts=[fact("f1", "a"), fact("f2", "b", "semantic")])
    body = page.body()
    calls = []
    real = Page.body
    monkeypatch.setattr(Page, "body", lambda self: calls.append(1) or real(self))
    assert page.rechain(body) and page.render(body) == page.render() and calls == [1]
    assert page.write(tmp_path, body) == (tmp_path / "p.md").read_text(encoding="utf-8") and calls == [1]
    assert not page.rechain(body) and not page.rechain() and calls == [1, 1]


def test_a_page_handed_to_the_next_writer_renders_only_its_new_facts(monkeypatch, tmp_path):
    fiches = tmp_path / "fiches"
    reader = PageReader()
    assert reader.load(fiches) == {}  # the reader's directory
    page = Page(slug="p", name="P", facts=[fact(f"f{i}", f"t{i}", ["semantic", "episodic"][i % 2]) for i in range(40)])
    body = page.body()
    page.rechain(body)
    reader.learn(fiches, page, page.write(fiches, body))
    mine = reader.load_mutable(fiches)["p"]
    rendered: list[str] = []
    real = Fact.to_line
    monkeypatch.setattr(Fact, "to_line", lambda self: rendered.append(self.id) or real(self))
    assert mine.body() == body and rendered == []
    mine.add_fact(fact("new", "a new fact", "procedural"))
    assert mine.body().startswith("# P\n\n## procedural\n- a new fact") and rendered == ["new"]
    assert mine.body() and rendered == ["new"]
    assert reader.load(fiches)["p"].body() == body and rendered == ["new"]


# --- PageReader: what it parses --------------------------------------------------------------------

@pytest.fixture
def counted(monkeypatch):
    """Page files the reader parsed (by slug) and fact lines it read, and dedupe keys computed."""
    seen = {"parse": [], "line": 0, "keys": 0}
    parse, from_line, dedupe_key = Page.parse, Fact.from_line, Fact.dedupe_key

    reference = [False]

    def counting_parse(slug, text, known=None, previous=None):
        if known is None:  # `load_pages`' reads (the reference the tests compare with): not counted
            reference[0] = True
            try:
                return parse(slug, text)
            finally:
                reference[0] = False
        seen["parse"].append(slug)
        return parse(slug, text, known, previous)

    def counting_line(line, section):
        seen["line"] += 0 if reference[0] else 1
        return from_line(line, section)

    def counting_keys(self):
        seen["keys"] += 1
        return dedupe_key(self)

    monkeypatch.setattr(Page, "parse", staticmethod(counting_parse))
    monkeypatch.setattr(Fact, "from_line", staticmethod(counting_line))
    monkeypatch.setattr(Fact, "dedupe_key", counting_keys)
    return seen


def two_pages(fiches: Path) -> tuple[Page, Page]:
    a = Page(slug="a", name="A")
    for f in (fact("f1", "x"), fact("f2", "y", "semantic", key="lives_in", value="Porto"), fact("f5", "v", "procedural")):
        a.add_fact(f)
    b = Page(slug="b", name="B", facts=[fact("f3", "z")])
    a.write(fiches)
    b.write(fiches)
    return a, b


def test_the_reader_parses_a_file_only_when_its_text_changed(tmp_path, counted):
    fiches = tmp_path / "fiches"
    a, b = two_pages(fiches)
    reader = PageReader()
    first = reader.load(fiches)
    assert counted["parse"] == ["a", "b"] and counted["line"] == 4
    second = reader.load(fiches)
    assert counted["parse"] == ["a", "b"] and second["a"] is first["a"] and second["b"] is first["b"]
    b.facts.append(fact("f4", "w"))
    b.write(fiches)
    third = reader.load(fiches)
    assert counted["parse"] == ["a", "b", "b"] and counted["line"] == 5  # only the new line read
    assert third["b"].facts[0] is first["b"].facts[0] and third["a"] is first["a"]
    # A hand edit that re-formats a line: read again, the others reused.
    path = fiches / "b.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(i for i, ln in enumerate(lines) if "f4" in ln)
    text, _, meta = lines[i][2:].rpartition(" <!-- ")
    lines[i] = f"- {text} <!-- {json.dumps(json.loads(meta.removesuffix(' -->')), separators=(',', ':'))} -->"
    path.write_text("\n".join(lines), encoding="utf-8")
    fourth = reader.load(fiches)
    assert counted["line"] == 6 and fourth["b"].facts[0] is first["b"].facts[0]
    assert third == load_pages(fiches) and fourth == load_pages(fiches)
    # The file changed again: the re-formatted line, as read, is known too.
    path.write_text(path.read_text(encoding="utf-8") + "\n" + fact("f5", "more").to_line(), encoding="utf-8")
    fifth = reader.load(fiches)
    assert counted["line"] == 7 and fifth["b"].facts[1] is fourth["b"].facts[1] and fifth == load_pages(fiches)
    # Every file gone: nothing, and nothing kept.
    for p in fiches.iterdir():
        p.unlink()
    fiches.rmdir()
    assert reader.load(fiches) == {}
    a.write(fiches)
    assert reader.load(fiches) == load_pages(fiches) and counted["parse"][-1] == "a" and len(counted["parse"]) == 6


@pytest.mark.parametrize("others", [("aaa", "zzz"), ("zzz", "aaa")])
def test_a_learned_page_is_not_parsed_and_only_its_own_directory_learns(tmp_path, counted, others):
    fiches = tmp_path / "fiches"
    a, b = two_pages(fiches)
    reader = PageReader()
    reader.load(fiches)
    assert counted["parse"] == ["a", "b"]
    a.add_fact(fact("f6", "u", "procedural"))
    a.add_fact(fact("f7", "t", "episodic"))
    reader.learn(Path(str(fiches)), a, a.write(fiches))  # an equal path, another object
    got = reader.load(fiches)
    assert counted["parse"] == ["a", "b"]  # learned: not parsed
    assert got == load_pages(fiches) and got["a"] is not a
    assert [f.id for f in got["a"].facts] == ["f5", "f6", "f2", "f1", "f7"]  # file order: by section
    # Written again without telling the reader: parsed, reusing the learned page's facts.
    a.add_fact(fact("f8", "s", "semantic"))
    a.write(fiches)
    lines = counted["line"]
    again = reader.load(fiches)
    assert counted["parse"] == ["a", "b", "a"] and counted["line"] == lines + 1
    assert again["a"].facts[0] is got["a"].facts[0] and again == load_pages(fiches)
    counted["parse"].pop()
    # Pages written elsewhere are not this reader's: it does not learn them.
    for name in others:
        elsewhere = tmp_path / name
        changed = Page(slug="b", name="B", facts=[fact("f9", "other")])
        reader.learn(elsewhere, changed, changed.write(elsewhere))
    reader.load(fiches)
    assert counted["parse"] == ["a", "b"]
    # The reader follows one directory: another is read afresh, and learns in its turn.
    for name in others:
        elsewhere = tmp_path / name
        assert reader.load(elsewhere) == load_pages(elsewhere)
        changed = Page(slug="b", name="B", facts=[fact("f9", "other"), fact("f8", "more")])
        reader.learn(elsewhere, changed, changed.write(elsewhere))
        n = len(counted["parse"])
        assert reader.load(elsewhere) == load_pages(elsewhere) and len(counted["parse"]) == n
    assert reader.load(fiches) == load_pages(fiches) and counted["parse"][-2:] == ["a", "b"]


def test_dedupe_keys_are_handed_over_not_computed_again(tmp_path, counted):
    fiches = tmp_path / "fiches"
    a, _b = two_pages(fiches)
    reader = PageReader()
    shared = reader.load(fiches)
    counted["keys"] = 0
    mine = reader.load_mutable(fiches)
    assert counted["keys"] == 4  # once per fact of the parsed pages, kept on the shared pages
    mine = reader.load_mutable(fiches)
    assert counted["keys"] == 4
    for page in mine.values():
        assert page._dedupe_keys() == {(f.text, tuple(f.refs)) for f in page.facts}
    assert counted["keys"] == 4
    # A page the writer learned brings its keys along (in section order: the same set).
    a.add_fact(fact("f6", "u"))
    a.write(fiches)
    reader.learn(fiches, a, (fiches / "a.md").read_text(encoding="utf-8"))
    counted["keys"] = 0
    mine = reader.load_mutable(fiches)
    assert counted["keys"] == 0  # none computed again
    assert mine["a"]._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine["a"].facts}
    assert not mine["a"].add_fact(fact("f6", "u")) and mine["a"].add_fact(fact("f10", "new"))
    assert shared["b"] is reader.load(fiches)["b"]


def test_dedupe_keys_of_a_long_page_are_computed_once(tmp_path, counted):
    # Past 256 facts, lengths are not CPython's shared small integers: compared by value.
    fiches = tmp_path / "fiches"
    Page(slug="long", name="Long", facts=[fact(f"f{i}", f"t{i}") for i in range(300)]).write(fiches)
    reader = PageReader()
    reader.load_mutable(fiches)
    counted["keys"] = 0
    mine = reader.load_mutable(fiches)["long"]
    assert counted["keys"] == 0 and len(mine._dedupe_keys()) == 300 and counted["keys"] == 0
    page = Page(slug="learned", name="Learned")
    for i in range(300):
        page.add_fact(fact(f"g{i}", f"u{i}"))
    reader.learn(fiches, page, page.write(fiches))
    counted["keys"] = 0
    mine = reader.load_mutable(fiches)["learned"]
    assert counted["keys"] == 0 and len(mine._dedupe_keys()) == 300 and counted["keys"] == 0


def test_stale_dedupe_keys_are_never_handed_over(tmp_path):
    fiches = tmp_path / "fiches"
    a, _b = two_pages(fiches)
    reader = PageReader()
    # A writer appended to its page's list without add_fact: the keys it held are not learned.
    a.facts.append(fact("f6", "u"))
    reader.load(fiches)
    reader.learn(fiches, a, a.write(fiches))
    mine = reader.load_mutable(fiches)["a"]
    assert mine._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine.facts}
    assert not mine.add_fact(fact("f6", "u"))
    # Shared pages changed behind the reader's back (which the contract forbids): keys follow.
    for change in ("append", "pop"):
        shared = reader.load(fiches)["b"]
        reader.load_mutable(fiches)
        if change == "append":
            shared.facts.append(fact("f11", "late"))
        else:
            shared.facts.pop()
        mine = reader.load_mutable(fiches)["b"]
        assert mine._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine.facts}


# --- IncrementalDumps: what it encodes again -------------------------------------------------------

def test_incremental_dumps_encodes_only_what_changed(monkeypatch):
    calls: list[tuple[int, str]] = []
    real = jsonfast._encode

    def recording(o, level):
        if level <= 2:
            calls.append((level, json.dumps(o)))
        return real(o, level)

    monkeypatch.setattr(jsonfast, "_encode", recording)
    inc = jsonfast.IncrementalDumps()
    data = {"lots": [{"id": "b1", "n": 1}], "integres": {"b1": [1, 2]}, "n": 0, "open": None}

    def step(expected):
        calls.clear()
        text = inc.dumps(data)
        assert text == json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        assert calls == expected
        assert inc.unchanged(data)

    step([(2, "[1, 2]"), (2, '{"id": "b1", "n": 1}'), (1, "0"), (1, "null")])  # in key order
    step([])
    data["lots"].append({"id": "b2", "n": 2})
    assert not inc.unchanged(data)
    step([(2, '{"id": "b2", "n": 2}')])
    data["lots"][0]["n"] = 5
    step([(2, '{"id": "b1", "n": 5}')])
    data["lots"][1] = 1
    step([(2, "1")])
    data["integres"]["b2"] = [3]
    step([(2, "[3]")])
    data["integres"]["b1"].append(3)
    step([(2, "[1, 2, 3]")])
    data["n"] = 1
    step([(1, "1")])
    data["n"] = True
    step([(1, "true")])
    data["n"] = 1.0
    step([(1, "1.0")])
    data["new"] = "x"
    step([(1, '"x"')])
    del data["open"]
    step([])
    data["lots"] = {"b1": [1], "b2": [2]}  # a list become a dict: its items encoded
    step([(2, "[1]"), (2, "[2]")])
    data["lots"]["b3"] = [3]
    step([(2, "[3]")])
    data["integres"] = [[1, 2, 3], [3]]  # a dict become a list
    step([(2, "[1, 2, 3]"), (2, "[3]")])
    data["integres"] = []
    step([(1, "[]")])
    data["integres"] = {}
    step([(1, "{}")])
    data["n"] = {1: "a"}  # a key that is not a string: encoded whole
    step([(1, '{"1": "a"}'), (2, '"a"')])
    # Anything but a dict with string keys is written whole, and forgets what it wrote.
    calls.clear()
    assert inc.dumps([data["lots"]]) == json.dumps([data["lots"]], indent=1, sort_keys=True)
    assert calls[0] == (0, json.dumps([data["lots"]])) and not inc.unchanged(data)
    calls.clear()
    jsonfast.IncrementalDumps().dumps(data)
    full = list(calls)  # what a new encoder encodes
    assert len(full) == 7
    for other in ({}, {1: "a"}, {2: "b", 3: "a"}):
        inc.dumps(data)
        calls.clear()
        assert inc.dumps(other) == json.dumps(other, indent=1, sort_keys=True) and calls[0][0] == 0
        assert not inc.unchanged(data)
        calls.clear()
        inc.dumps(data)
        assert calls == full  # every top-level value again
    assert not inc.unchanged([]) and not inc.unchanged({**data, "more": 1})


# --- EdgeBuilder: the facts it reads ---------------------------------------------------------------

class CountingFact(Fact):
    """A fact whose text reads are counted (what the builder looks at)."""

    reads = [0]

    def __getattribute__(self, name):
        if name == "text":
            CountingFact.reads[0] += 1
        return object.__getattribute__(self, name)


def test_the_edge_builder_reads_only_the_facts_that_came_or_changed():
    pages = {
        "a": Page(slug="a", name="Ana", facts=[CountingFact(id="f1", text="ana met rex", section="episodic", refs=["r1"])]),
        "r": Page(slug="r", name="Rex", facts=[CountingFact(id="f2", text="rex ran", section="episodic", refs=["r1"]),
                                             CountingFact(id="f3", text="a walk", section="episodic", refs=["r2"])]),
    }
    builder = EdgeBuilder()
    assert builder.build(pages) == build_edges(pages)
    CountingFact.reads[0] = 0
    assert builder.build(pages) == build_edges(pages)
    reads_of_build_edges = CountingFact.reads[0]
    CountingFact.reads[0] = 0
    builder.build(pages)
    assert CountingFact.reads[0] == 0 and reads_of_build_edges == 3  # nothing changed: nothing read
    pages["r"].facts.append(CountingFact(id="f4", text="with ana", section="episodic", refs=["r3"]))
    builder.build(pages)
    assert CountingFact.reads[0] == 2  # the new fact: counted (text folded, then held)
    CountingFact.reads[0] = 0
    other = Fact(id="x", text="x", section="episodic", refs=[])
    other.text = "y"  # an edit elsewhere: every held fact's text is compared once
    assert builder.build(pages) == build_edges(pages) and CountingFact.reads[0] == 4 + 4


# --- EdgeBuilder: more shapes against build_edges --------------------------------------------------

SHORT = ["Al", "Bo", "Ed", "Éa"]  # names of two letters: no edge (names of 3 letters and more only)
EXACT3 = ["Rex", "Ana", "Léo", "Zoé"]  # three letters, accents folded
LONG = ["Marie", "Porto Club", "Élodie", "Lisbon"]
FILL = ["garden", "river", "coffee", "ab", "al", "bo", "ea", "leo", "zoe", "elodie", "rex", "ana", "porto club",
        "marie", "x"]


def random_edge_step(rng, pages: dict[str, Page], refs: list[str]) -> None:
    roll = rng.random()
    if roll < 0.07 and pages:
        del pages[rng.choice(sorted(pages))]
    elif roll < 0.17 and pages:  # names change: an alias added or dropped, or the page renamed
        page = rng.choice(list(pages.values()))
        what = rng.random()
        if what < 0.4:
            page.aliases.append(rng.choice(SHORT + EXACT3 + LONG))
        elif what < 0.7 and page.aliases:
            page.aliases.pop(rng.randrange(len(page.aliases)))
        else:
            page.name = rng.choice(SHORT + EXACT3 + LONG)
    elif roll < 0.27 and pages:  # facts gone, or read again as new objects
        page = rng.choice(list(pages.values()))
        if page.facts and rng.random() < 0.6:
            for _ in range(rng.randint(1, 3)):
                if page.facts:
                    page.facts.pop(rng.randrange(len(page.facts)))
        else:
            page.facts = [replace(f) for f in page.facts]
    elif roll < 0.37 and pages:  # a fact edited in place (text, refs or both) or replaced
        page = rng.choice(list(pages.values()))
        if page.facts:
            i = rng.randrange(len(page.facts))
            what = rng.random()
            text = " ".join(rng.sample(FILL, rng.randint(1, 3)))
            if what < 0.3:
                page.facts[i].text = text
            elif what < 0.6:
                page.facts[i].refs = rng.sample(refs, rng.randint(0, 2))
            elif what < 0.8:
                page.facts[i].text, page.facts[i].refs = text, rng.sample(refs, rng.randint(1, 2))
            else:
                page.facts[i] = replace(page.facts[i], text=text)
    elif roll < 0.42 and pages:  # the same fact object on two pages
        a, b = rng.sample(list(pages.values()), 2) if len(pages) > 1 else (next(iter(pages.values())),) * 2
        if a.facts:
            b.facts.append(rng.choice(a.facts))
    elif roll < 0.45:  # an edit to a fact on no page
        Fact(id="loose", text="x", section="episodic", refs=[]).refs = ["r"]
    else:
        slug = rng.choice([*sorted(pages), f"s{rng.randint(0, 7)}"])
        page = pages.setdefault(slug, Page(slug=slug, name=rng.choice(SHORT + EXACT3 + LONG)))
        for _ in range(rng.randint(1, 4)):
            words = rng.sample(FILL, rng.randint(1, 3))
            if rng.random() < 0.3:  # names as written, case and accents included
                words.append(rng.choice(SHORT + EXACT3 + LONG))
            f = Fact(id=f"f{rng.randint(0, 25)}", text=" ".join(words), section="episodic",
                     refs=rng.sample(refs, rng.randint(0, 3)))
            page.facts.append(f)
            if rng.random() < 0.1:  # the same object twice on a page, or its twin
                page.facts.append(f if rng.random() < 0.5 else replace(f))


@pytest.mark.parametrize("seed", range(20))
def test_the_edge_builder_gives_build_edges_on_short_accented_and_shared_names(seed):
    rng = random.Random(seed)
    builder = EdgeBuilder()
    pages: dict[str, Page] = {}
    refs = [f"brut:b1:{i}" for i in range(rng.choice([3, 8]))]
    for _ in range(50):
        for _ in range(rng.randint(1, 4)):
            random_edge_step(rng, pages, refs)
        got = builder.build(pages)
        assert got == build_edges(pages)
        assert all(e["preuves"] for e in got)
        if rng.random() < 0.2:  # built twice without a change
            assert builder.build(pages) == got
    assert builder.build({}) == [] and builder.build(pages) == build_edges(pages)


def test_the_edge_builder_looks_only_at_the_pages_whose_facts_changed(monkeypatch):
    from lsrep.systems.exia_seed import graph as graph_mod
    calls = [0]

    def counting_id(obj):
        calls[0] += 1
        return id(obj)

    monkeypatch.setattr(graph_mod, "id", counting_id, raising=False)
    monkeypatch.setattr(pages_mod, "id", counting_id, raising=False)  # `picked`, which walks a page
    pages = {"a": Page(slug="a", name="Ana", facts=[fact(f"a{i}", f"rex {i}") for i in range(3)]),
             "r": Page(slug="r", name="Rex", facts=[fact(f"r{i}", f"ana {i}") for i in range(2)])}
    builder = EdgeBuilder()
    builder.build(pages)
    calls[0] = 0
    assert builder.build(pages) == build_edges(pages)
    assert calls[0] == 5  # each fact's id, once: no page changed
    calls[0] = 0
    pages["a"].facts.append(fact("a9", "rex again"))
    assert builder.build(pages) == build_edges(pages)
    assert calls[0] == 6 + 4 + 1  # the ids, then page a's facts looked up once, the new one kept
    calls[0] = 0
    pages["a"].facts.pop(0)
    assert builder.build(pages) == build_edges(pages)
    assert calls[0] == 5 + 3  # page a's facts looked up: none new


def test_a_page_whose_facts_list_was_replaced_takes_its_keys_from_the_new_list(tmp_path):
    page = Page(slug="a", name="A")
    for f in (fact("f1", "x"), fact("f2", "y")):
        page.add_fact(f)
    page.facts = [fact("g1", "u"), fact("g2", "v")]  # another list, as long as the first
    assert page._dedupe_keys() == {("u", ("brut:b1:g1",)), ("v", ("brut:b1:g2",))}
    assert page.add_fact(fact("f1", "x")) and not page.add_fact(fact("g1", "u"))
    fiches = tmp_path / "fiches"
    reader = PageReader()
    assert reader.load(fiches) == {}
    page.facts = [fact("h1", "s"), fact("h2", "t"), fact("h3", "w")]  # again, as long as the last
    reader.learn(fiches, page, page.write(fiches))
    mine = reader.load_mutable(fiches)["a"]
    assert mine._dedupe_keys() == {(t, (f"brut:b1:{i}",)) for t, i in (("s", "h1"), ("t", "h2"), ("w", "h3"))}
    assert mine.add_fact(fact("g1", "u")) and not mine.add_fact(fact("h2", "t"))


def test_keys_follow_the_list_not_its_content(tmp_path):
    # A fact replaced in the list (which add_fact does not see), then the list itself replaced by
    # an equal copy: another list, so its keys are computed afresh (the copy is equal to the old
    # list, the keys kept for it are not).
    def stale(page: Page, text: str = "changed") -> None:
        page._dedupe_keys()
        page.facts[0] = fact("c", text)
        page.facts = list(page.facts)

    page = Page(slug="a", name="A", facts=[fact("f1", "x"), fact("f2", "y")])
    stale(page)
    assert page._dedupe_keys() == {("changed", ("brut:b1:c",)), ("y", ("brut:b1:f2",))}
    fiches = tmp_path / "fiches"
    reader = PageReader()
    reader.load(fiches)
    page = Page(slug="a", name="A")
    for f in (fact("f1", "x"), fact("f2", "y")):
        page.add_fact(f)
    stale(page)
    reader.learn(fiches, page, page.write(fiches))
    mine = reader.load_mutable(fiches)["a"]
    assert mine._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine.facts}
    shared = reader.load(fiches)["a"]
    reader.load_mutable(fiches)
    stale(shared, "changed again")  # a shared page changed behind the reader's back
    mine = reader.load_mutable(fiches)["a"]
    assert mine._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine.facts}


def test_a_fact_assigned_an_equal_text_or_refs_is_counted_again():
    # The builder compares what it counted by object: a text or refs assigned anew, even equal,
    # is taken out and counted again (reading the text to fold it and to hold it).
    f1 = CountingFact(id="f1", text="ana met rex", section="episodic", refs=["r1"])
    f2 = CountingFact(id="f2", text="rex ran", section="episodic", refs=["r1"])
    pages = {"a": Page(slug="a", name="Ana", facts=[f1]), "r": Page(slug="r", name="Rex", facts=[f2])}
    builder = EdgeBuilder()
    edges = builder.build(pages)
    for assign in (lambda: setattr(f1, "text", "".join(list(f1.text))), lambda: setattr(f1, "refs", list(f1.refs))):
        assign()
        CountingFact.reads[0] = 0
        got = builder.build(pages)
        assert CountingFact.reads[0] == 2 + 2  # each held fact's text compared; f1's folded and held
        assert got == edges == build_edges(pages)



class CountingDict(dict):
    """The builder's held facts, with its membership tests counted."""

    tests = 0

    def __contains__(self, key):
        CountingDict.tests += 1
        return super().__contains__(key)


def test_the_edge_builder_checks_only_the_facts_that_came_or_went():
    pages = {"a": Page(slug="a", name="Ana", facts=[fact(f"a{i}", f"rex {i}") for i in range(3)]),
             "r": Page(slug="r", name="Rex", facts=[fact(f"r{i}", f"ana {i}") for i in range(2)])}
    builder = EdgeBuilder()
    builder._facts = CountingDict()
    builder.build(pages)
    assert CountingDict.tests == 5  # each new fact, once
    CountingDict.tests = 0
    builder.build(pages)
    assert CountingDict.tests == 0
    pages["a"].facts.append(fact("a9", "rex again"))
    assert builder.build(pages) == build_edges(pages) and CountingDict.tests == 1
    CountingDict.tests = 0
    pages["a"].facts.pop(0)
    assert builder.build(pages) == build_edges(pages) and CountingDict.tests == 1
    CountingDict.tests = 0
    pages["a"].facts[0] = fact("a8", "rex once more")  # one out, one in
    assert builder.build(pages) == build_edges(pages) and CountingDict.tests == 2


def test_pages_read_again_under_equal_slugs_never_name_themselves():
    def again(slug: str) -> str:  # an equal string, another object (as a page read again gives)
        return "".join(list(slug))

    pages = {again("ana"): Page(slug="ana", name="Ana", facts=[fact("f1", "ana and rex", refs=["r1"])]),
             again("rex"): Page(slug="rex", name="Rex", facts=[fact("f2", "rex alone", refs=["r2"])])}
    builder = EdgeBuilder()
    assert builder.build(pages) == build_edges(pages)
    for step in range(3):
        pages = {again(s): p for s, p in pages.items()}
        if step == 0:  # a page renamed: its own facts matched again
            pages["ana"].aliases.append("Anita")
        elif step == 1:  # a new fact naming its own page, and one citing its page's source
            pages["ana"].facts.append(fact("f3", "anita and ana", refs=["r1"]))
        else:  # a fact gone that shared its source with another on the same page
            pages["ana"].facts.pop(0)
        got = builder.build(pages)
        assert got == build_edges(pages) and all(e["a"] != e["b"] for e in got)



def test_fact_edits_start_at_zero_in_a_new_process():
    code = ("from lsrep.systems.exia_seed.pages import Fact, fact_edits; a = fact_edits(); "
            "f = Fact(id='f', text='t', section='s', refs=[]); f.text = 'u'; print(a, fact_edits())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "1"]


@pytest.mark.parametrize("change", ["pop", "append"])
def test_keys_follow_facts_taken_off_or_put_on_the_list_directly(tmp_path, change):
    # Facts removed from (or appended to) the page's own list other than by add_fact: the keys
    # kept for the list's former length are not used, on the page or handed to a reader.
    def edit(page: Page) -> None:
        page._dedupe_keys()
        if change == "pop":
            page.facts.pop()
        else:
            page.facts.append(fact("f9", "appended"))

    page = Page(slug="a", name="A")
    for f in (fact("f1", "x"), fact("f2", "y")):
        page.add_fact(f)
    edit(page)
    assert page._dedupe_keys() == {(f.text, tuple(f.refs)) for f in page.facts}
    assert page.add_fact(fact("f2", "y")) == (change == "pop")
    fiches = tmp_path / "fiches"
    reader = PageReader()
    reader.load(fiches)
    page = Page(slug="a", name="A")
    for f in (fact("f1", "x"), fact("f2", "y")):
        page.add_fact(f)
    edit(page)
    reader.learn(fiches, page, page.write(fiches))
    mine = reader.load_mutable(fiches)["a"]
    assert mine._dedupe_keys() == {(f.text, tuple(f.refs)) for f in mine.facts}
    assert mine.add_fact(fact("f2", "y")) == (change == "pop")


def test_sections_beyond_the_known_ones_come_after_them_sorted_in_sections_and_body():
    names = ["zeta", "semantic", "mu", "alpha", "procedural", "omega", "beta"]
    page = Page(slug="p", name="P", facts=[fact(f"f{i}", f"t{i}", s) for i, s in enumerate(names)])
    expected = ["procedural", "semantic", "alpha", "beta", "mu", "omega", "zeta"]
    assert list(page.sections()) == expected
    headings = [line[3:] for line in page.body().splitlines() if line.startswith("## ")]
    assert headings == expected
    page.add_fact(fact("late", "t late", "gamma"))  # a section first seen after the lines were kept
    headings = [line[3:] for line in page.body().splitlines() if line.startswith("## ")]
    assert headings == ["procedural", "semantic", "alpha", "beta", "gamma", "mu", "omega", "zeta"]
