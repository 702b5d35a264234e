"""Exact tests of recall's per-page index (recall_index.py) and what the exia-scale branch changed
around it (recall.py's pools, cache.py's derived `Memoire`, summaries.py's lazy `veto`), written
for the `exia-recall-index` mutation session: outputs, orders, scores and work, on hand-built facts
whose answers are known, beside the randomized equivalence of `test_exia_recall_index.py`."""

from __future__ import annotations

from lsrep.systems.exia_seed.pages import Fact
from lsrep.systems.exia_seed.recall_index import PageIndex


def fact(fid: str, text: str = "words", **kw) -> Fact:
    return Fact(id=fid, text=text, section=kw.pop("section", "episodic"), refs=kw.pop("refs", []), **kw)


def test_future_and_expired_at_the_day_boundary():
    index = PageIndex([fact("a", said="2026-03-10"), fact("b", event="2026-03-11"), fact("c", said="2026-03-09"),
                       fact("d", type="prospective", until="2026-03-09"), fact("e", type="prospective", until="2026-03-10"),
                       fact("f", until="2026-01-01"), fact("g")])
    assert index.future("2026-03-10") == ["b"]
    assert index.future("2026-03-09") == ["a", "b"]
    assert index.expired("2026-03-10") == ["d"]
    assert index.expired("2026-03-11") == ["d", "e"]
    assert index.expired("2026-03-09") == []
