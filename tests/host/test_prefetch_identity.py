"""A prefetched call replayed with the very objects it was prefetched with skips re-encoding
(`lsrep.host.client._same_objects`): that shortcut must only ever say "same" where the wire
forms (the plain rule, `_wire_args`) are equal, and must refuse mutable containers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from lsrep.contract import ReplayTurn
from lsrep.host.client import _call_text, _same_objects, _wire_args

NOW = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def _turn(content: str = "hello", now: datetime = NOW) -> ReplayTurn:
    return ReplayTurn(turn_id="s1:t000", session_id="s1", conversation_id="c", index=0, timestamp=now,
                      role="user", speaker="Ana", content=content)


def test_same_objects_implies_the_same_wire_form():
    turn, other_tz = _turn(), NOW.astimezone(timezone(timedelta(hours=2)))
    cases = [((turn,), {"now": NOW}), (("s1",), {"now": NOW}), (("op", 3, 1.5, None, True), {}),
             ((turn,), {"now": other_tz})]
    for args, kwargs in cases:
        assert _same_objects(args, kwargs, tuple(args), dict(kwargs))
        assert _wire_args(args, kwargs) == _wire_args(tuple(args), dict(kwargs))


def test_equal_but_distinct_or_mutable_values_are_left_to_the_plain_rule():
    turn = _turn()
    # An equal turn built again, a datetime equal as an instant but written in another zone, a list:
    # none is taken on identity (the caller then compares the encodings).
    assert not _same_objects((turn,), {}, (_turn(),), {})
    assert not _same_objects((), {"now": NOW}, (), {"now": NOW.astimezone(timezone(timedelta(hours=2)))})
    assert _wire_args((), {"now": NOW}) != _wire_args((), {"now": NOW.astimezone(timezone(timedelta(hours=2)))})
    items = ["a"]
    assert not _same_objects((items,), {}, (items,), {})
    assert not _same_objects((turn,), {"now": NOW}, (turn,), {})  # different keywords
    assert not _same_objects((turn,), {}, (turn, turn), {})


def test_a_replayed_call_that_differs_from_the_prefetched_one_is_refused():
    import pytest

    from lsrep.host.client import HostedAdapter
    from lsrep.host.wire import HostError

    adapter = HostedAdapter.__new__(HostedAdapter)
    from collections import deque

    adapter._queued = deque()
    turn = _turn()
    text = _call_text("ingest", (turn,), {"now": NOW})
    adapter._queued.append(("ingest", text, {"ok": None}, (turn,), {"now": NOW}))
    with pytest.raises(HostError, match="does not match"):
        adapter._call("ingest", (_turn("something else"),), {"now": NOW})


def test_a_replayed_call_equal_to_the_prefetched_one_is_accepted_by_its_json_value():
    """Distinct objects whose wire forms are equal JSON values replay the queued reply, whether the
    texts are the same (an equal turn built again) or differ (a turn subclass goes the plain way)."""
    from collections import deque

    from lsrep.host.client import HostedAdapter

    class Turn(ReplayTurn):
        pass

    turn = _turn("é ☃")
    sub = Turn(**turn.model_dump())
    assert _call_text("ingest", (turn,), {"now": NOW}) != _call_text("ingest", (sub,), {"now": NOW})
    for again in (_turn("é ☃"), sub):
        adapter = HostedAdapter.__new__(HostedAdapter)
        adapter._queued = deque([("ingest", _call_text("ingest", (turn,), {"now": NOW}),
                                  {"ok": None, "events": [], "ms": 1.5, "diagnostics": []}, (turn,), {"now": NOW})])
        adapter.handed_on, adapter.host_diagnostics, adapter._sink = False, [], None
        assert adapter._call("ingest", (again,), {"now": NOW}) is None
        assert adapter.last_ms == 1.5 and not adapter._queued


def test_the_ingest_shortcut_of_wire_args_equals_encode():
    from lsrep.host.wire import encode

    naive = datetime(2026, 1, 1, 9, 0)
    for turn, now in [(_turn(), NOW), (_turn("é \\udc80 ☃"), NOW.astimezone(timezone(timedelta(hours=-5)))),
                      (_turn("x", naive), naive)]:
        assert _wire_args((turn,), {"now": now}) == (encode([turn]), encode({"now": now}))


def test_a_batch_call_text_is_the_plain_encoding_as_a_json_value():
    """`_call_text` (pydantic's writer for an ingest's turn) gives the JSON value of the plain rule for
    every shape: non-ASCII, quotes, backslashes, control and separator characters, a lone surrogate
    (which pydantic refuses: the plain rule writes it), other zones, naive times, other calls."""
    import json

    from lsrep.host.wire import JSONTexts, encoded

    naive = datetime(2026, 1, 1, 9, 0)
    cases = [("ingest", (_turn(),), {"now": NOW}),
             ("ingest", (_turn('é "q" \\ \x00 \u2028 ☃ \U0001F600'),), {"now": NOW.astimezone(timezone(timedelta(hours=-5)))}),
             ("ingest", (_turn("x \udc80 y"),), {"now": NOW}),
             ("ingest", (_turn("x", naive),), {"now": naive}),
             ("end_session", ("s1",), {"now": NOW}), ("maintain", ("consolidate",), {"now": NOW})]
    for method, args, kwargs in cases:
        wire_args, wire_kwargs = _wire_args(args, kwargs)
        text = _call_text(method, args, kwargs)
        assert json.loads(text) == {"method": method, "args": wire_args, "kwargs": wire_kwargs}
        spliced = encoded({"op": "batch", "instance": 3, "calls": JSONTexts([text, text])})
        assert json.loads(spliced) == {"op": "batch", "instance": 3, "calls": [json.loads(text)] * 2}
    assert json.loads(encoded({"calls": JSONTexts([])})) == {"calls": []}
