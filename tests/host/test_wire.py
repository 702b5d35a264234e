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
