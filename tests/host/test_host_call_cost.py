"""The adapter host's per-call shortcuts give what the plain code gives: the log capture's one
handler (records reach the open capture only), and a plain partial reply written without the
encoder (byte for byte its encoding)."""

from __future__ import annotations

import json
import logging
import math
import warnings

from lsrep.host.capture import Capture
from lsrep.host.server import partial_payload
from lsrep.host.wire import encoded


def test_each_capture_gets_its_own_calls_records_and_none_after_it_closes():
    log = logging.getLogger("chatty.test")
    root = logging.getLogger()
    before = root.handlers[:]
    with Capture("ingest") as first:
        log.warning("one %s", "a")
        log.info("below the level")
        warnings.warn("careful", UserWarning, stacklevel=1)
    assert root.handlers == before
    log.warning("between calls")  # no capture open: not recorded anywhere
    with Capture("query") as second:
        log.error("two")
        log.error("two")
    log.warning("after")
    assert [(r["kind"], r["message"], r["count"], r["method"]) for r in first.rows()] == [
        ("log", "one a", 1, "ingest"), ("warning", "careful", 1, "ingest")]
    assert [(r["kind"], r["level"], r["message"], r["count"], r["method"]) for r in second.rows()] == [
        ("log", "error", "two", 2, "query")]


def test_a_capture_opened_inside_another_gives_the_outer_one_back_its_records():
    log = logging.getLogger("chatty.test")
    with Capture("build") as outer:
        with Capture("ingest") as inner:
            log.warning("inner")
        log.warning("outer")
    assert [r["message"] for r in inner.rows()] == ["inner"]
    assert [r["message"] for r in outer.rows()] == ["outer"]


def test_a_plain_partial_reply_is_its_encoding_byte_for_byte():
    for ms in (0.0, 1.5, 0.123456789, 1e-07, 12345678.9, 1e22, 3.0):
        reply = {"ok": None, "events": [], "ms": ms, "diagnostics": []}
        assert partial_payload(reply) == encoded({"partial": reply})
        assert json.loads(partial_payload(reply)) == {"partial": reply}


def test_any_other_reply_goes_through_the_encoder():
    event = {"kind": "mechanism", "params": {"a": 1}}
    diag = {"kind": "log", "source": "x", "level": "warning", "message": "m", "count": 1, "method": "ingest"}
    for reply in ({"ok": "d1", "events": [], "ms": 1.0, "diagnostics": []},
                  {"ok": None, "events": [event], "ms": 1.0, "diagnostics": []},
                  {"ok": None, "events": [], "ms": 1.0, "diagnostics": [diag]},
                  {"ok": None, "events": [], "ms": 1, "diagnostics": []},
                  {"ok": None, "events": [], "ms": math.inf, "diagnostics": []},
                  {"ok": False, "events": [], "ms": 1.0, "diagnostics": []},
                  {"error": {"type": "ValueError", "message": "m", "traceback": "t"}, "events": [], "ms": 1.0,
                   "diagnostics": []},
                  {"events": [], "ok": None, "ms": 1.0, "diagnostics": []}):
        assert partial_payload(reply) == encoded({"partial": reply}), reply


def test_a_reply_is_read_as_the_json_parser_reads_it():
    """`parse_reply` (the harness's reader of host messages) equals `json.loads` on plain partial
    replies and on everything near them: numbers JSON writes differently or refuses, other replies."""
    import pytest

    from lsrep.host.wire import parse_reply

    plain = [partial_payload({"ok": None, "events": [], "ms": ms, "diagnostics": []})
             for ms in (0.0, 1.5, 0.123456789, 1e-07, 1e22, 12345678.9)]
    head, tail = b'{"partial": {"ok": null, "events": [], "ms": ', b', "diagnostics": []}}'
    near = [head + n + tail for n in (b"-0", b"-2.5", b"1E5", b"1e+5", b"2.5e-3", b"7", b" 1", b"NaN", b"Infinity")]
    others = [encoded({"partial": {"ok": "d", "events": [], "ms": 1.0, "diagnostics": []}}),
              encoded({"partial": {"ok": None, "events": [{"a": 1}], "ms": 1.0, "diagnostics": []}}),
              encoded({"ok": 3}), encoded({"cb": "llm", "messages": []})]
    for data in plain + near + others:
        got, want = parse_reply(data), json.loads(data)
        assert json.dumps(got) == json.dumps(want), data  # NaN compares unequal to itself: by text
        assert type(got["partial"]["ms"] if "partial" in got else 0) is type(want["partial"]["ms"] if "partial" in want else 0)
    for bad in (b"1_0", b"01", b"1.", b".5", b"+1", b"0x10", b"1e", b"nan", b"inf", b"1 2", b""):
        with pytest.raises(json.JSONDecodeError):
            json.loads(head + bad + tail)
        with pytest.raises(json.JSONDecodeError):
            parse_reply(head + bad + tail)


def test_an_ingest_call_decodes_as_the_plain_walk_decodes_it():
    """`decode_call` equals `decode(args), decode(kwargs)`, value and type, for ingests (any zone, a
    naive time, a lone surrogate) and for the shapes it leaves to the walk."""
    from datetime import UTC, datetime, timedelta, timezone

    from lsrep.contract import ReplayTurn
    from lsrep.host.wire import decode, decode_call, encode

    def turn(content, ts):
        return ReplayTurn(turn_id="s1:t0", session_id="s1", conversation_id="c", index=0, timestamp=ts,
                          role="user", speaker=None, content=content)

    now = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    plus2, naive = now.astimezone(timezone(timedelta(hours=2))), datetime(2026, 1, 1, 9, 0)
    calls = [([turn("hi", now)], {"now": now}), ([turn("é \udc80 ☃", plus2)], {"now": plus2}),
             ([turn("x", naive)], {"now": naive}), (["s1"], {"now": now}), ([turn("x", now)], {}),
             ([turn("x", now)], {"now": now, "extra": 1}), ([turn("x", now), turn("y", now)], {"now": now}),
             ([], {}), ([{"$turn": {"oops": 1}, "b": 2}], {"now": now}),
             ([turn("x", now)], {"now": {"$dt": now.isoformat(), "tag": 1}}), ([turn("x", now)], {"now": "today"})]
    for args, kwargs in calls:
        wire_args, wire_kwargs = json.loads(json.dumps(encode(args))), json.loads(json.dumps(encode(kwargs)))
        got, want = decode_call(wire_args, wire_kwargs), (decode(wire_args), decode(wire_kwargs))
        assert got == want
        assert [type(a) for a in got[0]] == [type(a) for a in want[0]]
        assert {k: (type(v), getattr(v, "tzinfo", None)) for k, v in got[1].items()} == {
            k: (type(v), getattr(v, "tzinfo", None)) for k, v in want[1].items()}


def test_the_plain_messages_skip_the_general_code(monkeypatch):
    """Work, not only values: a plain partial reply is written without the encoder and read without
    the parser, and an ingest's arguments are decoded without the general walk."""
    from datetime import UTC, datetime

    from lsrep.contract import ReplayTurn
    from lsrep.host import server, wire

    plain = {"ok": None, "events": [], "ms": 2.5, "diagnostics": []}
    turn = ReplayTurn(turn_id="t", session_id="s", conversation_id="c", index=0, role="user", content="x",
                      timestamp=datetime(2026, 1, 1, tzinfo=UTC))
    args, kwargs = json.loads(json.dumps(wire.encode([turn]))), json.loads(json.dumps(wire.encode({"now": turn.timestamp})))
    payload = server.partial_payload(plain)
    calls = []
    monkeypatch.setattr(server, "encoded", lambda m: calls.append("encode") or wire.encoded(m))
    monkeypatch.setattr(wire.json, "loads", lambda d: calls.append("loads") or json.JSONDecoder().decode(d.decode()))
    monkeypatch.setattr(wire, "decode", lambda v: calls.append("decode") or v)
    assert server.partial_payload(plain) == payload
    assert wire.parse_reply(payload) == {"partial": plain}
    assert wire.decode_call(args, kwargs) == ([turn], {"now": turn.timestamp})
    assert calls == []
    server.partial_payload({**plain, "ok": 1})
    wire.parse_reply(wire.encoded({"ok": 1}))
    wire.decode_call(["s1"], kwargs)
    assert calls == ["encode", "loads", "decode", "decode"]
