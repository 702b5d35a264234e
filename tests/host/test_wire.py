"""The wire's `$query_json` decoding: a body equal to the last one gives the last result back,
and that result equals what validating the body afresh builds (the plain rule)."""

from __future__ import annotations

import json

from lsrep.contract import Fragment, QueryResult
from lsrep.host import wire


def _result(n: int, *, answer: str | None = None, suffix: str = "") -> QueryResult:
    return QueryResult(fragments=tuple(Fragment(text=f"turn {i}{suffix}", source_turn_ids=(f"t{i}",), tokens=2,
                                                mechanisms=("m",), kind="transcript", score=i / 3)
                                       for i in range(n)), answer=answer, truncated_tokens=n)


def _through_the_wire(result: QueryResult) -> QueryResult:
    # As the host sends it and the harness reads it: encoded, framed as JSON, parsed, decoded.
    return wire.decode(json.loads(json.dumps({"ok": wire.encode(result)}))["ok"])


def test_a_repeated_body_decodes_to_what_validating_it_afresh_gives():
    sequence = [_result(3), _result(3), _result(4), _result(3), _result(3, answer="x"), _result(3, answer="x"),
                _result(3, suffix="!"), _result(3, suffix="?"), _result(0), _result(0), _result(3)]
    previous = None
    for result in sequence:
        body = wire.encode(result)["$query_json"]
        got = _through_the_wire(result)
        assert got == QueryResult.model_validate_json(body) == result
        assert got.model_dump() == result.model_dump()
        if previous is not None and previous[0] == body:
            assert got is previous[1]  # reused, not rebuilt
        elif previous is not None:
            assert got is not previous[1]
        previous = (body, got)


def test_the_dict_path_is_not_memoised():
    # A lone surrogate cannot go through pydantic's JSON: the `$query` dict path carries it.
    result = QueryResult(fragments=(Fragment(text="bad \udc80 text"),))
    encoded = wire.encode(result)
    assert "$query" in encoded
    assert _through_the_wire(result) == result


def test_a_repeated_result_goes_as_a_reference_and_comes_back_equal(monkeypatch):
    # Through a real host: every query's result equals the adapter's, in-process; the ones whose
    # fields are the previous result's (the same fragment objects) crossed as `$query_again`.
    from datetime import UTC, datetime

    from lsrep.contract import ReplayTurn
    from lsrep.harness import validate_condition
    from lsrep.host.client import HostedAdapter, open_hosted
    from tests.host.host_adapters import RepeatingAdapter

    now = datetime(2026, 3, 2, 12, tzinfo=UTC)
    seen: list[str] = []
    plain = HostedAdapter._query_result

    def spy(self, value):
        seen.append(next(iter(value)))
        return plain(self, value)

    monkeypatch.setattr(HostedAdapter, "_query_result", spy)
    cls, _ = validate_condition("tests.host.host_adapters:RepeatingAdapter", {}, (), "c")
    hosted = open_hosted(cls, {}, disable=(), retrieval_budget=None, embedder=None, llm=None, seed=0)
    local = RepeatingAdapter.__new__(RepeatingAdapter)
    try:
        for adapter in (hosted, local):
            adapter.reset(conversation_id="c", now=now)
        script = ["q", "q", "turn", "q", "q", "copy", "copy", "q", "answer a", "answer a", "answer b", "q", "turn",
                  "q"]
        for i, step in enumerate(script):
            if step == "turn":
                turn = ReplayTurn(turn_id=f"t{i}", session_id="s", conversation_id="c", index=i, timestamp=now,
                                  role="user", content=f"turn {i}")
                hosted.ingest(turn, now=now)
                local.ingest(turn, now=now)
                continue
            got, want = hosted.query(step, now=now), local.query(step, now=now)
            assert got == want and got.model_dump() == want.model_dump(), step
    finally:
        hosted.close()
    assert seen == ["$query_seq", "$query_again", "$query_seq", "$query_again", "$query_seq", "$query_seq",
                    "$query_seq", "$query_seq", "$query_again", "$query_seq", "$query_seq", "$query_seq"]


def test_a_reference_to_a_result_not_received_is_a_harness_error():
    import pytest

    from lsrep.host.client import HostedAdapter
    from lsrep.host.wire import HostError

    adapter = HostedAdapter.__new__(HostedAdapter)
    adapter._last_query = None
    with pytest.raises(HostError):
        adapter._query_result({"$query_again": 0})
    result = adapter._query_result({"$query_seq": [3, wire.encode(_result(2))]})
    assert adapter._query_result({"$query_again": 3}) is result
    with pytest.raises(HostError):
        adapter._query_result({"$query_again": 2})
