"""EXIA's LLM consolidator path: the seed's prompts through the condition's `[memory_llm]`.

Against the real in-process OpenAI-compatible server (lsrep/llm/server.py) and the offline
responder's `exia_seed` profile, on the quickstart journal (Maya moves from Lisbon to Porto).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lsrep.systems.exia_seed.prompts import (
    CONSOLIDATION_TASK,
    SUMMARY_TASK,
    read_consolidation_request,
)
from lsrep.systems.exia_seed.rules import RulesModel

from lsrep.llm.server import OpenAITestServer, ReceivedRequest, Reply
from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[3]


def campaign(tmp: Path, conditions: str, tables: str = "") -> Path:
    dest = tmp / "campaigns"
    shutil.copytree(REPO / "campaigns" / "quickstart", dest / "quickstart")
    shutil.copytree(REPO / "schedules", tmp / "schedules")
    head = (REPO / "campaigns" / "quickstart.toml").read_text().split("[[conditions]]")[0]
    path = dest / "exia-llm.toml"
    path.write_text(f'adapter_host = "in-process"\n{head}{conditions}\n{tables}\n'
                    '[answerer]\nkind = "extractive"\n')
    return path


def condition(name: str, options: str, extra: str = "") -> str:
    return f'[[conditions]]\nname = "{name}"\nsystem = "exia-seed"\noptions = {options}\n{extra}\n'


def endpoint(url: str) -> str:
    return f'[memory_llm]\nbase_url = "{url}"\nmodel = "served-chat"\napi_key_env = ""\n'


def served(request: ReceivedRequest) -> str:
    """A served model that answers EXIA's requests from their own sources (the rules consolidator)."""
    return RulesModel().complete(request.messages)


def rows(store: RunStore, sql: str, run_id: str) -> list[dict]:
    return store.rows(sql, [run_id])


def test_the_seeds_prompts_reach_the_memory_model_and_its_facts_reach_the_answerer(tmp_path):
    with OpenAITestServer(reply=served) as server:
        out = run_campaign(campaign(tmp_path, condition("exia-llm", '{ consolidator = "llm" }'),
                                    endpoint(server.base_url)))
        requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert requests
    tasks = {r.messages[0]["content"].splitlines()[0] for r in requests}
    assert tasks == {CONSOLIDATION_TASK, SUMMARY_TASK}
    first = next(r for r in requests if r.messages[0]["content"].startswith(CONSOLIDATION_TASK))
    sources, _, _ = read_consolidation_request(first.messages[1]["content"])
    assert sources and sources[0].text.endswith("[Maya] Hi! I'm Maya. I just started keeping a journal with you. "
                                                "I live in Lisbon, in a small flat near the river.")
    assert {r.body.get("temperature") for r in requests} == {0}
    store = RunStore(out.store_path)
    booked = rows(store, "select count(*) n, sum(cached = 0) uncached from memory_calls where run_id = ? "
                         "and kind = 'chat' and status = 'ok'", out.run_id)[0]
    assert booked["uncached"] == len(requests)
    parsed = rows(store, "select params from events where run_id = ? and mechanism = 'exia.consolidate.llm' "
                         "and stage = 'output'", out.run_id)
    assert parsed and {json.loads(p["params"])["parse"] for p in parsed} == {"json"}
    manifest = json.loads(rows(store, "select manifest from runs where run_id = ?", out.run_id)[0]["manifest"])
    assert manifest["conditions"]["exia-llm"]["options"]["consolidator"] == "llm"
    texts = [r["text"] for r in rows(store, "select coalesce(f.text, t.text) text from fragments f join observations o "
                                            "using(obs_id) left join fragment_texts t on t.sha256 = f.text_sha256 "
                                            "where o.run_id = ?", out.run_id)]
    assert any(t.startswith("Maya: I live in Lisbon") for t in texts)
    assert not any(t.startswith("Maya: Maya: ") for t in texts)  # a speaker's own page is not named twice
    assert any(t.endswith("[superseded]") and "Lisbon" in t for t in texts)  # the move to Porto replaced it


def test_a_malformed_reply_is_a_recorded_error_and_writes_no_fact(tmp_path):
    def prose(request: ReceivedRequest) -> str:
        return "Sure! Maya lives in Lisbon and works as a nurse."  # no JSON at all

    with OpenAITestServer(reply=prose) as server:
        out = run_campaign(campaign(tmp_path, condition("exia-llm", '{ consolidator = "llm" }'),
                                    endpoint(server.base_url)))
        asked = sum(1 for r in server.requests if r.path.endswith("/chat/completions"))
    store = RunStore(out.store_path)
    llm = rows(store, "select stage, reason from events where run_id = ? and mechanism = 'exia.consolidate.llm' "
                      "and stage in ('output', 'error')", out.run_id)
    assert asked > 0 and llm and {(e["stage"], e["reason"]) for e in llm} == {("error", "json invalide")}
    calls = rows(store, "select count(*) n from memory_calls where run_id = ? and kind = 'chat'", out.run_id)[0]["n"]
    assert len(llm) == calls >= asked  # one error per reply (repeats come from the cache): none ignored
    written = rows(store, "select count(*) n from events where run_id = ? and mechanism = 'exia.consolidate.write' "
                           "and stage in ('executed', 'output')",
                   out.run_id)[0]["n"]
    assert written == 0
    facts = rows(store, "select count(*) n from fragments f join observations o using(obs_id) where o.run_id = ?",
                 out.run_id)[0]["n"]
    assert facts == 0


def test_the_offline_profile_runs_the_llm_path_as_the_rules_consolidator_runs_directly(tmp_path):
    conditions = (condition("exia-rules", '{ consolidator = "rules" }')
                  + condition("exia-offline-llm", '{ consolidator = "llm" }', 'memory_llm = { kind = "offline" }')
                  + condition("exia-auto", "{}", 'memory_llm = { kind = "offline" }'))  # auto: a memory model → llm
    out = run_campaign(campaign(tmp_path, conditions))
    store = RunStore(out.store_path)
    contexts = {c: [r["context_sha256"] for r in store.rows(
        "select context_sha256 from observations where run_id = ? and condition = ? order by checkpoint, probe_id",
        [out.run_id, c])] for c in ("exia-rules", "exia-offline-llm", "exia-auto")}
    assert contexts["exia-rules"] and contexts["exia-rules"] == contexts["exia-offline-llm"] == contexts["exia-auto"]
    calls = rows(store, "select condition, profile, count(*) n from memory_calls where run_id = ? group by 1, 2",
                 out.run_id)
    assert [(c["condition"], c["profile"]) for c in calls] == [("exia-auto", "exia_seed"),
                                                               ("exia-offline-llm", "exia_seed")]


def test_llm_without_a_memory_model_is_refused_by_name(tmp_path):
    with pytest.raises(Exception, match=r'consolidator = "llm" needs a \[memory_llm\]'):
        out = run_campaign(campaign(tmp_path, condition("exia-llm", '{ consolidator = "llm" }')))
        store = RunStore(out.store_path)
        failure = store.rows("select error from failures where run_id = ?", [out.run_id])
        raise RuntimeError(failure[0]["error"] if failure else "no failure recorded")


def test_a_reply_without_text_is_a_recorded_model_error(tmp_path):
    def tool_call(request: ReceivedRequest) -> Reply:  # the model answers with a tool call, no content
        return Reply(text="", tool_calls=({"id": "c1", "type": "function",
                                           "function": {"name": "noter", "arguments": "{}"}},))

    with OpenAITestServer(reply=tool_call) as server:
        out = run_campaign(campaign(tmp_path, condition("exia-llm", '{ consolidator = "llm" }'),
                                    endpoint(server.base_url)))
    store = RunStore(out.store_path)
    reasons = {e["reason"] for e in rows(store, "select reason from events where run_id = ? and mechanism = "
                                                "'exia.consolidate.llm' and stage = 'error'", out.run_id)}
    assert reasons == {"memory model 'served-chat' returned no text content (choices: 1)"}


def test_the_exia_profile_answers_only_exias_requests():
    from lsrep.adapters.exia_seed.offline_profile import exia_seed_profile
    from lsrep.systems.exia_seed.prompts import Source, consolidation_messages

    source = Source("brut:b1:1", "User: [Maya] I work as a nurse at Santa Maria hospital.", False, "2026-03-02")
    reply = exia_seed_profile({"messages": consolidation_messages("en", [source], [], [])})
    facts = json.loads(reply["content"])["faits"]
    assert [(f["fait"], f["noeud"], f["sources"], f["attribut"]) for f in facts] == [
        ("Maya: I work as a nurse at Santa Maria hospital.", "Maya", ["brut:b1:1"], "job")]
    assert exia_seed_profile({"messages": [{"role": "system", "content": "You are a Memory Extractor"},
                                           {"role": "user", "content": "## New Messages\nuser: hi"}]}) is None
    assert exia_seed_profile({"messages": [{"role": "user", "content": CONSOLIDATION_TASK}]}) is None
