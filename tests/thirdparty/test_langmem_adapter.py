"""The LangMem adapter on the offline memory model (real LangMem, real gateway, real offline responder)."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("langmem") is None:  # not importorskip: importing it here would run its import-time
    pytest.skip("needs lsrep[langmem]", allow_module_level=True)  # side effects before the adapter sets the env

from tests.thirdparty.harness import build, offline_relay, turns  # noqa: E402


def test_a_revision_patches_the_memory_and_the_memory_cites_the_revising_turn():
    relay = offline_relay()
    a = build("langmem", relay)
    events: list = []
    a.bind_events(events.append)
    ts = turns(("Ana", "My favourite colour is teal."), ("Ana", "I planted tulips in the back garden."),
               ("Ana", "My favourite colour is crimson now, not teal."))
    a.reset(conversation_id="c", now=ts[0].timestamp)
    for t in ts:
        a.ingest(t, now=t.timestamp)
    texts = {f.text: f.source_turn_ids for f in a.query("What is my favourite colour?", now=ts[-1].timestamp).fragments}
    assert texts == {"[2023-05-08] Ana: My favourite colour is crimson now, not teal.": ("t2",),
                     "[2023-05-08] Ana: I planted tulips in the back garden.": ("t1",)}
    executed = [(e.mechanism, e.count) for e in events if e.stage == "executed"
                and e.mechanism in ("langmem.insert", "langmem.update", "langmem.delete")]
    assert executed == [("langmem.insert", 1), ("langmem.insert", 1), ("langmem.update", 1)]
    offered = {(e.mechanism, e.reason) for e in events if e.stage == "skipped"}
    assert ("langmem.delete", "offered to the model, not chosen") in offered
    chats = [r for r in relay.book.rows if r["kind"] == "chat"]
    assert len(chats) == 3 and {r["profile"] for r in chats} == {"langmem"}
    a.close()


def test_two_fresh_instances_send_the_same_requests():
    """LangMem puts a uuid4 session tag in its prompt; seeded ids make the requests (and the cache) repeat."""
    bodies = []
    for _ in range(2):
        relay = offline_relay()
        seen: list = []
        serve = relay.serve
        relay.serve = lambda kind, body, serve=serve, seen=seen: (seen.append(body), serve(kind, body))[1]
        a = build("langmem", relay)
        (t,) = turns(("Ana", "I planted roses in the back garden today."))
        a.reset(conversation_id="c", now=t.timestamp)
        a.ingest(t, now=t.timestamp)
        a.close()
        bodies.append(seen)
    assert bodies[0] == bodies[1] and any("<session_" in str(b) for b in bodies[0])


def test_langmem_writes_nothing_to_the_home_folder_and_fetches_no_tiktoken_file(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parents[2]
    home = tmp_path / "home"
    home.mkdir()
    script = (
        f"import sys; sys.path.insert(0, {str(here)!r})\n"
        "from tests.thirdparty.harness import build, offline_relay, turns\n"
        "a = build('langmem', offline_relay())\n"
        "(t,) = turns(('Ana', 'I planted roses in the back garden today.'))\n"
        "a.reset(conversation_id='c', now=t.timestamp); a.ingest(t, now=t.timestamp)\n"
        "assert a.query('What did I plant?', now=t.timestamp).fragments\n"
        "a.close()\n")
    env = {k: v for k, v in os.environ.items() if "TIKTOKEN" not in k}
    # An unroutable proxy: a tiktoken download (or any other fetch) would fail the script.
    env.update(HOME=str(home), PYTHONPATH=str(here), HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1,localhost")
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(home.iterdir()) == []


def test_the_owner_the_harness_announces_scopes_the_namespace():
    from lsrep.contract import Participants, Speaker

    a = build("langmem", offline_relay())
    ts = turns(("Maya", "I moved to Lisbon in March."))
    a.reset(conversation_id="c", now=ts[0].timestamp,
            participants=Participants(owner="Maya", speakers=(Speaker(name="Maya", role="user"),)))
    assert a.namespace == ("memories", "Maya")
    a.close()
