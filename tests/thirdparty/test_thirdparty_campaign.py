"""campaigns/thirdparty.toml runs offline: mem0, LangMem and vector-RAG, their own model calls booked
per condition and turn, byte-identical answers on a re-run from a fresh store. The quickstart
journal runs by default (CI installs the extras); the LoCoMo conversation too under `-m slow`."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from lsrep.cli import main

CAMPAIGN = Path(__file__).resolve().parents[2] / "campaigns" / "thirdparty.toml"
pytestmark = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("mem0", "langmem")),
                                reason="needs lsrep[mem0,langmem]")


def run(store: Path, *extra: str) -> None:
    assert main(["run", str(CAMPAIGN), "--store", str(store), "--progress", "none", *extra]) == 0


def calls(store: Path) -> dict:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT condition, phase, kind, count(*), count(DISTINCT turn_id) FROM memory_calls "
                          "GROUP BY 1, 2, 3").fetchall()
    return {(c, p, k): (n, turns) for c, p, k, n, turns in rows}


def answers(store: Path) -> list:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT condition, probe_id, checkpoint, context_sha256, answer, evidence_recall FROM observations "
                          "ORDER BY 1, 2, 3").fetchall()


def test_quickstart_journal_runs_offline_and_books_every_memory_call(tmp_path):
    store = tmp_path / "a.sqlite"
    run(store, "--trajectories", "maya-journal")
    got = calls(store)
    with sqlite3.connect(store) as db:
        (turns,) = db.execute("SELECT count(DISTINCT j.value) FROM unit_ingests, json_each(turn_ids) j "
                                "WHERE condition = 'mem0'").fetchone()
    assert turns == 35
    for system in ("mem0", "langmem"):
        chats, cited = got[(system, "ingest", "chat")]
        assert chats == turns and cited == turns  # one extraction call per ingested turn, booked to it
        assert got[(system, "query", "embedding")][0] > 0
    assert not any(c == "vector-rag" for c, _, _ in got)
    again = tmp_path / "b.sqlite"
    run(again, "--trajectories", "maya-journal")
    assert answers(again) == answers(store)
    out = tmp_path / "r.json"
    assert main(["report", "--store", str(store), "--format", "json", "-o", str(out)]) == 0
    cost = {c["name"]: c["cost"] for c in json.loads(out.read_text())["conditions"]}
    assert cost["mem0"]["memory_llm_calls"] == turns and cost["vector-rag"]["memory_llm_calls"] == 0
    assert cost["mem0"]["total_tokens"] > cost["mem0"]["answer_tokens"]


@pytest.mark.slow
def test_whole_campaign_runs_offline(tmp_path):
    store = tmp_path / "t.sqlite"
    run(store)
    got = calls(store)
    assert got[("mem0", "ingest", "chat")][0] == got[("langmem", "ingest", "chat")][0] == 35 + 369
