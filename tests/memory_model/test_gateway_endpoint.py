"""Against a real OpenAI-compatible server that counts what it receives: LSREP books exactly the
memory-side requests the server saw, per kind; a `--fresh` re-run sends none (the cache); and the
configured key never enters the memory system's process, nor the store."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from lsrep.llm.server import OpenAITestServer, ReceivedRequest, Reply
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.memory_model.campaign_util import write_campaign

KEY = "sk-memory-side-4d6f1c0e9b"


def served(request: ReceivedRequest) -> str | Reply:
    """JSON-schema extraction gets the user's words back as facts; tool requests get a call."""
    if request.body.get("tools"):
        args = json.dumps({"query": request.last_user, "limit": 3})
        return Reply(text="", tool_calls=({"id": "call_1", "type": "function",
                                           "function": {"name": "search_memory", "arguments": args}},))
    if request.body.get("response_format"):
        return json.dumps({"facts": [request.last_user]})
    return "ok"


def tables(url: str, key_env: str = "LSREP_MEM_KEY") -> str:
    return (f'[memory_llm]\nbase_url = "{url}"\nmodel = "served-chat"\napi_key_env = "{key_env}"\n'
            f'[memory_embedder]\nbase_url = "{url}"\nmodel = "served-embed"\napi_key_env = "{key_env}"\n')


def _host_processes() -> dict[int, tuple[bytes, bytes]]:
    """(cmdline, environ) of every adapter host process (and their fork server) alive now."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if b"lsrep.host" in cmdline:
                found[int(entry.name)] = (cmdline, (entry / "environ").read_bytes())
        except OSError:
            continue
    return found


def test_booked_calls_equal_the_servers_count_and_a_fresh_rerun_sends_none(tmp_path, monkeypatch):
    monkeypatch.setenv("LSREP_MEM_KEY", KEY)
    with OpenAITestServer(reply=served, embed_dim=32) as server:
        path = write_campaign(tmp_path, tables(server.base_url), options="{ hold_s = 1.5 }")
        seen: dict[int, tuple[bytes, bytes]] = {}
        result: dict[str, object] = {}
        runner = threading.Thread(target=lambda: result.update(out=run_campaign(path)))
        runner.start()
        while runner.is_alive():
            seen.update(_host_processes())
            time.sleep(0.05)
        runner.join()
        out = result["out"]
        chats, embeds = server.count("chat"), server.count("embeddings")
        assert chats > 0 and embeds > 0
        assert {r.bearer for r in server.requests} == {KEY}  # the harness's client used the real key
        store = RunStore(out.store_path)
        booked = {r["kind"]: r for r in store.rows(
            "select kind, count(*) n, sum(cached = 0) uncached, sum(attempts) attempts from memory_calls "
            "where run_id = ? group by kind", [out.run_id])}
        assert booked["chat"]["attempts"] == booked["chat"]["uncached"] == chats
        assert booked["embedding"]["attempts"] == booked["embedding"]["uncached"] == embeds
        # Identical requests (the same question at later checkpoints) were answered from the cache.
        assert booked["chat"]["n"] > chats
        assert store.rows("select count(*) n from units where run_id = ? and status = 'finished'",
                          [out.run_id])[0]["n"] == 1

        again = run_campaign(path, fresh=True)
        assert (server.count("chat"), server.count("embeddings")) == (chats, embeds)
        rerun = store.rows("select count(*) n, sum(cached) cached from memory_calls where run_id = ?", [again.run_id])
        assert rerun[0]["n"] == booked["chat"]["n"] + booked["embedding"]["n"] == rerun[0]["cached"]

    # The memory system's processes never held the key: not in argv, not in the environment.
    assert len(seen) >= 2, f"expected the fork server and a host, saw {sorted(seen)}"
    for pid, (cmdline, environ) in seen.items():
        assert KEY.encode() not in cmdline and KEY.encode() not in environ, pid
        assert b"LSREP_MEM_KEY" not in environ
    # Nor any file in the store's folder (the run store, its WAL, the response cache).
    for file in Path(out.store_path).parent.iterdir():
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file.name


@pytest.mark.parametrize("host", ["process", "in-process"])
def test_a_keyless_local_server_needs_no_key_variable(tmp_path, host):
    with OpenAITestServer(reply=served, embed_dim=8) as server:
        out = run_campaign(write_campaign(tmp_path, tables(server.base_url, key_env=""), host=host))
        assert server.count("chat") > 0
        assert {r.bearer for r in server.requests} == {"no-key"}
    store = RunStore(out.store_path)
    assert store.rows("select count(*) n from memory_calls where run_id = ? and status != 'ok'",
                      [out.run_id])[0]["n"] == 0
