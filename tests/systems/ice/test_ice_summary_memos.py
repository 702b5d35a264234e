"""Summaries read before, and the turns a summary fragment cites, kept in memory (issue 20).

`SummaryStore.get` serves a summary read before from memory (`get_scan`, the rule, reads the
row); the adapter keeps the turns each (summary text, listed turns) carries for the open turn
store (the rule: `carried_turns` over the listed turns' contents, read every query). Both must
equal their rule on random histories, and forget what they kept when the store they read from
is replaced: wipe, restore, reopen, and the same ids with new contents.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from ice_testkit import T0
from lsrep.adapters.ice import IceAdapter, Options
from lsrep.adapters.ice.evidence import carried_turns
from lsrep.systems.ice.overlays import SummaryStore

from lsrep.contract import AdapterSetup, ReplayTurn

WORDS = ("garden hiking painting sunrise camping violin pottery adoption marathon festival "
         "grandmother library recipe sculpture mountains river Pixel grey cat shelter").split()


def _summary_args(rng: random.Random, n: int) -> tuple:
    ids = [f"t{n}-{j}" for j in range(rng.randint(1, 4))]
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
    return ("c", n, n + 1, f"2024-01-{1 + n % 28:02d}", f"2024-01-{1 + n % 28:02d}", text, ids,
            np.asarray([rng.random() for _ in range(4)], dtype=np.float32), T0)


@pytest.mark.parametrize("seed", range(4))
def test_summary_get_equals_the_row_read_and_reads_each_summary_once(tmp_path, seed):
    rng = random.Random(seed)
    store = SummaryStore(tmp_path / "summaries.sqlite")
    sids: list[str] = []
    for n in range(40):
        if rng.random() < 0.4:
            sids.append(store.add(*_summary_args(rng, n)))
        asked = [rng.choice(sids) if sids and rng.random() < 0.8 else f"summary-{rng.randint(1, 99):05d}"
                 for _ in range(rng.randint(1, 6))]
        for sid in asked:
            assert store.get(sid) == store.get_scan(sid)
    known = len(set(sids))
    for sid in sids:
        assert store.get(sid) == store.get_scan(sid)
    before = store.summary_reads
    for sid in sids:
        assert store.get(sid) == store.get_scan(sid)
    assert store.summary_reads == before  # every stored summary read once is served from memory
    assert store.get("summary-99999") is None and store.summary_reads == before + 1
    assert known  # the random history stored some summaries
    store.close()


def test_a_reopened_summary_store_reads_the_file_it_opens_not_what_it_kept(tmp_path):
    rng = random.Random(5)
    path = tmp_path / "summaries.sqlite"
    store = SummaryStore(path)
    args = list(_summary_args(rng, 1))
    sid = store.add(*args)
    assert store.get(sid).text == args[5]
    store.close()
    path.unlink()  # the file replaced (a wipe or a restore): the same id, other content
    store = SummaryStore(path)
    args[5], args[6] = "violin library recipe", ["other-1"]
    assert store.add(*args) == sid
    assert store.get(sid).text == "violin library recipe"
    assert store.get(sid).source_turns == ("other-1",)
    store.close()


# -- the adapter's carried turns ------------------------------------------------------------

def _adapter(path: Path, **options) -> IceAdapter:
    opts = Options(config={"summary_batch_turns": 4, "summary_max_chars": 120}, **options)
    return IceAdapter(AdapterSetup(options=opts, state_dir=path))


def _replay(adapter: IceAdapter, texts: list[tuple[str, str]]) -> None:
    adapter.reset(conversation_id="traj", now=T0)
    for n, (role, text) in enumerate(texts):
        at = T0 + timedelta(days=n // 4, minutes=n)
        adapter.ingest(ReplayTurn(turn_id=f"x{n:03d}", session_id=f"s{n // 4}", conversation_id="traj",
                                  index=n, timestamp=at, role=role, content=text), now=at)
    adapter.maintain("summarize", now=T0 + timedelta(days=len(texts) // 4 + 1))


def _plain_cited(adapter: IceAdapter, fragment) -> tuple[str, ...]:
    """The rule: the listed turns' contents read now, checked against the summary text."""
    turns = adapter.system.db.episodic.get_many_scan(list(fragment.source_turn_ids))
    return carried_turns(fragment.text, fragment.source_turn_ids, {t: s.content for t, s in turns.items()})


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7))) + "."


def _check_queries(adapter: IceAdapter, rng: random.Random, n: int = 6) -> int:
    seen = 0
    for q in range(n):
        question = f"What about the {rng.choice(WORDS)} and the {rng.choice(WORDS)}?"
        result = adapter.query(question, now=T0 + timedelta(days=40 + q))
        native = {f.text: f for f in adapter.system.query(
            question, conversation_id="traj", now=T0 + timedelta(days=40 + q)).fragments}
        for frag in result.fragments:
            if frag.kind == "summary":
                seen += 1
                assert frag.source_turn_ids == _plain_cited(adapter, native[frag.text])
    return seen


@pytest.mark.parametrize("seed", range(3))
def test_cited_turns_equal_the_rule_query_after_query_on_random_histories(tmp_path, seed):
    rng = random.Random(seed)
    adapter = _adapter(tmp_path / "a")
    texts = [(rng.choice(["user", "assistant"]), " ".join(_sentence(rng) for _ in range(rng.randint(1, 3))))
             for _ in range(24)]
    _replay(adapter, texts)
    assert _check_queries(adapter, rng) > 0
    assert adapter._carried  # kept answers were served (and checked) on the later queries
    adapter.close()


def test_kept_citations_are_dropped_with_the_turn_store_wipe_restore_and_same_ids(tmp_path):
    """The same summary text over the same ids cites differently when an assistant turn's
    content changed (the summary keeps user turns only): after a wipe and a new history, and
    after a restore of the older state."""
    adapter = _adapter(tmp_path / "a")
    batch = [("user", "I adopted a grey cat named Pixel from the shelter."), ("assistant", "grey cat Pixel shelter"),
             ("user", "Pixel sleeps in the garden."), ("assistant", "Pixel garden")]
    other = [batch[0], ("assistant", "violin lessons every Tuesday evening downtown"), batch[2], batch[3]]

    def cited() -> tuple[str, ...]:
        result = adapter.query("Which grey cat named Pixel did I adopt from the shelter?", now=T0 + timedelta(days=9))
        (summary,) = [f for f in result.fragments if f.kind == "summary"]
        return summary.source_turn_ids

    _replay(adapter, batch)
    first = cited()
    assert "x001" in first and cited() == first
    snap = adapter.snapshot()
    _replay(adapter, other)  # reset wipes: same ids, same summary text, another turn x001
    assert "x001" not in cited()
    adapter.restore(snap)
    assert cited() == first
    adapter.system.close()
    adapter.system.reopen()
    assert cited() == first
    adapter.close()


def test_a_summary_whose_listed_turn_is_missing_is_not_kept(tmp_path):
    """Only an answer over turns all found is kept: a missing turn is re-read next time."""
    adapter = _adapter(tmp_path / "a")
    _replay(adapter, [("user", _sentence(random.Random(n))) for n in range(4)])

    class Frag:
        source_type, text = "summary", "garden hiking violin"
        source_turn_ids = ("x000", "x001", "missing")

    assert adapter._cited(Frag) == _plain_cited(adapter, Frag)
    assert (Frag.text, Frag.source_turn_ids) not in adapter._carried
    Frag.source_turn_ids = ("x000", "x001", "x000")
    assert adapter._cited(Frag) == _plain_cited(adapter, Frag)
    assert (Frag.text, Frag.source_turn_ids) in adapter._carried
    adapter.close()
