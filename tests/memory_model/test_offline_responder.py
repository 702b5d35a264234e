"""The offline responder: schema-valid JSON and tool calls built from the request's own words,
the same reply for the same request, registered profiles first, embeddings at the asked size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lsrep.memory_model.offline import OfflineResponder, load_profiles
from lsrep.memory_model.schema_fill import Words, instance

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = {
    "type": "object",
    "$defs": {"fact": {"type": "object", "properties": {
        "text": {"type": "string", "minLength": 5}, "confidence": {"type": "number", "minimum": 0.5, "maximum": 1},
        "kind": {"enum": ["event", "preference"]}, "when": {"anyOf": [{"type": "null"},
                                                                       {"type": "string", "format": "date"}]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
        "count": {"type": "integer", "exclusiveMinimum": 3}}, "required": ["text", "confidence", "count"]}},
    "properties": {"facts": {"type": "array", "items": {"$ref": "#/$defs/fact"}}, "ok": {"type": "boolean"},
                   "version": {"const": 2}},
    "required": ["facts", "ok", "version"],
}
USER = "Maya moved to Lisbon in March and started at Rivet Labs."


def body(**extra):
    return {"model": "x", "messages": [{"role": "system", "content": "Extract."},
                                       {"role": "user", "content": USER}], **extra}


def test_json_schema_replies_are_valid_instances_made_of_the_requests_words():
    fmt = {"type": "json_schema", "json_schema": {"name": "f", "schema": SCHEMA}}
    reply = OfflineResponder(profiles=()).chat(body(response_format=fmt))
    value = json.loads(reply["choices"][0]["message"]["content"])
    jsonschema.validate(value, SCHEMA)
    words = set(USER.split())
    assert value["facts"] and set(value["facts"][0]["text"].split()) <= words
    assert value["facts"][0]["count"] == 4 and value["version"] == 2


def test_tool_calls_name_the_chosen_tool_with_schema_valid_arguments():
    params = {"type": "object", "properties": {"memory": {"type": "string"}, "id": {"type": "integer"}},
              "required": ["memory", "id"]}
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
             {"type": "function", "function": {"name": "upsert", "parameters": params}}]
    responder = OfflineResponder(profiles=())
    chosen = responder.chat(body(tools=tools, tool_choice={"type": "function", "function": {"name": "upsert"}}))
    (call,) = chosen["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "upsert" and chosen["choices"][0]["finish_reason"] == "tool_calls"
    jsonschema.validate(json.loads(call["function"]["arguments"]), params)
    first = responder.chat(body(tools=tools))["choices"][0]["message"]["tool_calls"][0]
    assert first["function"]["name"] == "search"
    plain = responder.chat(body(tools=tools, tool_choice="none"))["choices"][0]["message"]
    assert "tool_calls" not in plain and set(plain["content"].split()) <= set(USER.split())


def test_the_same_request_gets_the_same_reply_and_json_object_mode_is_json():
    responder = OfflineResponder(profiles=())
    one = responder.chat(body(response_format={"type": "json_object"}))
    assert one == responder.chat(body(response_format={"type": "json_object"}))
    assert isinstance(json.loads(one["choices"][0]["message"]["content"]), dict)
    assert one["usage"]["prompt_tokens"] > 0 and one["usage"]["completion_tokens"] > 0


def test_profiles_are_tried_in_order_and_the_first_answer_wins():
    seen = []

    def declines(request):
        seen.append("a")
        return None

    def answers(request):
        seen.append("b")
        return {"content": json.dumps({"facts": ["from profile"]})}

    responder = OfflineResponder(profiles=(("a", declines), ("b", answers), ("c", lambda r: {"content": "never"})))
    reply = responder.chat(body())
    assert seen == ["a", "b"] and json.loads(reply["choices"][0]["message"]["content"]) == {"facts": ["from profile"]}
    assert reply["system_fingerprint"] == "lsrep-offline:b"
    assert OfflineResponder(profiles=(("a", declines),)).chat(body())["system_fingerprint"] == "lsrep-offline:generic"
    assert isinstance(load_profiles(), tuple)  # the entry-point group loads (empty here unless M's are installed)


def test_embeddings_have_the_requested_size_and_unit_length():
    rows, tokens = OfflineResponder(profiles=(), dimensions=32).embed(["a cat", "a dog"], None)
    assert np.asarray(rows).shape == (2, 32) and tokens > 0
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    rows, _ = OfflineResponder(profiles=(), dimensions=32).embed(["a cat"], 8)
    assert len(rows[0]) == 8


def test_a_recursive_schema_ends():
    tree = {"type": "object", "properties": {"name": {"type": "string"},
                                             "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name"]}
    value = instance(tree, Words("a b c"))
    jsonschema.validate(value, tree)
