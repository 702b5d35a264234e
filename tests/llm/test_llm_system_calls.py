"""Systems' own model calls (EXIA SEED's consolidation) go through the campaign's endpoint."""

from __future__ import annotations

import re

from lsrep.systems.exia_seed.prompts import CONSOLIDATION_TASK
from lsrep.systems.exia_seed.standin import StandInModel

from lsrep.llm.server import OpenAITestServer
from lsrep.runner import run_campaign
from lsrep.store import RunStore

STANDIN = StandInModel()


def served_model(request) -> str:
    messages = request.messages
    if messages and messages[0]["content"].startswith(CONSOLIDATION_TASK):
        return STANDIN.complete(messages)  # the same JSON shape a real model must produce
    if messages and messages[0]["content"].startswith("You answer questions"):
        first = re.search(r"^\[1\] (.*)$", request.last_user, re.M)
        return first.group(1)[:160] if first else "I don't know"
    return STANDIN.complete(messages)


def test_exia_consolidation_uses_the_configured_endpoint(example, monkeypatch):
    monkeypatch.setenv("LSREP_SYS_KEY", "sk-system")
    with OpenAITestServer(reply=served_model) as server:
        text = example.read_text().replace("session-end.toml", "nightly-only.toml")
        text = text.replace('''[answerer]
kind = "extractive"''', f'''[[conditions]]
name = "exia-seed"
system = "exia-seed"
options = {{ phase = 2, tools = "off", auto_consolidate = false }}

[answerer]
kind = "llm"
[answerer.endpoint]
base_url = "{server.base_url}"
model = "served"
api_key_env = "LSREP_SYS_KEY"''')
        example.write_text(text)
        out = run_campaign(example)
        consolidations = [r for r in server.requests if r.messages and
                          r.messages[0]["content"].startswith(CONSOLIDATION_TASK)]
        assert consolidations, "EXIA never called the endpoint"
        sent = server.request_count
        run_campaign(example, fresh=True)
        assert server.request_count == sent  # system calls are cached like the rest
    store = RunStore(out.store_path)
    calls = store.rows("select status, count(*) n from llm_calls where run_id = ? and purpose = 'system' "
                       "group by status", [out.run_id])
    assert calls and calls[0]["status"] == "ok" and calls[0]["n"] >= len(consolidations)
    recalled = store.rows("select count(*) n from observations where run_id = ? and condition = 'exia-seed' "
                          "and n_fragments > 0", [out.run_id])[0]["n"]
    assert recalled > 0  # pages written from the served model's facts reach recall
