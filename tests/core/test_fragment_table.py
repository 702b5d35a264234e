"""A unit's fragment rows held as a `FragmentTable` (a repeated context as a reference) read as the
plain list of copies, and the store writes them identically, copying repeated contexts in SQL."""

from __future__ import annotations

import pytest

from lsrep.fragment_rows import FragmentTable
from lsrep.store import RunStore
from tests.reports.synthetic import RUN_ID, manifest, unit_rows

UNIT = {"run_id": RUN_ID, "unit_id": "toy/traj/r0", "condition": "toy", "trajectory": "traj", "repetition": 0,
        "seed": 1, "plan_digest": "ef" * 32, "status": "finished", "error": None, "elapsed_s": 0.1}


def _rows(obs_id: str, n: int, texts=("alpha beta", "gamma delta", None)) -> list[dict]:
    # Engine-shaped rows (every key of a fragment row, text included).
    return [{"obs_id": obs_id, "rank": r, "text": texts[r % len(texts)], "source_turn_ids": f'["t{r}"]',
             "tokens": 3 + r, "mechanisms": '["m"]', "kind": "turn", "score": 0.5 * r if r else None,
             "leak": r % 2, "unknown_source": 0, "content_leak": 0, "leak_turn_id": None, "unsourced": 0,
             "misattributed": 0, "sourced_share": 1.0, "match_turn_id": f"t{r}", "derived": 0,
             "carried_turn_ids": f'["t{r}"]'} for r in range(n)]


def _obs(i: int) -> str:
    return f"{RUN_ID}:toy/traj/r0:0:p{i:02d}"


def _table() -> tuple[FragmentTable, list[dict]]:
    """A table with own parts, copies of them, an empty part, and copies the store must not copy in
    SQL (rows not written as an own part; a source observation holding more rows than the part)."""
    table, plain = FragmentTable(), []
    a, b = _rows(_obs(0), 4), _rows(_obs(3), 2)
    table.add_rows(a)
    plain += a
    for i in (1, 2):
        table.add_copy(_obs(i), a)
        plain += [{**r, "obs_id": _obs(i)} for r in a]
    table.add_rows([])
    table.add_rows(b)
    plain += b
    stray = _rows(_obs(0), 4, texts=("other text",))  # same source id and length, never written as its own part
    table.add_copy(_obs(4), stray)
    plain += [{**r, "obs_id": _obs(4)} for r in stray]
    third = _rows(_obs(3), 4)[2:]  # two more rows under p03
    table.add_rows(third)
    plain += third
    table.add_copy(_obs(5), b)  # b's source now holds 3 rows, the part 2: not copied in SQL
    plain += [{**r, "obs_id": _obs(5)} for r in b]
    table.add_copy(_obs(6), a)  # copied in SQL after plain writes
    plain += [{**r, "obs_id": _obs(6)} for r in a]
    return table, plain


def test_the_table_reads_as_the_list_of_copies():
    table, plain = _table()
    assert list(table) == plain
    assert len(table) == len(plain) == 4 * 4 + 2 + 4 + 2 + 2
    assert table == plain and table[5] == plain[5] and table[-1] == plain[-1] and table[2:4] == plain[2:4]
    assert table != plain[:-1] and table != [] and (table == "rows") is False
    assert table != [*plain[:-1], {**plain[-1], "rank": 9}]  # same length, one value differs
    long_table = FragmentTable()
    long_rows = _rows(_obs(0), 300)
    long_table.add_rows(long_rows)
    assert long_table == list(long_rows)  # lengths past the small-int cache compare by value
    other, _ = _table()
    assert table == other
    copy = list(table)[4]
    copy["rank"] = 99  # reading gives fresh copies: the source rows are never changed
    assert list(table)[4]["rank"] == 0


def _write(path, tables, monkeypatch=None, bound=None):
    store = RunStore(path)
    store.create_run(RUN_ID, "synthetic", "synthetic.toml", "cd" * 32, "ef" * 32, manifest())
    if bound is not None:
        plain_insert = RunStore._insert_fragments

        def counting(self, rows, *stored):
            bound.append(len(rows))
            plain_insert(self, rows, *stored)

        monkeypatch.setattr(RunStore, "_insert_fragments", counting)
    store.write_unit(dict(UNIT), tables)
    return ([tuple(r) for r in store.db.conn.execute("select rowid, * from fragments order by rowid")],
            [tuple(r) for r in store.db.conn.execute("select * from fragment_texts order by sha256")])


def test_the_store_writes_a_table_as_the_list_of_copies_and_binds_only_what_it_cannot_copy(tmp_path, monkeypatch):
    table, plain = _table()
    tables = unit_rows("toy")
    listed = _write(tmp_path / "list.sqlite", {**tables, "fragments": plain})
    bound: list[int] = []
    copied = _write(tmp_path / "table.sqlite", {**tables, "fragments": table}, monkeypatch, bound)
    assert copied == listed  # every column, rowids (order) included, and the shared texts
    assert len(copied[0]) == len(plain)
    # Bound in Python: a (4), then b, the stray copy, the two more p03 rows and the refused b copy
    # (2 + 4 + 2 + 2) up to the next SQL copy; the copies of a (3 x 4 rows) only in SQL.
    assert bound == [4, 10]
    assert sum(bound) == len(plain) - 3 * 4


def test_a_table_of_only_own_rows_is_one_pass(tmp_path, monkeypatch):
    table = FragmentTable()
    rows = [_rows(_obs(i), 3) for i in range(3)]
    for r in rows:
        table.add_rows(r)
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [9]
    assert got == _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": [r for p in rows for r in p]})


@pytest.mark.parametrize("repeat", [1, 3])
def test_a_copy_first_in_the_table_is_written_plainly(tmp_path, monkeypatch, repeat):
    # A copy whose source was never written here (no own part before it) cannot be copied in SQL.
    source = _rows(_obs(0), 2)
    table = FragmentTable()
    for i in range(repeat):
        table.add_copy(_obs(i + 1), source)
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [2 * repeat]
    assert [r[1] for r in got[0]] == [_obs(i + 1) for i in range(repeat) for _ in range(2)]


def test_a_text_is_hashed_and_offered_to_fragment_texts_once_per_table(tmp_path, monkeypatch):
    import hashlib

    import lsrep.store as store_module

    hashed: list[str] = []
    offered: list[str] = []

    class CountingHashlib:
        @staticmethod
        def sha256(data):
            hashed.append(data.decode("utf-8"))
            return hashlib.sha256(data)

    plain_many = store_module._Connection.executemany

    def many(self, sql, seq):
        seq = list(seq)
        if "fragment_texts" in sql:
            offered.extend(t for _d, t in seq)
        return plain_many(self, sql, seq)

    table = FragmentTable()
    parts = [_rows(_obs(0), 3), _rows(_obs(1), 4, texts=("gamma delta", "new one")), _rows(_obs(2), 2)]
    table.add_rows(parts[0])
    table.add_copy(_obs(5), parts[0])  # a copy between batches: the texts carry over
    table.add_rows(parts[1])
    table.add_rows(parts[2])
    plain = [r for p in parts[:1] for r in p] + [{**r, "obs_id": _obs(5)} for r in parts[0]] + parts[1] + parts[2]
    want = _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": plain})
    monkeypatch.setattr(store_module, "hashlib", CountingHashlib)
    monkeypatch.setattr(store_module._Connection, "executemany", many)
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table})
    assert got == want
    assert hashed == offered == ["alpha beta", "gamma delta", "new one"]  # each distinct text once, in order


def test_a_batch_that_goes_the_general_way_stores_the_same_rows(tmp_path):
    # A row lacking a column sends its batch the general way (which stores every text of it); a
    # copy of it and a later batch sharing a text store what the list of copies stores.
    table = FragmentTable()
    odd = _rows(_obs(0), 2, texts=("first text", "second text"))
    del odd[1]["derived"]
    later = _rows(_obs(1), 2, texts=("second text", "third text"))
    table.add_rows(odd)
    table.add_copy(_obs(2), odd)  # flushes the odd batch, then copies it in SQL
    table.add_rows(later)
    plain = odd + [{**r, "obs_id": _obs(2)} for r in odd] + later
    want = _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": plain})
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table})
    assert got == want and len(got[1]) == 3 and len(got[0]) == 6


@pytest.mark.parametrize(("n_own", "n_a"), [(3, 4), (4, 4), (2, 1)])
def test_a_copy_into_an_observation_that_holds_rows_counts_them_all(tmp_path, monkeypatch, n_own, n_a):
    # p01 holds rows of its own (ranks 10 on) and then a copy of p00's: a copy of p01's own part
    # must not be taken from the store (p00's rows are there too), so it is bound plainly.
    a = _rows(_obs(0), n_a)
    own = [{**r, "obs_id": _obs(1), "rank": 10 + r["rank"]} for r in _rows(_obs(1), n_own)]
    table = FragmentTable()
    table.add_rows(a)
    table.add_rows(own)
    table.add_copy(_obs(1), a)
    table.add_copy(_obs(2), own)
    plain = a + own + [{**r, "obs_id": _obs(1)} for r in a] + [{**r, "obs_id": _obs(2)} for r in own]
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [n_a + n_own, n_own]  # a and p01's own rows; then the copy of p01's part, after p00's SQL copy
    assert got == _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": plain})



def test_tables_of_different_lengths_are_unequal_without_reading_a_row(monkeypatch):
    table = FragmentTable()
    table.add_rows(_rows(_obs(0), 3))
    reads = []
    plain_iter = FragmentTable.__iter__

    def counting(self):
        reads.append(1)
        return plain_iter(self)

    monkeypatch.setattr(FragmentTable, "__iter__", counting)
    assert table != _rows(_obs(0), 4) and table != _rows(_obs(0), 2)
    assert reads == []  # the lengths decide
    assert table == _rows(_obs(0), 3) and reads == [1]


def test_the_sql_copy_names_each_column_once(tmp_path, monkeypatch):
    import lsrep.store as store_module

    statements: list[str] = []
    plain_execute = store_module._Connection.execute

    def execute(self, sql, *args):
        if "select ?" in sql:
            statements.append(sql)
        return plain_execute(self, sql, *args)

    table, plain = _table()
    monkeypatch.setattr(store_module._Connection, "execute", execute)
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table})
    assert len(statements) == 3 and len(set(statements)) == 1  # one statement, built once
    into, select = statements[0].split(" select ")
    columns = into[into.index("(") + 1:into.rindex(")")].split(", ")
    assert columns[0] == "[obs_id]" and len(columns) == len(set(columns)) == len(got[0][0]) - 1  # rowid aside
    assert select.startswith("?, " + ", ".join(columns[1:]) + " from [fragments] where [obs_id] = ?")


def _ranked(obs_id: str, n: int, first: int) -> list[dict]:
    return [{**r, "rank": first + r["rank"]} for r in _rows(obs_id, n)]


def test_copies_then_own_rows_under_one_observation_are_all_counted(tmp_path, monkeypatch):
    # p01 gets two copies (of p00 and p03, 2 rows each), then 2 rows of its own: a copy of that own
    # part is bound plainly (6 rows are under p01). Three own parts (1, 2, 2 rows) under p04: a copy
    # of the first is bound plainly too (5 rows there).
    a, b, c = _ranked(_obs(0), 2, 0), _ranked(_obs(3), 2, 10), _ranked(_obs(1), 2, 20)
    d = [_ranked(_obs(4), 1, 0), _ranked(_obs(4), 2, 1), _ranked(_obs(4), 2, 3)]
    table = FragmentTable()
    table.add_rows(a)
    table.add_rows(b)
    table.add_copy(_obs(1), a)
    table.add_copy(_obs(1), b)
    table.add_rows(c)
    table.add_copy(_obs(2), c)
    for part in d:
        table.add_rows(part)
    table.add_copy(_obs(5), d[0])
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [4, 2 + 2 + 5 + 1]  # a and b; then c, its copy, d's parts and d[0]'s copy
    assert got == _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": list(table)})


def test_a_part_holding_rows_of_several_observations_is_never_copied_in_sql(tmp_path, monkeypatch):
    # Not what the engine builds (a part is one observation's rows), but a table may hold it: its
    # rows are counted under their own ids, and a copy of it is bound plainly.
    mixed = _ranked(_obs(0), 1, 0) + _ranked(_obs(1), 2, 1)
    pure = _ranked(_obs(1), 2, 5)
    table = FragmentTable()
    table.add_rows(mixed)
    table.add_rows(pure)
    table.add_copy(_obs(2), mixed)
    table.add_copy(_obs(3), pure)  # p01 holds 4 rows, the part 2: bound plainly
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [3 + 2 + 3 + 2]
    assert got == _write(tmp_path / "l.sqlite", {**unit_rows("toy"), "fragments": list(table)})


def test_a_long_part_is_copied_in_sql(tmp_path, monkeypatch):
    # Counts past the small-int cache compare by value: a 300-row context is copied, not bound.
    long = _rows(_obs(0), 300)
    table = FragmentTable()
    table.add_rows(long)
    table.add_copy(_obs(1), long)
    bound: list[int] = []
    got = _write(tmp_path / "t.sqlite", {**unit_rows("toy"), "fragments": table}, monkeypatch, bound)
    assert bound == [300] and len(got[0]) == 600
