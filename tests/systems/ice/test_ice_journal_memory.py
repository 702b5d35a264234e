"""ICE's store files keep their rollback journal in memory (`db.JOURNAL_MODE`, issue 20).

The state digest pins the files' bytes: every store file must be byte for byte the one a
`-journal` file (`DELETE` mode, the rule) leaves, after every step of a random history
(turns, queries and their reinforcement, decay, summaries, extraction, slots, a reopen), and a
transaction that fails must still roll back.
"""

from __future__ import annotations

import random

import pytest
from ice_testkit import Harness, day
from lsrep.systems.ice import db
from lsrep.systems.ice.db import Transaction, open_database

from lsrep.contract import digest_directory

WORDS = ("garden hiking painting sunrise camping violin pottery adoption marathon festival "
         "grandmother library recipe sculpture mountains river Lisbon Porto sister cat").split()


def _modes(h: Harness) -> set[str]:
    stores = h.system.db
    conns = [stores.episodic.conn, stores.codex.conn, stores.procedures.conn, stores.documents.conn,
             stores.summaries.conn, stores.slots.conn]
    return {c.execute("PRAGMA journal_mode").fetchone()[0] for c in conns}


@pytest.mark.parametrize("seed", range(3))
def test_store_files_are_the_bytes_a_journal_file_leaves(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    fast = Harness(tmp_path / "fast", summary_batch_turns=5)
    monkeypatch.setattr(db, "JOURNAL_MODE", "DELETE")
    plain = Harness(tmp_path / "plain", summary_batch_turns=5)
    assert _modes(plain) == {"delete"}
    monkeypatch.setattr(db, "JOURNAL_MODE", "MEMORY")
    assert _modes(fast) == {"memory"}
    for step in range(40):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
        if step % 7 == 3:
            text = f"I moved to {rng.choice(['Lisbon', 'Porto'])}. My sister likes {rng.choice(WORDS)}."
        role = "user" if step % 7 == 3 else rng.choice(["user", "assistant"])
        for h in (fast, plain):
            h.say(text, at=step // 5, role=role)
        if step % 5 == 4:
            question = f"What about the {rng.choice(WORDS)}? Where do I live?"
            assert fast.ask(question, at=step // 5).context_text == plain.ask(question, at=step // 5).context_text
            for h in (fast, plain):
                h.system.run_decay(now=day(step // 5 + 0.5))
                h.system.run_summaries(now=day(step // 5 + 0.5))
                h.system.run_extraction(now=day(step // 5 + 0.5))
        if step == 20:
            for h in (fast, plain):
                h.system.set_slot("tone", "brief", now=day(4))
            fast.system.reopen()  # the reopened connection keeps its journal in memory too
            monkeypatch.setattr(db, "JOURNAL_MODE", "DELETE")
            plain.system.reopen()
            monkeypatch.setattr(db, "JOURNAL_MODE", "MEMORY")
            assert _modes(fast) == {"memory"} and _modes(plain) == {"delete"}
        assert digest_directory(tmp_path / "fast") == digest_directory(tmp_path / "plain"), step
    assert fast.system.db.summaries.count() > 0, "no summary written"
    assert fast.system.db.codex.edge_count() > 0, "no fact extracted"
    for h in (fast, plain):
        h.system.close()
    assert digest_directory(tmp_path / "fast") == digest_directory(tmp_path / "plain")


def test_a_failed_transaction_rolls_back_with_the_journal_in_memory(tmp_path):
    path = tmp_path / "t.sqlite"
    conn = open_database(path, [("m1", "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);")])
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "memory"
    with Transaction(conn) as c:
        c.executemany("INSERT INTO t (v) VALUES (?)", [(f"v{i}",) for i in range(300)])
    before = path.read_bytes()
    with pytest.raises(RuntimeError), Transaction(conn) as c:
        c.execute("UPDATE t SET v = 'changed' WHERE k % 2 = 0")
        c.execute("DELETE FROM t WHERE k > 100")
        raise RuntimeError("cut off")
    assert path.read_bytes() == before
    assert tuple(conn.execute("SELECT COUNT(*), SUM(v = 'changed') FROM t").fetchone()) == (300, 0)
    assert not list(tmp_path.glob("*-journal"))
    conn.close()
