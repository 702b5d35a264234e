"""The API key reaches the wire and nowhere else: not records, reprs, errors or the cache file."""

from __future__ import annotations

import uuid

import pytest

from lsrep.answer.prompt import render_answer_messages
from lsrep.embed.model import OpenAIEmbedder
from lsrep.judge.model import EvolvingReferenceJudge, JudgeError
from lsrep.judge.verdict import JudgeCase, VersionView
from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.server import Fault


def test_planted_key_never_leaves_the_request(server, spec_for, tmp_path, monkeypatch):
    key = f"sk-planted-{uuid.uuid4().hex}"
    monkeypatch.setenv("LSREP_PLANTED_KEY", key)
    spec = spec_for(server, api_key_env="LSREP_PLANTED_KEY", max_retries=1)
    records = []
    texts: list[str] = []
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        client = LLMClient(spec, cache=cache, on_record=records.append)
        answer = client.complete(render_answer_messages("Which db?", "2026-03-05", ["We use SQLite."]),
                                 purpose="answer")[1]
        OpenAIEmbedder(client).embed(["a", "b"])
        server.enqueue_faults(Fault.http(500), Fault.http(500))
        failed = client.complete([{"role": "user", "content": "fails"}])[1]
        server.reply = "not json"
        case = JudgeCase(question="q", answer="a", kind="current", expect_abstain=False,
                         in_force=(VersionView(answer="b", valid_from="t1"),))
        with pytest.raises(JudgeError) as err:
            EvolvingReferenceJudge(client, max_parse_retries=0).judge(case)
        texts += [str(err.value), repr(err.value), repr(client), repr(client.as_language_model()),
                  repr(spec), spec.model_dump_json(), repr(answer), answer.model_dump_json(),
                  repr(failed), str(client.ledger.totals())]
        client.close()

    # positive control: the key really was sent
    assert all(r.bearer == key for r in server.requests) and server.request_count >= 5
    assert [r.purpose for r in records] == ["answer", "system", "answer", "judge"]
    texts += [r.model_dump_json() for r in records] + [repr(r) for r in records]
    for text in texts:
        assert key not in text
    files = list(tmp_path.iterdir())
    assert any(f.name == "cache.sqlite" for f in files)
    for path in files:
        data = path.read_bytes()
        assert key.encode() not in data, path.name
        assert b"sk-planted" not in data, path.name
