"""The memory-side gateway end to end with the offline responder: an adapter in the host (and
in-process) reaches it with its own `openai` client, and every call is booked to its turn or probe."""

from __future__ import annotations

import json

import pytest

from lsrep.runner import run_campaign
from lsrep.store import RunStore
from tests.memory_model.campaign_util import write_campaign

OFFLINE = '[memory_llm]\nkind = "offline"\n[memory_embedder]\nkind = "offline"\ndimensions = 64\n'


@pytest.mark.parametrize("host", ["process", "in-process"])
def test_an_adapter_reaches_its_gateway_and_every_call_is_attributed(tmp_path, host):
    out = run_campaign(write_campaign(tmp_path, OFFLINE, host=host))
    store = RunStore(out.store_path)
    assert store.rows("select status, error from units") == [{"status": "finished", "error": None}]
    turns = [r["turn_id"] for r in store.rows("select turn_id from turns where run_id = ? order by idx", [out.run_id])]
    calls = store.rows("select * from memory_calls where run_id = ? order by seq", [out.run_id])
    ingest = [c for c in calls if c["phase"] == "ingest"]
    # One JSON-schema chat call and one embedding request per turn, each booked to its own turn.
    assert [(c["turn_id"], c["kind"]) for c in ingest] == [(t, k) for t in turns for k in ("chat", "embedding")]
    observations = store.rows("select probe_id, checkpoint from observations where run_id = ? order by rowid",
                              [out.run_id])
    query = [(c["probe_id"], c["checkpoint"], c["kind"]) for c in calls if c["phase"] == "query"]
    assert query == [(o["probe_id"], o["checkpoint"], k) for o in observations for k in ("chat", "embedding")]
    assert {c["source"] for c in calls} == {"offline"} and all(c["status"] == "ok" for c in calls)
    assert all(c["prompt_tokens"] > 0 for c in calls)
    # Ingest latency is recorded per turn.
    (ingests,) = store.rows("select * from unit_ingests where run_id = ?", [out.run_id])
    elapsed = json.loads(ingests["elapsed_ms"])
    assert json.loads(ingests["turn_ids"]) == turns and ingests["turns"] == len(turns) and ingests["failed"] == 0
    assert len(elapsed) == len(turns) and all(ms > 0 for ms in elapsed)
    assert ingests["total_ms"] == pytest.approx(sum(elapsed))
    # The JSON-mode facts are the turn's own words, so retrieval finds something.
    assert store.rows("select count(*) n from observations where run_id = ? and n_fragments > 0",
                      [out.run_id])[0]["n"] == len(observations)


def test_a_call_outside_any_adapter_call_is_booked_unattributed_not_dropped():
    from lsrep.memory_model.accounting import CallBook
    from lsrep.memory_model.relay import MemoryRelay
    from lsrep.protocol.campaign import MemoryModelSpec

    relay = MemoryRelay(CallBook("r", "u", "c"), llm=MemoryModelSpec(kind="offline"))
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    assert relay.serve("chat", body)["status"] == 200
    relay.begin("ingest", ({"turn_id": "t7"},))
    relay.serve("chat", body)
    relay.end()
    relay.serve("chat", body)
    assert [(r["phase"], r["turn_id"]) for r in relay.book.rows] == [
        ("unattributed", None), ("ingest", "t7"), ("unattributed", None)]
    # A role the condition does not configure is an error the library sees, and nothing is booked.
    assert relay.serve("embeddings", {"input": ["x"]})["status"] == 404 and len(relay.book.rows) == 3
