"""Hosts reused across units (`MemoryAdapter.host_reusable`): a later unit's adapter starts as in a
new host — no instance, file, snapshot, cached query result or simulated time of the unit before —
and a LongMemEval run stores the very rows it stores with one new host per unit."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lsrep.contract import ReplayTurn
from lsrep.embed.hashing import HashingEmbedder
from lsrep.harness import validate_condition
from lsrep.host import client
from lsrep.host import reuse as host_reuse
from lsrep.host.client import open_hosted
from lsrep.host.clock import hooks
from lsrep.host.reuse import close_idle_hosts
from lsrep.host.wire import HostError

OLD = datetime(2021, 5, 4, 12, tzinfo=UTC)


def _turn(i: int, content: str, conversation: str) -> ReplayTurn:
    return ReplayTurn(turn_id=f"t{i}", session_id="s1", conversation_id=conversation, index=i, timestamp=OLD,
                      role="user", content=content)


def _open(name: str, **kwargs):
    cls, _ = validate_condition(f"tests.host.host_adapters:{name}", {}, (), "c")
    return open_hosted(cls, {}, disable=(), retrieval_budget=None, seed=0, hooks=hooks(True),
                       embedder=kwargs.pop("embedder", HashingEmbedder()), llm=kwargs.pop("llm", None), **kwargs)


def _unit(name: str, conversation: str, leave: bool = True) -> tuple[dict, str, object]:
    """One unit's life: reset, what it finds before ingesting, traces left, a snapshot, close."""
    adapter = _open(name)
    host = adapter.host
    digest = adapter.state_digest()  # before any call with a `now`
    adapter.reset(conversation_id=conversation, now=OLD)
    found = json.loads(adapter.query("what is here?", now=OLD).fragments[0].text)
    if leave:
        adapter.ingest(_turn(0, f"said in {conversation}", conversation), now=OLD)
        adapter.query("again", now=OLD)
        adapter.snapshot()
    adapter.close()
    adapter.terminate()
    return found, digest, host


@pytest.fixture(autouse=True)
def _no_idle_hosts():
    close_idle_hosts()
    yield
    close_idle_hosts()


def test_a_reused_host_holds_nothing_of_the_unit_before():
    first, digest_first, host_first = _unit("LeavingTracesAdapter", "a")
    assert first == {"home": [], "pid": first["pid"], "state": [], "tmp": [], "tempfile": True, "turns": []}
    second, digest_second, host_second = _unit("LeavingTracesAdapter", "b")
    assert host_second is host_first and second["pid"] == first["pid"], "the host was not reused"
    # The first unit's files (state folder, HOME, TMPDIR) are gone, its instance with its turns too.
    assert second == first
    # Before the second unit gave a time, the host read the machine clock, not the first unit's 2021.
    for digest in (digest_first, digest_second):
        assert abs(int(digest.split("@")[1]) - time.time()) < 600, digest


def test_an_adapter_that_does_not_declare_it_gets_a_new_host_per_unit():
    _, _, host_first = _unit("NotReusableAdapter", "a")
    found, _, host_second = _unit("NotReusableAdapter", "b")
    assert host_second is not host_first and host_first.dead
    assert found["state"] == [] and found["home"] == [] and found["tmp"] == []


def test_a_unit_with_a_model_or_a_failed_close_gets_its_own_host():
    class Model:
        def complete(self, messages):
            return "ok"

    cls, _ = validate_condition("tests.host.host_adapters:LeavingTracesAdapter", {}, (), "c")
    assert host_reuse.reuse_key(cls, (), (), Model(), None, None, 1.0) is None
    assert host_reuse.reuse_key(cls, (), (), None, object(), None, 1.0) is None, "an embedder the harness runs"
    assert host_reuse.reuse_key(cls, (), (), None, HashingEmbedder(), None, 1.0) is not None
    # A closed adapter whose host was handed on refuses further calls (it would reach the next unit).
    adapter = _open("LeavingTracesAdapter")
    adapter.reset(conversation_id="x", now=OLD)
    adapter.close()
    with pytest.raises(HostError, match="handed on"):
        adapter.query("still there?", now=OLD)
    # A host whose adapter failed to close is not kept.
    adapter = _open("LeavingTracesAdapter")
    host = adapter.host
    adapter.reset(conversation_id="y", now=OLD)
    adapter.host.request({"op": "release", "instance": adapter.instance})  # the instance is gone: close fails
    with pytest.raises(KeyError):
        adapter.close()
    assert host.dead and not any(host_reuse.IDLE.idle.values())


def _rows(store: Path) -> dict[str, list]:
    db = sqlite3.connect(store)
    run = db.execute("select run_id from runs").fetchone()[0]
    out = {}
    for (table,) in db.execute("select name from sqlite_master where type = 'table' and name not in "
                               "('runs', '_migrations')"):
        cur = db.execute(f"select * from [{table}]")
        names = [d[0] for d in cur.description]
        keep = [i for i, n in enumerate(names) if n not in {"run_id", "elapsed_s", "elapsed_ms", "total_ms",
                                                            "query_ms", "answer_ms", "latency_ms"}]
        out[table] = sorted((tuple(v.replace(run, "RUN") if isinstance(v, str) else v for i, v in enumerate(r)
                                   if i in keep) for r in cur.fetchall()), key=repr)
    return out


def test_a_longmemeval_run_stores_the_same_rows_with_hosts_reused(tmp_path, monkeypatch):
    from lsrep.probes.generator import generate_longmemeval_file

    from lsrep.executors.overlap import OverlappedExecutor
    from lsrep.longmemeval import run_longmemeval, spec_from_systems

    data = generate_longmemeval_file(tmp_path / "lme.json", n_questions=6, sessions_per_question=3, seed=3)
    started = []
    original = client.HostProcess.__init__

    def counting(self, *args, **kwargs):
        started.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(client.HostProcess, "__init__", counting)
    stores = {}
    for reuse in (True, False):
        if not reuse:
            monkeypatch.setattr(client, "reuse_key", lambda *a: None)
        started.clear()
        spec = spec_from_systems(["vector-rag", "full-context"], data, store=tmp_path / f"{reuse}.sqlite")
        run_longmemeval(spec, executor=OverlappedExecutor(2), fresh=True)
        stores[reuse] = (tmp_path / f"{reuse}.sqlite", len(started))
    # 12 units; vector-RAG's 6 share at most two hosts (two units at a time), full-context's 6 get one each.
    assert stores[False][1] == 12 and stores[True][1] <= 8
    reused, fresh = _rows(stores[True][0]), _rows(stores[False][0])
    assert reused.keys() == fresh.keys() and reused["observations"] and reused["fragments"]
    for table in reused:
        assert reused[table] == fresh[table], table
