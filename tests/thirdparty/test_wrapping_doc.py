"""docs/adapters.md, "Wrapping an LLM-backed library": the chapter names every trap the bundled
adapters avoid, and its example adapter runs as written on the memory gateway (offline responder),
its model calls booked to the turns."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from lsrep.adapters.thirdparty import turn_text

from lsrep.contract import AdapterSetup, EmptyOptions
from lsrep.memory_model.inprocess import build_attributed
from tests.thirdparty.harness import offline_relay, turns

DOC = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
TRAPS = ("MEM0_TELEMETRY=False", "MEM0_DIR", "fastembed", "en_core_web_sm", "check_embedding_ctx_length=False",
         "uuid.uuid4()", "one event\nloop per adapter", "offered to the model, not chosen", "`disabled:`",
         "honours_budget", "lsrep.offline_profiles")


def chapter() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## 13. Wrapping an LLM-backed library")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_chapter_names_every_trap():
    text = chapter()
    missing = [t for t in TRAPS if t not in text]
    assert missing == []


def test_the_chapter_example_runs_on_the_gateway(tmp_path):
    (code,) = re.findall(r"```python\n(.*?)```", chapter(), re.S)
    path = tmp_path / "notes_adapter.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("notes_adapter", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["notes_adapter"] = module
    try:
        spec.loader.exec_module(module)
        relay = offline_relay()
        adapter = build_attributed(lambda **m: module.NotesAdapter(AdapterSetup(options=EmptyOptions(), **m)), relay)
        ts = turns(("Maya", "I play the cello with the Tagus Strings on weekends."),
                   ("Maya", "I adopted a grey cat called Fado last spring."))
        adapter.reset(conversation_id="c", now=ts[0].timestamp)
        for t in ts:
            adapter.ingest(t, now=t.timestamp)
        result = adapter.query("What is the cat called?", now=ts[-1].timestamp)
        adapter.close()
    finally:
        sys.modules.pop("notes_adapter", None)
    chats = [r for r in relay.book.rows if r["kind"] == "chat"]
    assert [r["turn_id"] for r in chats] == ["t0", "t1"] and all(r["phase"] == "ingest" for r in chats)
    assert result.fragments and all(f.text.startswith("[2023-05-08] ") for f in result.fragments)
    words = {t.turn_id: set(re.findall(r"\w+", turn_text(t).lower())) for t in ts}
    for f in result.fragments:  # the responder's facts are drawn from the cited turn's own words
        (cited,) = f.source_turn_ids
        assert set(re.findall(r"\w+", f.text.split("] ", 1)[1].lower())) <= words[cited]
