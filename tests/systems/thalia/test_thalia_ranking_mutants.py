"""The last of the Retriever's details the mutation session (`thalia-ranking`) found open: the
evidence budget's output events, the overflow file's name and bytes, and the BM25 lane's work on
query terms the corpus does not hold."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from lsrep.systems.thalia import DeliveryMode, HarnessConfig
from lsrep.systems.thalia.contracts import EvidenceWindow
from lsrep.systems.thalia.embedding import HashingEmbedder
from lsrep.systems.thalia.events import EventRelay
from lsrep.systems.thalia.lexical import BM25
from lsrep.systems.thalia.retriever import Retriever
from lsrep.systems.thalia.text import token_count
from thalia_testkit import Recorder

T = datetime(2024, 5, 1, 9, 0)


def window(i: int, text: str) -> EvidenceWindow:
    return EvidenceWindow(window_id=f"line:{i}", source_index=i, text=text, turn_id=i, source_id=f"t{i}",
                          session_id="s1", timestamp=T, origin="inspector")


def retrieve(texts: list[str], query: str, item: str = "query", **config):
    rec = Recorder()
    out = Retriever(HarnessConfig(**config), HashingEmbedder(), EventRelay(rec)).retrieve(
        query, [window(i, t) for i, t in enumerate(texts)], "single-hop", item=item)
    return out, rec


def test_the_budget_reports_its_inline_windows_as_output_and_selection():
    out, rec = retrieve(["wifi password bluefish42", "guest wifi", "password hint"], "wifi password")
    assert out.delivery_mode is DeliveryMode.INLINE and len(out.inline) == 3
    ids = tuple(r.window.window_id for r in out.inline)
    for stage in ("output", "selected"):
        (event,) = rec.of("retriever.budget", stage)
        assert event.count == 3 and event.ids == ids
        assert event.source_turn_ids == tuple(r.window.source_id for r in out.inline)


def test_a_budget_with_nothing_inline_reports_no_output_and_no_selection():
    texts = ["wifi password bluefish42 and a long tail of words", "guest wifi"]
    # The best window alone exceeds the budget: FILE_BASED with an empty inline prefix.
    out, rec = retrieve(texts, "wifi password", context_budget_tokens=token_count(texts[0]) - 1)
    assert out.delivery_mode is DeliveryMode.FILE_BASED and out.ranked and out.inline == ()
    assert rec.stages("retriever.budget") == {"eligible", "executed"}
    assert rec.of("retriever.budget", "executed")[0].params["inline"] == 0


def test_the_overflow_file_is_named_by_twelve_hex_digits_of_the_item_and_query(tmp_path):
    texts = ["wifi password bluefish42", "guest wifi", "password hint"]
    out, rec = retrieve(texts, "wifi password", item="q-7", context_budget_tokens=3, evidence_dir=str(tmp_path))
    tag = hashlib.sha256(b"q-7\0wifi password").hexdigest()[:12]
    assert out.evidence_file == str(tmp_path / f"evidence_{tag}.jsonl")
    assert rec.of("retriever.budget", "executed")[0].params["evidence_file"] == out.evidence_file
    rows = [json.loads(line) for line in (tmp_path / f"evidence_{tag}.jsonl").read_text().splitlines()]
    assert [r["window_id"] for r in rows] == [r.window.window_id for r in out.ranked]


def test_the_overflow_file_keeps_non_ascii_text_as_utf8(tmp_path):
    texts = ["café wifi password: señal», 東京", "guest wifi"]
    out, _ = retrieve(texts, "wifi password", context_budget_tokens=2, evidence_dir=str(tmp_path))
    raw = open(out.evidence_file, encoding="utf-8").read()  # noqa: PTH123,SIM115
    assert "café wifi password: señal», 東京" in raw and "\\u" not in raw


class _CountingPasses(list):
    """A list that counts the passes made over it."""

    passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()


def test_bm25_does_not_visit_the_documents_for_a_query_term_the_corpus_lacks():
    bm = BM25(["wifi password", "garden party", "wifi router"])
    bm.tfs = _CountingPasses(bm.tfs)
    assert bm.scores("zebra unicorn zebra") == [0.0, 0.0, 0.0]
    assert bm.tfs.passes == 0  # absent terms contribute 0 without a pass over the corpus
    assert bm.scores("wifi zebra")[1] == 0.0 and bm.tfs.passes == 1
