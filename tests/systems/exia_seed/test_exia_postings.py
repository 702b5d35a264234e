"""`Memoire.nodes_with` and `Memoire.bm25` from FTS5-tokenized postings against the plain rules
(FTS5 queries: `nodes_with_plain`, `bm25_plain`, FTS5's own `bm25()`).

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


QUERIES = [[t] for t in TERMS] + [["garden", "café"], ["cafe", "Café", "garden"], ["naive", "well-known"],
                                  ["x", "y", "42", "lisbon"], ["missing", "roll"], ["garden", "garden"], []]


def agree(m: Memoire) -> None:
    for term in TERMS:
        assert m.nodes_with(term) == m.nodes_with_plain(term), term
    for terms in QUERIES:
        for limit in (1, 50, 0):
            assert m.bm25(terms, limit) == m.bm25_plain(terms, limit), (terms, limit)
    # The counts are those of the table's rows, tokenized afresh.
    fresh = Postings(sqlite3.connect(":memory:"))
    fresh.add(m.db.execute("SELECT rowid, fid, node, texte FROM faits").fetchall())
    assert m._postings.nodes == fresh.nodes and m._postings.groups == fresh.groups
    assert m._postings.rows == fresh.rows and m._postings.total == fresh.total


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
    assert postings.rows == {1: ("a", "f1", 3, {"garden": 2, "river": 1}), 2: ("a", "f2", 1, {"garden": 1}),
                             3: ("b", "f3", 1, {"river": 1})}
    assert postings.groups == {"garden": {(2, 3): {1}, (1, 1): {2}}, "river": {(1, 3): {1}, (1, 1): {3}}}
    assert postings.total == 5
    postings.remove(1)
    assert postings.nodes == {"garden": {"a": 1}, "river": {"b": 1}}
    assert postings.groups == {"garden": {(1, 1): {2}}, "river": {(1, 1): {3}}} and postings.total == 2
    postings.add([(4, "f4", "b", "river")])
    assert postings.groups["river"] == {(1, 1): {3, 4}}
    postings.remove(3)
    assert postings.nodes == {"garden": {"a": 1}, "river": {"b": 1}} and postings.groups["river"] == {(1, 1): {4}}
    postings.remove(4)
    assert postings.nodes == {"garden": {"a": 1}} and postings.groups == {"garden": {(1, 1): {2}}}
    postings.remove(2)
    assert postings.nodes == {} and postings.rows == {} and postings.groups == {} and postings.total == 0


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


def zipf_memory(tmp_path, n: int, seed: int = 3):
    """A page of `n` facts of 3 to 20 words drawn from a Zipf vocabulary (as the scaling benchmark)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    weights = [1.0 / (i + 1) for i in range(400)]
    facts = [fact(f"f{i:05d}", " ".join(rng.choices(vocab, weights, k=rng.randint(3, 20)))) for i in range(n)]
    paths = MemoryPaths(tmp_path / f"z{seed}")
    write(paths, {"user": Page(slug="user", name="User", facts=facts[: n // 2]),
                  "work": Page(slug="work", name="Work", facts=facts[n // 2:])})
    return Memoire(paths)


def test_bm25_agrees_with_fts5_on_zipf_histories_and_scores_a_fraction_of_the_matches(tmp_path):
    m = zipf_memory(tmp_path, 1500)
    db = m.db
    rng = random.Random(9)
    queries = [[f"w{rng.randrange(400)}" for _ in range(rng.randint(1, 4))] for _ in range(40)]
    queries += [["w0"], ["w0", "w1"], ["w399", "w0"], ["w5", "nothing"]]
    matched = scored = 0
    for terms in queries:
        plain = m.bm25_plain(terms, 50)
        before = m._postings.scored
        assert m.bm25(terms, 50) == plain, terms
        scored += m._postings.scored - before
        matched += db.execute("SELECT count(*) FROM faits WHERE faits MATCH ?",
                              (" OR ".join(f'"{t}"' for t in terms),)).fetchone()[0]
    # The plain query scores every match; the postings score a small share of them.
    assert 0 < scored < matched / 3, (scored, matched)


def test_bm25_breaks_score_ties_by_fact_id_and_cuts_at_the_limit(tmp_path):
    # Forty rows score alike: the limit cuts inside the tie, by fact id, as the query does.
    facts = [fact(f"f{i:03d}", "garden river") for i in range(40, 0, -1)] + [fact("f999", "garden garden")]
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, {"a": Page(slug="a", name="Alpha", facts=facts)})
    m = Memoire(paths)
    got = m.bm25(["garden"], 5)
    assert got == m.bm25_plain(["garden"], 5)
    assert [fid for fid, _ in got] == ["f999", "f001", "f002", "f003", "f004"]
    assert got[1][1] == got[4][1] < got[0][1]


def test_bm25_falls_back_to_the_query_exactly_when_the_postings_cannot_answer(tmp_path, monkeypatch):
    m = zipf_memory(tmp_path, 300)
    queries: list[str] = []
    m.db.set_trace_callback(lambda q: q.startswith("--") or queries.append(q))

    def asked() -> int:
        n = len([q for q in queries if "bm25(faits)" in q])
        queries.clear()
        return n

    assert m.bm25(["w3", "w7"], 10) == m.bm25_plain(["w3", "w7"], 10) and asked() == 1  # the reference only
    assert m.bm25(["w3-w7"], 10) == m.bm25_plain(["w3-w7"], 10) and asked() == 2  # two tokens: a phrase
    assert m.bm25(["w3", "--"], 10) == m.bm25_plain(["w3", "--"], 10) and asked() == 2  # no token
    assert m.bm25(["w3"], 0) == [] and asked() == 1  # LIMIT 0
    assert m._postings.top(["w3"], 0) is None and m._postings.top(["w3", "a b"], 5) is None
    assert m.bm25([], 10) == [] and asked() == 0


def test_bm25_gives_up_past_a_third_of_the_matches(tmp_path):
    # 300 rows that score alike: the first group read holds them all, past the budget (100).
    facts = [fact(f"f{i:03d}", "garden river") for i in range(300)]
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, {"a": Page(slug="a", name="Alpha", facts=facts)})
    m = Memoire(paths)
    postings = m._postings if m._postings is not None else (m.db, m._postings)[1]
    assert postings.top(["garden"], 1) is None and postings.scored == 0
    assert m.bm25(["garden"], 1) == m.bm25_plain(["garden"], 1) == [("f000", m.bm25_plain(["garden"], 1)[0][1])]
    # At 25 the floor (4 x 25 = 100) is not above a third either: given up; at 75 it is 300: all read.
    assert postings.top(["garden"], 25) is None
    got = postings.top(["garden"], 75)
    assert got == m.bm25_plain(["garden"], 75) and postings.scored == 300
    # Past the floor too: 299 rows alike plus one of its own, limit 1: read 1 row, stop.
    facts[0] = fact("f000", "garden garden")
    write(paths, {"a": Page(slug="a", name="Alpha", facts=facts)})
    m = Memoire(paths)
    _ = m.db
    assert m._postings.top(["garden"], 1) == m.bm25_plain(["garden"], 1) and m._postings.scored == 1


def test_bm25_on_an_empty_table(tmp_path):
    paths = MemoryPaths(tmp_path / "mem")
    write(paths, {"a": Page(slug="a", name="Alpha")})
    m = Memoire(paths)
    assert m._postings is None or m._postings.rows == {}
    assert m.bm25(["garden"], 5) == [] == m.bm25_plain(["garden"], 5)
    assert m._postings.top(["garden"], 5) == []



def one_page(tmp_path, texts: list[tuple[str, str]]) -> Memoire:
    paths = MemoryPaths(tmp_path / "one")
    write(paths, {"a": Page(slug="a", name="Alpha", facts=[fact(fid, text) for fid, text in texts])})
    m = Memoire(paths)
    _ = m.db
    return m


def test_bm25_reads_the_best_group_of_all_terms_first(tmp_path):
    # "rare" (one row) outscores every "common" row: read first, it alone settles a limit of 1.
    # Reading the common group first would score 50 rows, past the budget (17): given up.
    texts = [("f000", "rare zz")] + [(f"f{i:03d}", "common yy") for i in range(1, 51)]
    texts += [(f"g{i:03d}", "filler ww") for i in range(60)]
    m = one_page(tmp_path, texts)
    got = m._postings.top(["rare", "common"], 1)
    assert got == m.bm25_plain(["rare", "common"], 1) and [fid for fid, _ in got] == ["f000"]
    assert m._postings.scored == 1


def test_bm25_goes_on_while_an_unread_row_can_tie_the_last_kept_score(tmp_path):
    # "alpha" and "beta" each in one row of the same length: equal scores. Alpha's row (f2) is
    # read first; beta's (f1) could still tie it, and wins the tie by fact id.
    m = one_page(tmp_path, [("f2", "alpha zz"), ("f1", "beta zz"), ("f3", "other ww")])
    got = m._postings.top(["alpha", "beta"], 1)
    assert got == m.bm25_plain(["alpha", "beta"], 1) and [fid for fid, _ in got] == ["f1"]
    assert m._postings.scored == 2


def test_bm25_budget_is_a_third_of_the_matches_at_the_boundary(tmp_path):
    # 15 rows match: budget max(15 // 3, 4 x 1) = 5. The best group holds 5 rows: read, answered.
    texts = [(f"f{i:02d}", "garden garden") for i in range(5)] + [(f"g{i:02d}", "garden river") for i in range(10)]
    m = one_page(tmp_path, texts)
    got = m._postings.top(["garden"], 1)
    assert got == m.bm25_plain(["garden"], 1) and got[0][0] == "f00" and m._postings.scored == 5
    # Six rows in the best group of 15 matches: one past the budget, given up.
    texts[5] = ("g00", "garden garden")
    m = one_page(tmp_path / "six", texts)
    assert m._postings.top(["garden"], 1) is None and m._postings.scored == 0
    # Five rows in the best group of 14 matches: budget 14 // 3 = 4, one past it, given up.
    m = one_page(tmp_path / "fourteen", texts[:5] + texts[6:])
    assert m._postings.top(["garden"], 1) is None and m._postings.scored == 0
    assert m.bm25(["garden"], 1) == m.bm25_plain(["garden"], 1)


def test_a_negative_limit_is_the_querys_no_limit(tmp_path):
    m = one_page(tmp_path, [(f"f{i}", "garden " * (i + 1)) for i in range(6)])
    assert m._postings.top(["garden"], -1) is None
    got = m.bm25(["garden"], -1)
    assert got == m.bm25_plain(["garden"], -1) and [fid for fid, _ in got] == [f"f{i}" for i in range(5, -1, -1)]



def test_bm25_stops_on_the_limit_th_best_score_not_one_past_it(tmp_path):
    # "beta" and "alpha" in three rows each (equal IDF, s for a row of two tokens). Beta's best group
    # holds r1 ("beta alpha": 2s) and r2 (s); with a limit of 1 the kept score is 2s, above every
    # unread row's bound (beta's next group + alpha's best, s), so two rows are scored. Keeping one
    # score too many would compare s with that bound and read alpha's group as well.
    texts = [("r1", "beta alpha"), ("r2", "beta xx"), ("r3", "beta yy zz"), ("a1", "alpha qq"), ("a2", "alpha ww")]
    texts += [(f"n{i:02d}", "filler") for i in range(15)]
    m = one_page(tmp_path, texts)
    got = m._postings.top(["beta", "alpha"], 1)
    assert got == m.bm25_plain(["beta", "alpha"], 1) and [fid for fid, _ in got] == ["r1"]
    assert m._postings.scored == 2


def test_the_term_cache_is_bounded_past_the_small_integers(monkeypatch):
    from lsrep.systems.exia_seed import cache
    monkeypatch.setattr(cache, "TERMS_KEPT", 300)
    postings = Postings(sqlite3.connect(":memory:"))
    for i in range(300):
        postings.term_tokens(f"t{i}")
    assert len(postings.terms) == 300
    postings.term_tokens("last")
    assert postings.terms == {"last": ("last",)}



def test_bm25_past_256_groups_and_a_limit_past_256(tmp_path):
    # 260 rows of 260 lengths: 260 groups for "garden", read to the end (positions past the small
    # integers); and a limit of 257 against a best group of 258 rows (the kept scores' count past them).
    m = one_page(tmp_path, [(f"f{i:03d}", "garden" + " w" * i) for i in range(260)])
    got = m._postings.top(["garden"], 300)
    assert got == m.bm25_plain(["garden"], 300) and len(got) == 260 and m._postings.scored == 260
    texts = [(f"r{i:03d}", "beta alpha") for i in range(257)] + [("r2", "beta xx"), ("r3", "beta yy zz")]
    texts += [("a1", "alpha qq"), ("a2", "alpha ww")] + [(f"n{i:03d}", "filler") for i in range(300)]
    m = one_page(tmp_path / "limit", texts)
    got = m._postings.top(["beta", "alpha"], 257)
    assert got == m.bm25_plain(["beta", "alpha"], 257) and m._postings.scored == 258


# Last: the slowest (the fast, sharp tests above stop a mutation run first).
def test_nodes_with_agrees_with_the_plain_rule_along_random_histories(tmp_path):
    for seed in range(3):
        rng = random.Random(seed)
        paths = MemoryPaths(tmp_path / f"m{seed}")
        pages: dict[str, Page] = {}
        reader = PageReader()
        previous: Memoire | None = None
        n = 0
        for _step in range(10):
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
