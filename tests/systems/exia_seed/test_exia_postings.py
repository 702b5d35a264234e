"""`Memoire.nodes_with` from FTS5-tokenized postings against the plain rule (an FTS5 query).

The plain rule, `nodes_with_plain`, is kept as the reference: the pages holding a term (facts or
names) as `SELECT DISTINCT node ... WHERE ... MATCH '"term"'` gives them. The postings must give
the same set for every term, on fresh memories and on memories derived from the previous one
along random histories (facts added, removed, rewritten in place, pages deleted), with texts
that exercise FTS5's tokenizer (accents, ligatures, apostrophes, hyphens, digits, underscores,
other scripts, quotes), and must do so without asking the `faits` table (the work it saves).
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime

from lsrep.systems.exia_seed.cache import Memoire, Postings
from lsrep.systems.exia_seed.files import MemoryPaths
from lsrep.systems.exia_seed.graph import write_graph
from lsrep.systems.exia_seed.pages import Fact, Page, PageReader

NOW = datetime(2025, 3, 1, 12, tzinfo=UTC)
WORDS = ["garden", "Garden", "GARDEN", "café", "cafe", "Café's", "naïve", "naive", "élan", "Straße", "strasse",
         "ﬁne", "fine", "don't", "dont", "well-known", "known", "well", "e-mail", "mail", "x_y", "x", "y", "42",
         "4,2", "2025-03-01", "Lisbon", "lisbon", "Lisboa", "Πάρος", "παρος", "東京", "über", "uber", "ǅemal",
         "o'clock", "rock'n'roll", "roll", "a", "I", "the", "—", "...", "Ça", "ca", "œuvre", "oeuvre", "ß",
         "Ål", "al", "ﬀ", "ff", "İstanbul", "istanbul", "ǈ"]
TERMS = [*WORDS, "", '"', 'ga"rden', "well known", "café cafe", "  ", "x y", "-", "_", "rock", "n", "clock",
         "missing", "GARDEN'S", "gardens", "t", "don", "s"]


def fact(fid: str, text: str) -> Fact:
    return Fact(id=fid, text=text, section="episodic", refs=[f"brut:b:{fid}"])


def text_of(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) + rng.choice(["", ".", "!", " ?"])


def write(paths: MemoryPaths, pages: dict[str, Page]) -> None:
    for page in pages.values():
        page.write(paths.fiches)
    write_graph(paths, pages, NOW)


def agree(m: Memoire) -> None:
    for term in TERMS:
        assert m.nodes_with(term) == m.nodes_with_plain(term), term
    # The counts are those of the table's rows, tokenized afresh.
    fresh = Postings(sqlite3.connect(":memory:"))
    fresh.add(m.db.execute("SELECT rowid, fid, node, texte FROM faits").fetchall())
    assert m._postings.nodes == fresh.nodes
    assert sorted(m._postings.rows) == sorted(fresh.rows)


def test_tokens_are_fts5s_own():
    postings = Postings(sqlite3.connect(":memory:"))
    assert postings.tokens(["Héllo wörld hello", "don't stop-me", "", "ǅemal x_y 4,2"]) == [
        ["hello", "world", "hello"], ["don", "t", "stop", "me"], [], ["ǆemal", "x", "y", "4", "2"]]
    assert postings.tokens([]) == []
    assert postings.tokenized == 4
    assert postings.term_tokens('ca"fé') == ("cafe",) and postings.term_tokens("well-known") == ("well", "known")
    assert postings.term_tokens("") == ()
    assert postings.tokenized == 7
    assert postings.term_tokens('ca"fé') == ("cafe",) and postings.tokenized == 7  # cached
    # The scratch table is left empty after each batch.
    assert postings.db.execute("SELECT count(*) FROM jetons").fetchone() == (0,)


def test_postings_count_rows_per_page_and_forget_removed_rows():
    postings = Postings(sqlite3.connect(":memory:"))
    postings.add([(1, "f1", "a", "garden garden river"), (2, "f2", "a", "garden"), (3, "f3", "b", "River")])
    assert postings.nodes == {"garden": {"a": 2}, "river": {"a": 1, "b": 1}}
    assert postings.rows == {1: ("a", ("garden", "river")), 2: ("a", ("garden",)), 3: ("b", ("river",))}
    postings.remove(1)
    assert postings.nodes == {"garden": {"a": 1}, "river": {"b": 1}}
    postings.remove(3)
    assert postings.nodes == {"garden": {"a": 1}}
    postings.remove(2)
    assert postings.nodes == {} and postings.rows == {}


def test_the_term_cache_is_bounded(monkeypatch):

    from lsrep.systems.exia_seed import cache
    monkeypatch.setattr(cache, "TERMS_KEPT", 3)
    postings = Postings(sqlite3.connect(":memory:"))
    for term in ("a", "b", "c"):
        postings.term_tokens(term)
    assert len(postings.terms) == 3
    postings.term_tokens("d")
    assert postings.terms == {"d": ("d",)}
    postings.term_tokens("d")
    assert postings.tokenized == 4


def test_nodes_with_agrees_with_the_plain_rule_along_random_histories(tmp_path):
    for seed in range(6):
        rng = random.Random(seed)
        paths = MemoryPaths(tmp_path / f"m{seed}")
        pages: dict[str, Page] = {}
        reader = PageReader()
        previous: Memoire | None = None
        n = 0
        for _step in range(12):
            for _ in range(rng.randint(1, 6)):
                slug = rng.choice(["alpha", "bravo", "charlie", "delta"])
                page = pages.setdefault(slug, Page(slug=slug, name=rng.choice(["Garden", "Café", slug.title()])))
                n += 1
                page.facts.append(fact(f"f{n:04d}", text_of(rng)))
            for page in pages.values():
                if page.facts and rng.random() < 0.3:
                    page.facts.pop(rng.randrange(len(page.facts)))
                if page.facts and rng.random() < 0.3:
                    i = rng.randrange(len(page.facts))
                    page.facts[i] = replace(page.facts[i], text=text_of(rng))
            if len(pages) > 2 and rng.random() < 0.15:
                gone = rng.choice(sorted(pages))
                del pages[gone]
                (paths.fiches / f"{gone}.md").unlink(missing_ok=True)
            write(paths, pages)
            current = Memoire(paths, reader, previous)
            if previous is not None:
                assert current._db is not None and previous._db is None  # derived: the tables taken
            agree(current)
            agree(Memoire(paths))
            previous = current


def test_nodes_with_agrees_on_real_shaped_dialogue(tmp_path):
    lines = [
        "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
        "Melanie painted a sunrise over the lake last year; she's proud of it!",
        "I moved to Lisbon this week. The apartment near Rua Augusta is tiny but bright.",
        "My sister's wedding is in Coimbra (June 14th) — I'm the maid of honour.",
        "We adopted a dog named Rex; he loves the park by the river.",
        "Jean-Pierre recommended 'Les Misérables' and the café on rue de Rivoli.",
        "The budget meeting moved to 3:30pm; send the Q3 report to finance@example.com.",
        "Je préfère le thé vert le matin, surtout en hiver.",
    ]
    pages = {
        "user": Page(slug="user", name="User", facts=[fact(f"u{i}", t) for i, t in enumerate(lines[:5])]),
        "rex": Page(slug="rex", name="Rex", aliases=["the dog"], facts=[fact("r1", lines[4])]),
        "jean-pierre": Page(slug="jean-pierre", name="Jean-Pierre", facts=[fact(f"j{i}", t) for i, t in
                                                                           enumerate(lines[5:])]),
    }
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, pages)
    m = Memoire(paths)
    terms = {w.strip(".,;!?()'—") for line in lines for w in line.split()} | {"jean-pierre", "misérables", "3:30pm"}
    for term in sorted(terms):
        assert m.nodes_with(term) == m.nodes_with_plain(term), term
    assert m.nodes_with("river") == {"user", "rex"} and m.nodes_with("dog") == {"user", "rex"}
    assert m.nodes_with("jean") == {"jean-pierre"} and m.nodes_with("rex") == {"user", "rex"}


def test_a_one_token_term_never_asks_the_facts_table(tmp_path):
    pages = {"a": Page(slug="a", name="Alpha", facts=[fact(f"a{i}", f"garden river {i}") for i in range(40)]),
             "b": Page(slug="b", name="Garden", facts=[fact("b1", "violin")])}
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, pages)
    m = Memoire(paths)
    db = m.db
    queries: list[str] = []
    db.set_trace_callback(lambda q: q.startswith("--") or queries.append(q))  # statements, not FTS5's own
    assert m.nodes_with("garden") == {"a", "b"}
    assert m.nodes_with("violin") == {"b"} and m.nodes_with("alpha") == {"a"} and m.nodes_with("zebra") == set()
    assert not [q for q in queries if "faits" in q]
    assert len([q for q in queries if "noms" in q]) == 4  # the names are still asked, once a term
    # A term FTS5 reads as two tokens goes to the table (a phrase), as does one without tokens.
    queries.clear()
    assert m.nodes_with("river-garden") == m.nodes_with_plain("river-garden") == set()
    assert m.nodes_with("garden river") == {"a"}
    assert m.nodes_with("--") == set()
    assert len([q for q in queries if "FROM faits" in q]) == 4  # three fallbacks, one reference call
    db.set_trace_callback(None)


def test_a_derived_memoire_tokenizes_only_the_rows_that_came_in(tmp_path):
    a = Page(slug="a", name="Alpha", facts=[fact(f"a{i}", f"garden river {i}") for i in range(30)])
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, {"a": a})
    reader = PageReader()
    first = Memoire(paths, reader)
    assert first.nodes_with("garden") == {"a"}
    postings = first._postings
    before = postings.tokenized
    assert before == 31  # 30 rows, one term
    a.facts.append(fact("a99", "violin"))
    a.facts[0] = replace(a.facts[0], text="piano")
    write(paths, {"a": a})
    second = Memoire(paths, reader, first)
    assert second._postings is postings and first._postings is None
    assert postings.tokenized == before + 2  # the new row and the rewritten one
    assert second.nodes_with("violin") == {"a"} and second.nodes_with("piano") == {"a"}
    assert postings.nodes["garden"] == {"a": 29}
    assert postings.tokenized == before + 4  # two new terms
    # The previous memory, used again, builds its own tables and postings.
    assert first.nodes_with("violin") == set() and first._postings is not postings
