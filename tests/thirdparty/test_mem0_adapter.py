"""The mem0 adapter on the offline memory model (real mem0, real gateway, real offline responder)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("mem0") is None:  # not importorskip: importing it here would run its import-time
    pytest.skip("needs lsrep[mem0]", allow_module_level=True)  # side effects before the adapter sets the env

from tests.thirdparty.harness import build, offline_relay, turns  # noqa: E402

HERE = Path(__file__).resolve().parents[2]


def _events(adapter) -> list:
    got: list = []
    adapter.bind_events(got.append)
    return got


def test_each_turn_is_one_extraction_call_and_memories_carry_turn_date_and_citation():
    relay = offline_relay()
    a = build("mem0", relay)
    events = _events(a)
    ts = turns(("Maya", "I moved to Lisbon in March for the new job."), ("Maya", "My favourite colour is green."))
    a.reset(conversation_id="c", now=ts[0].timestamp)
    before = len(relay.book.rows)
    for t in ts:
        a.ingest(t, now=t.timestamp)
    ingest = [r for r in relay.book.rows[before:] if r["phase"] == "ingest"]
    assert [r["kind"] for r in ingest].count("chat") == 2  # one JSON-mode extraction per turn
    assert {r["profile"] for r in ingest if r["kind"] == "chat"} == {"mem0"}
    assert {r["turn_id"] for r in ingest} == {"t0", "t1"}
    result = a.query("What is my favourite colour?", now=ts[-1].timestamp)
    top = result.fragments[0]
    assert top.text == "[2023-05-08] Maya: My favourite colour is green."
    assert top.source_turn_ids == ("t1",) and top.kind == "fact"
    reasons = {(e.mechanism, e.stage): e.reason for e in events}
    assert reasons[("mem0.search.bm25", "skipped")].startswith("disabled: degraded lane")
    assert reasons[("mem0.entities", "skipped")].startswith("disabled: degraded lane")
    assert reasons[("mem0.update_delete", "ineligible")].startswith("not offered")
    a.close()


def test_a_redelivered_turn_is_not_stored_twice():
    relay = offline_relay()
    a = build("mem0", relay)
    (t,) = turns(("Maya", "I play the cello with the Tagus Strings."))
    a.reset(conversation_id="c", now=t.timestamp)
    a.ingest(t, now=t.timestamp)
    digest, calls = a.state_digest(), len(relay.book.rows)
    a.ingest(t, now=t.timestamp)
    assert a.state_digest() == digest and len(relay.book.rows) == calls
    a.close()


def test_budget_cuts_the_returned_context():
    relay = offline_relay()
    a = build("mem0", relay)
    ts = turns(*[("Maya", f"My garden has {n} roses and {n} tulips in the back.") for n in range(6)])
    a.reset(conversation_id="c", now=ts[0].timestamp)
    for t in ts:
        a.ingest(t, now=t.timestamp)
    full = a.query("How many roses in the garden?", now=ts[-1].timestamp)
    a._adapter.setup = a._adapter.setup.__class__(**{**a._adapter.setup.__dict__, "retrieval_budget": 20})
    cut = a.query("How many roses in the garden?", now=ts[-1].timestamp)
    assert len(full.fragments) > 1 and len(cut.fragments) == 1 and cut.truncated_tokens > 0
    a.close()


def test_mem0_writes_nothing_to_the_home_folder_and_sends_no_telemetry(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    script = (
        f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
        "from tests.thirdparty.harness import build, offline_relay, turns\n"
        "a = build('mem0', offline_relay())\n"
        "(t,) = turns(('Maya', 'I live in Lisbon near the river.'))\n"
        "a.reset(conversation_id='c', now=t.timestamp); a.ingest(t, now=t.timestamp)\n"
        "a.query('Where do I live?', now=t.timestamp)\n"
        "import mem0.memory.main as m, mem0.memory.telemetry as tel\n"
        "assert m.MEM0_TELEMETRY is False and tel.MEM0_TELEMETRY is False\n"
        "a.close()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM0_")}
    env.update(HOME=str(home), PYTHONPATH=str(HERE))
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(home.iterdir()) == []


def test_the_owner_the_harness_announces_scopes_the_memories():
    from lsrep.contract import Participants, Speaker, accepts_participants

    a = build("mem0", offline_relay())
    assert accepts_participants(a.cls)  # the wrapped adapter class
    ts = turns(("Maya", "I moved to Lisbon in March."))
    a.reset(conversation_id="c", now=ts[0].timestamp,
            participants=Participants(owner="Maya", speakers=(Speaker(name="Maya", role="user"),)))
    assert a.user == "Maya"
    a.reset(conversation_id="c", now=ts[0].timestamp)
    assert a.user == "lsrep-c"  # no owner announced: one identity per conversation
    a.close()
