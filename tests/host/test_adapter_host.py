"""The adapter host: what the hosted process can see, failures and stalls as recorded failures, and
results identical to in-process."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lsrep.contract import ReplayTurn
from lsrep.embed.hashing import HashingEmbedder
from lsrep.harness import validate_condition
from lsrep.host.client import HostProcess, open_hosted
from lsrep.host.launch import KEPT_ENV, isolation
from lsrep.host.wire import HostDied, HostTimeout
from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.core.test_executors import _comparable, _events

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)
TURN = ReplayTurn(turn_id="t1", session_id="s1", conversation_id="c", index=0, timestamp=NOW, role="user",
                  content="hello")


def _open(name: str, **kwargs):
    cls, _ = validate_condition(f"tests.host.host_adapters:{name}", {}, (), "c")
    return open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=kwargs.pop("embedder", None),
                       llm=kwargs.pop("llm", None), seed=0, **kwargs)


def test_the_host_sees_a_clean_argv_environment_and_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-cross")
    monkeypatch.chdir(tmp_path)
    adapter = _open("IntrospectAdapter")
    try:
        adapter.reset(conversation_id="c", now=NOW)
        adapter.ingest(TURN, now=NOW)
        seen = json.loads(adapter.query("where am I?", now=NOW).fragments[0].text)
    finally:
        adapter.close()
    # Forked by the zygote: its argv is the zygote's, which names nothing of the run.
    assert seen["argv"][0].endswith("lsrep/host/__main__.py") and seen["argv"][1] == "--zygote"
    assert seen["argv"][2].isdigit() and seen["argv"][3:5] in ([], ["--sandbox"], ["--sandbox", "--listen"])
    assert seen["argv"][5:] == [] or (seen["argv"][4] == "--listen" and seen["argv"][5].isdigit()
                                      and len(seen["argv"]) == 6)
    assert Path(seen["cwd"]).name.startswith("lsrep-host-") and str(tmp_path) not in seen["cwd"]
    assert Path(seen["state_dir"]).parent == Path(seen["cwd"])
    allowed = set(KEPT_ENV) | {"HOME", "TMPDIR", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "HF_HUB_OFFLINE",
                               "TRANSFORMERS_OFFLINE", "MEM0_TELEMETRY",
                               "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}  # set by `import lsrep`: one BLAS thread
    assert set(seen["env"]) <= allowed | {"LC_CTYPE", "PWD", "SHLVL", "_"}
    assert "OPENAI_API_KEY" not in seen["env"]
    if isolation() in ("pid-namespace", "sandbox"):
        # In its own PID namespace under the zygote (PID 1): no harness process to find in /proc, and
        # the only parent to read is the zygote, started as clean as the host.
        assert seen["ppid"] == 1 and set(seen["pids"]) <= {1, seen["pid"]}
        assert seen["parent_cmdline"][1:3] == ["-m", "lsrep.host"] and str(tmp_path) not in " ".join(
            seen["parent_cmdline"])
        assert "OPENAI_API_KEY" not in seen["parent_env"] and set(seen["parent_env"]) <= allowed | {"LC_CTYPE"}


def test_a_host_collects_garbage_as_a_unit_process():
    """`lsrep.collector.for_unit_process` in the host: the unit setting for its life, and the zygote's
    heap it was forked with frozen out of every collection."""
    from lsrep.collector import FULL_COLLECTION_EVERY, YOUNG_COLLECTION_AFTER

    adapter = _open("IntrospectAdapter")
    try:
        adapter.reset(conversation_id="c", now=NOW)
        adapter.ingest(TURN, now=NOW)
        threshold, frozen = json.loads(adapter.query("gc?", now=NOW).fragments[0].text)["gc"]
    finally:
        adapter.close()
    assert threshold[0] >= YOUNG_COLLECTION_AFTER and threshold[2] >= FULL_COLLECTION_EVERY
    assert frozen > 10_000  # pydantic, numpy and the harness-side modules


def test_a_stalled_host_is_killed_after_the_timeout_and_stays_dead():
    adapter = _open("StallingAdapter", timeout=1.0)
    adapter.reset(conversation_id="c", now=NOW)
    start = time.perf_counter()
    with pytest.raises(HostTimeout, match="sent nothing for 1 s"):
        adapter.query("anyone?", now=NOW)
    assert time.perf_counter() - start < 15
    with pytest.raises(HostDied):
        adapter.ingest(TURN, now=NOW)
    adapter.terminate()


class _Model:
    def __init__(self) -> None:
        self.calls: list = []

    def complete(self, messages):
        self.calls.append(messages)
        return f"summary of {messages[-1]['content']}"


def test_model_and_embedder_calls_are_made_by_the_harness():
    llm = _Model()
    adapter = _open("ModelCallingAdapter", llm=llm, embedder=HashingEmbedder(dim=64))
    try:
        adapter.reset(conversation_id="c", now=NOW)
        text = adapter.query("what now?", now=NOW).fragments[0].text
    finally:
        adapter.close()
    assert text == "summary of what now? | 64"
    assert llm.calls == [[{"role": "user", "content": "what now?"}]]


def test_a_host_process_can_serve_several_instances():
    host = HostProcess()
    try:
        assert host.pid > 0 and host.dead is None
    finally:
        host.close()
    assert host.dead is not None
    with pytest.raises(HostDied):
        host.request({"op": "init"})


def test_a_dying_host_is_a_failed_unit_and_the_campaign_goes_on(example, monkeypatch):
    from lsrep.executors.local import InProcessExecutor

    example.write_text(example.read_text().replace("[answerer]", '''[[conditions]]
name = "crashes"
system = "tests.core.adapters_for_tests:HardCrashAdapter"

[answerer]'''))
    out = run_campaign(example, executor=InProcessExecutor())
    store = RunStore(out.store_path)
    units = {r["condition"]: r for r in store.rows("select * from units where run_id = ?", [out.run_id])}
    assert out.failed_units == 1 and units["crashes"]["status"] == "failed"
    assert all(units[c]["status"] == "finished" for c in ("null", "full-context", "vector-rag"))
    failures = store.rows("select phase, error_type from failures where run_id = ? and unit_id like 'crashes/%'",
                          [out.run_id])
    # The 4th turn (index 3) killed the host; the batch's first three turns were replayed as done.
    assert failures == [{"phase": "ingest:t0004", "error_type": "HostDied"}]
    errors = store.rows("select count(*) as n from observations where run_id = ? and condition = 'crashes' "
                        "and status = 'error'", [out.run_id])[0]["n"]
    assert errors == 63


def test_hosted_results_equal_in_process_results(example):
    from lsrep.executors.local import InProcessExecutor

    example.write_text(example.read_text().replace("[answerer]", '''[[conditions]]
name = "flaky"
system = "tests.core.adapters_for_tests:FlakyAdapter"

[[conditions]]
name = "thalia"
system = "thalia"

[[conditions]]
name = "ice"
system = "ice"

[answerer]'''))
    hosted = run_campaign(example, executor=InProcessExecutor(), fresh=True)
    local = run_campaign(example, executor=InProcessExecutor(), fresh=True, adapter_host="in-process")
    assert _comparable(hosted) == _comparable(local)
    assert _events(hosted) == _events(local)
    rows = [RunStore(o.store_path).rows("select unit_id, seq, phase, checkpoint, probe_id, error_type, message "
                                        "from failures where run_id = ? order by unit_id, seq", [o.run_id])
            for o in (hosted, local)]
    assert rows[0] == rows[1] and rows[0]


def test_call_hooks_run_in_the_host_around_each_call_with_its_now():
    adapter = _open("HookReadingAdapter", hooks=("tests.host.host_adapters:record_now",))
    try:
        adapter.reset(conversation_id="c", now=NOW)
        assert adapter.query("when?", now=NOW).fragments[0].text == NOW.isoformat()
    finally:
        adapter.close()
    plain = _open("HookReadingAdapter")
    try:
        assert plain.query("when?", now=NOW).fragments[0].text == "no hook"
    finally:
        plain.close()


def test_an_adapter_the_host_cannot_import_is_a_clear_failure():
    from lsrep.contract import MemoryAdapter
    from lsrep.host.wire import HostError

    class LocalAdapter(MemoryAdapter):
        pass

    with pytest.raises(HostError, match=r"could not build .*LocalAdapter: AttributeError"):
        open_hosted(LocalAdapter, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)


def test_the_campaign_embedding_policy_reaches_a_hosted_adapter():
    adapter = _open("IntrospectAdapter", embedding_text="date-speaker")
    try:
        adapter.reset(conversation_id="c", now=NOW)
        adapter.ingest(TURN, now=NOW)
        seen = json.loads(adapter.query("which policy?", now=NOW).fragments[0].text)
    finally:
        adapter.close()
    assert seen["embedding_text"] == "date-speaker"  # matched arms hold in the host too

