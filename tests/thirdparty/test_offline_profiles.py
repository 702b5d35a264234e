"""The mem0 and LangMem offline-responder profiles: they recognise their library's real request,
answer with the turns' own words, and decline everything else (so the generic responder answers)."""

from __future__ import annotations

import json

import pytest
from lsrep.adapters.langmem.offline_profile import langmem_profile
from lsrep.adapters.mem0.offline_profile import mem0_profile

from lsrep.memory_model.offline import OfflineResponder, load_profiles

TURN = "[2023-05-08 13:56] Caroline: I went to the LGBTQ support group yesterday and it was powerful."


def test_profiles_are_registered_under_the_entry_point_group():
    names = [name for name, _ in load_profiles()]
    assert "mem0" in names and "langmem" in names


def test_mem0_profile_answers_mem0s_real_extraction_prompt_with_the_turns_words():
    prompts = pytest.importorskip("mem0.configs.prompts")
    user = prompts.generate_additive_extraction_prompt(
        existing_memories=[{"id": "0", "text": "Caroline: I like hiking in the hills on weekends."}],
        new_messages=f"user: {TURN}\nuser: [2023-05-08 14:00] Caroline: ok\n", last_k_messages=[])
    body = {"messages": [{"role": "system", "content": prompts.ADDITIVE_EXTRACTION_PROMPT},
                         {"role": "user", "content": user}], "response_format": {"type": "json_object"}}
    reply = json.loads(mem0_profile(body)["content"])
    assert reply == {"memory": [{"id": "0", "attributed_to": "user", "text":
                                 "Caroline: I went to the LGBTQ support group yesterday and it was powerful."}]}
    # What is already stored is not extracted again.
    body["messages"][1]["content"] = prompts.generate_additive_extraction_prompt(
        existing_memories=[{"id": "0", "text": reply["memory"][0]["text"]}], new_messages=f"user: {TURN}\n",
        last_k_messages=[])
    assert json.loads(mem0_profile(body)["content"]) == {"memory": []}


def test_mem0_profile_declines_other_requests():
    assert mem0_profile({"messages": [{"role": "user", "content": "## New Messages\nuser: hello there friend"}]}) is None
    assert mem0_profile({"messages": [{"role": "system", "content": "You are a Memory Extractor"},
                                      {"role": "user", "content": "no sections here"}]}) is None


def _langmem_body(existing: str = "", tools=("Memory", "PatchDoc", "RemoveDoc")) -> dict:
    system = "You are a memory subroutine for an AI."
    if existing:
        system += f"\n\nGenerate JSONPatches to update the existing schema instances.\n<existing>\n{existing}\n</existing>\n"
    user = ("Enrich, prune, and organize memories based on any new information. "
            "\n\n<session_abc>\n================================ Human Message =================================\n\n"
            "[2026-03-09 12:03] Ana: My favourite colour is crimson now,\nnot teal.\n</session_abc>")
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "tools": [{"type": "function", "function": {"name": n, "parameters": {}}} for n in tools]}


def test_langmem_profile_inserts_a_new_memory_from_a_multi_line_turn():
    reply = langmem_profile(_langmem_body())
    (call,) = reply["tool_calls"]
    assert call["function"]["name"] == "Memory"
    assert json.loads(call["function"]["arguments"]) == {"content": "Ana: My favourite colour is crimson now, not teal."}


def test_langmem_profile_patches_the_memory_a_turn_revises():
    existing = ('<instance id=k1 schema_type="Memory">\n{\'content\': \'Ana: My favourite colour is teal.\'}\n</instance>\n'
                '<instance id=k2 schema_type="Memory">\n{\'content\': \'Ana: I planted tulips today.\'}\n</instance>')
    (call,) = langmem_profile(_langmem_body(existing))["tool_calls"]
    args = json.loads(call["function"]["arguments"])
    assert call["function"]["name"] == "PatchDoc" and args["json_doc_id"] == "k1"
    assert args["patches"] == [{"op": "replace", "path": "/content",
                                "value": "Ana: My favourite colour is crimson now, not teal."}]
    # Without PatchDoc on offer, the revision is a new memory.
    (call,) = langmem_profile(_langmem_body(existing, tools=("Memory",)))["tool_calls"]
    assert call["function"]["name"] == "Memory"


def test_langmem_profile_declines_other_requests_and_the_generic_responder_takes_them():
    body = {"messages": [{"role": "user", "content": "Hello"}],
            "tools": [{"type": "function", "function": {"name": "Memory", "parameters": {}}}]}
    assert langmem_profile(body) is None
    assert OfflineResponder().chat(body)["system_fingerprint"] == "lsrep-offline:generic"
    assert OfflineResponder().chat(_langmem_body())["system_fingerprint"] == "lsrep-offline:langmem"
