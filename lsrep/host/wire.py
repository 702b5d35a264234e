"""The adapter host's wire format: length-framed JSON over two pipes, and the values it may carry.

JSON in both directions, never pickle: the host runs untrusted adapter code, and unpickling what
it sends would hand it the harness process. Values the protocol needs beyond JSON are tagged:
`{"$dt": iso}` a datetime, `{"$turn": {...}}` a ReplayTurn, `{"$query_json": "..."}` a QueryResult
as pydantic's own JSON (`{"$query": {...}}` when that cannot carry it, e.g. a lone surrogate),
`{"$snap": n}` a snapshot kept inside the host, `{"$foreign": "TypeName"}` a value that is not
what the contract allows (the engine reports it by its type name, as in-process).

A query's result goes as `{"$query_seq": [n, value]}`, the n-th distinct result of that adapter
instance; a result whose fields are the previous one's (the same fragment objects: `same_result`)
goes as `{"$query_again": n}`, and the harness hands out the result it decoded for n again.
"""

from __future__ import annotations

import builtins
import json
import math
import operator
import os
import re
import select
import time
from collections.abc import Sequence
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Any

from lsrep.contract import Participants, QueryResult, ReplayTurn, SnapshotNotSupported

DEFAULT_TIMEOUT_S = 600.0
"""Longest wait for any one message from the host (a call, or one model call it makes)."""


class HostError(RuntimeError):
    """The adapter host broke the protocol, died, or timed out."""


class HostDied(HostError):
    """The host process is gone (it exited, crashed or was killed)."""


class HostTimeout(HostError):
    """The host sent nothing within the timeout; it has been killed."""


_ENCODER = json.JSONEncoder(default=str)
"""`json.dumps(message, default=str)`, one encoder for every message (json.dumps builds one per call
when an argument is not its default)."""


def send(conn: Connection, message: dict[str, Any]) -> None:
    # ensure_ascii keeps lone surrogates as \\udXXX escapes, so they survive the trip.
    conn.send_bytes(encoded(message))


class JSONTexts(list):
    """A list of values already written as JSON text: `encoded` writes them as they are."""


def json_text(value: Any) -> str:
    """A JSON value as `send` writes it (ASCII, lone surrogates escaped)."""
    return _ENCODER.encode(value)


def encoded(message: dict[str, Any]) -> bytes:
    """The bytes `send` writes for a message (inside its frame). A top-level value that is a
    `JSONTexts` (a batch's calls) is written from its texts, after the other keys; the bytes are
    then UTF-8, which the other side's `json.loads` reads as it reads ASCII."""
    texts = [key for key, value in message.items() if type(value) is JSONTexts]
    if not texts:
        return _ENCODER.encode(message).encode("ascii")
    head = _ENCODER.encode({k: v for k, v in message.items() if k not in texts})[:-1]
    tails = [f"{_ENCODER.encode(k)}: [{', '.join(message[k])}]" for k in texts]
    return (head + (", " if len(head) > 1 else "") + ", ".join(tails) + "}").encode("utf-8")


def recv(conn: Connection, timeout: float | None) -> dict[str, Any]:
    """The next message; raises HostTimeout after `timeout` seconds, HostDied on end of file."""
    try:
        if timeout is not None and not conn.poll(timeout):
            raise HostTimeout(f"the adapter host sent nothing for {timeout:g} s")
        data = conn.recv_bytes()
    except (EOFError, OSError) as exc:
        raise HostDied(f"the adapter host process is gone ({type(exc).__name__})") from None
    return json.loads(data)


class FrameReader:
    """`recv` for a pipe the other side writes many small messages to: reads what is there in one
    system call and hands out the messages in order (the frames `Connection.send_bytes` writes: a
    4-byte big-endian length, or -1 and an 8-byte length, then the bytes). Waiting and its timeout
    are `recv`'s: only when no whole message is buffered does it wait, at most `timeout` seconds
    for the next bytes. Nothing else may read the connection once a reader serves it."""

    CHUNK = 1 << 20

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.buf = bytearray()
        self.pos = 0
        self._fd = conn.fileno()
        # One poll object for the reader's life (`Connection.poll` builds a selector per wait):
        # ready on data, end of file or error, as `Connection.poll` is.
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN)

    def _frame(self) -> bytes | None:
        buf, pos = self.buf, self.pos
        if len(buf) - pos < 4:
            return None
        size = int.from_bytes(buf[pos:pos + 4], "big", signed=True)
        start = pos + 4
        if size == -1:
            if len(buf) - start < 8:
                return None
            size = int.from_bytes(buf[start:start + 8], "big")
            start += 8
        if len(buf) - start < size:
            return None
        self.pos = start + size
        return bytes(buf[start:self.pos])

    def recv(self, timeout: float | None, linger: float = 0.0) -> dict[str, Any]:
        """The next message. With `linger` (seconds), a wait that ends on new bytes sleeps that long
        before reading: a host writing a batch's small replies one by one has then written a few
        dozen, taken in one read and one wake-up of this thread instead of one each (the bytes wait
        in the pipe, so nothing is lost if the host dies meanwhile; the timeout is unchanged)."""
        while (data := self._frame()) is None:
            if self.pos:
                del self.buf[:self.pos]
                self.pos = 0
            try:
                if timeout is not None and not self._poller.poll(math.ceil(max(timeout, 0) * 1000)):
                    raise HostTimeout(f"the adapter host sent nothing for {timeout:g} s")
                if linger:
                    time.sleep(linger)
                chunk = os.read(self._fd, self.CHUNK)
            except OSError as exc:
                raise HostDied(f"the adapter host process is gone ({type(exc).__name__})") from None
            if not chunk:
                raise HostDied("the adapter host process is gone (EOFError)")
            self.buf += chunk
        return parse_reply(data)


_PLAIN_HEAD = b'{"partial": {"ok": null, "events": [], "ms": '
_PLAIN_TAIL = b', "diagnostics": []}}'
_JSON_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
"""A JSON number; group 1 or 2 (a fraction, an exponent) makes it a float."""


def parse_reply(data: bytes) -> dict[str, Any]:
    """`json.loads(data)`; a batch's plain partial reply (most of a replay's messages, written by
    `lsrep.host.server.partial_payload`) is read without the JSON parser: its one number by `float`,
    as the parser reads it (`int` without a fraction or exponent)."""
    if data.startswith(_PLAIN_HEAD) and data.endswith(_PLAIN_TAIL):
        number = data[len(_PLAIN_HEAD):-len(_PLAIN_TAIL)]
        match = _JSON_NUMBER.fullmatch(number)
        if match:
            ms = int(number) if match.lastindex is None else float(number)  # JSON reads 7 as an int
            return {"partial": {"ok": None, "events": [], "ms": ms, "diagnostics": []}}
    return json.loads(data)


def same_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """The same objects in the same order. Fragments are immutable, so the same content too."""
    return a is b or (len(a) == len(b) and all(map(operator.is_, a, b)))


def same_result(a: Any, b: Any) -> bool:
    """Two query results that encode the same: plain `QueryResult`s with the same fragment objects
    in the same order and equal other fields."""
    return (type(a) is QueryResult and type(b) is QueryResult and a.answer == b.answer
            and a.context_text == b.context_text and a.truncated_tokens == b.truncated_tokens
            and same_items(a.fragments, b.fragments))


def encode(value: Any) -> Any:
    """A value for the wire (arguments harness → host; results host → harness)."""
    match value:
        case None | bool() | int() | float() | str():
            return value
        case datetime():
            return {"$dt": value.isoformat()}
        case ReplayTurn():
            return {"$turn": value.model_dump(mode="json")}
        case Participants():
            return {"$participants": value.model_dump(mode="json")}
        case QueryResult():
            try:
                # pydantic-core writes (and the harness parses) this much faster than via dicts.
                return {"$query_json": value.model_dump_json()}
            except ValueError:  # e.g. a lone surrogate, which only the dict path carries
                return {"$query": value.model_dump(mode="json")}
        case list() | tuple():
            return [encode(v) for v in value]
        case dict():
            return {str(k): encode(v) for k, v in value.items()}
    return {"$foreign": type(value).__name__}


def decode_call(args: Any, kwargs: Any) -> tuple[Any, Any]:
    """`decode(args), decode(kwargs)`; an ingest's (one turn, `now` keyword) without the walk."""
    if (type(args) is list and len(args) == 1 and type(turn := args[0]) is dict and len(turn) == 1
            and type(body := turn.get("$turn")) is dict and type(kwargs) is dict and len(kwargs) == 1
            and type(now := kwargs.get("now")) is dict and len(now) == 1 and type(iso := now.get("$dt")) is str):
        return [ReplayTurn.model_validate(body)], {"now": datetime.fromisoformat(iso)}
    return decode(args), decode(kwargs)


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, body), = value.items()
            match tag:
                case "$dt":
                    return datetime.fromisoformat(body)
                case "$turn":
                    return ReplayTurn.model_validate(body)
                case "$participants":
                    return Participants.model_validate(body)
                case "$query":
                    return QueryResult.model_validate(body)
                case "$query_json":
                    return _query_from_json(body)
                case "$foreign":
                    return type(str(body), (), {})()
        return {k: decode(v) for k, v in value.items()}
    return value


_last_query: tuple[str, QueryResult] | None = None


def _query_from_json(body: str) -> QueryResult:
    """The QueryResult a `$query_json` body carries; the same text as the last one gives the same
    (immutable) result again instead of validating it afresh.

    A system asked ten probes at one checkpoint usually returns the same context ten times (a
    full-context dump, a summary, recent turns): the text is compared whole, so the result is the
    one `QueryResult.model_validate_json(body)` would build, field for field
    (`tests/host/test_wire.py`). One entry, replaced as a whole, so threads decoding for
    different units at once at worst miss."""
    global _last_query
    last = _last_query
    if last is not None and last[0] == body:
        return last[1]
    result = QueryResult.model_validate_json(body)
    _last_query = (body, result)
    return result


# -- exceptions across the boundary -------------------------------------------------------------------
def describe_exception(exc: BaseException) -> dict[str, str]:
    """Type name, message, and the host-side traceback text (for the failures table)."""
    import traceback

    trace = "".join(traceback.format_exception(exc)).rstrip()
    return {"type": type(exc).__name__, "message": str(exc)[:4000], "traceback": trace[-20000:]}


_REMOTE: dict[str, type[Exception]] = {}


def remote_exception(info: dict[str, str]) -> Exception:
    """An exception raised in the host, rebuilt with its type name and exact message.

    Built-in exception types and `SnapshotNotSupported` keep their class (so `except` clauses that
    catch them behave as in-process); other types become a subclass of Exception of the same name.
    """
    name, message = str(info.get("type", "Exception")), str(info.get("message", ""))
    cls = _REMOTE.get(name)
    if cls is None:
        base = getattr(builtins, name, None)
        if name == "SnapshotNotSupported":
            base = SnapshotNotSupported
        elif not (isinstance(base, type) and issubclass(base, Exception)):
            base = Exception
        cls = type(name, (base,), {"__str__": lambda self: self.args[0] if self.args else "",
                                   "__module__": "lsrep.host.remote"})
        _REMOTE[name] = cls
    exc = cls.__new__(cls)
    exc.args = (message,)
    exc.host_traceback = str(info.get("traceback") or "")
    return exc
