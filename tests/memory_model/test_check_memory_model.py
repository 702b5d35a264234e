"""`lsrep adapters check` gives the adapter a memory model (the offline responder by default, an
endpoint on request), and an endpoint that is down is one error naming its URL."""

from __future__ import annotations

import json
import socket

from lsrep.cli import main
from lsrep.llm.server import OpenAITestServer
from tests.memory_model.test_gateway_endpoint import served

ADAPTER = "tests.memory_model.gateway_adapters:GatewayClientAdapter"
CHECK = ["--check", "replay_runs", "--check", "determinism"]


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_adapter_that_needs_a_model_is_checked_with_the_offline_responder(capsys):
    code, out, _ = run(capsys, "adapters", "check", ADAPTER, *CHECK)
    assert code == 0, out
    assert "memory model: llm offline responder, embedder offline responder" in out.splitlines()[0]
    code, out, _ = run(capsys, "adapters", "check", ADAPTER, "--json", *CHECK)
    report = json.loads(out)
    assert report["ok"] and report["memory_calls"] > 0


def test_without_a_memory_model_the_adapter_cannot_build(capsys):
    code, out, _ = run(capsys, "adapters", "check", ADAPTER, "--memory-llm", "none", "--memory-embedder", "none",
                       *CHECK)
    assert code == 1 and "needs [memory_llm]" in out


def test_an_endpoint_on_the_command_line_is_used(capsys):
    with OpenAITestServer(reply=served, embed_dim=8) as server:
        table = json.dumps({"base_url": server.base_url, "model": "m", "api_key_env": ""})
        code, out, _ = run(capsys, "adapters", "check", ADAPTER, "--memory-llm", table, "--memory-embedder", table,
                           "--check", "replay_runs")
        assert code == 0, out
        assert server.count("chat") > 0 and server.count("embeddings") > 0
        assert server.base_url in out.splitlines()[0]


def test_an_unreachable_endpoint_is_one_error_naming_the_url(capsys):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    table = json.dumps({"base_url": url, "model": "m", "api_key_env": ""})
    code, out, err = run(capsys, "adapters", "check", ADAPTER, "--memory-llm", table)
    assert code == 2 and out == ""
    assert err.count(url) == 1 and "unreachable" in err and "no check was run" in err
    assert "Connection error." not in err


def test_a_bad_table_names_the_flag(capsys):
    code, _, err = run(capsys, "adapters", "check", ADAPTER, "--memory-embedder", '{"kind": "endpoint"}')
    assert code == 2 and "--memory-embedder" in err and "base_url" in err
