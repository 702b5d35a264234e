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
