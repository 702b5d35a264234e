"""The harness's side of the adapter host: starting the process, and a proxy with the adapter's face.

:class:`HostProcess` starts one host (see :mod:`lsrep.host.server`) and talks to it; every receive
has a timeout, a host that dies or stalls raises :class:`HostError` (which the engine's guarded
wrapper records like any adapter failure), and once dead every later call fails at once.
:class:`HostedAdapter` is what the engine and the conformance suite hold instead of the adapter:
the same methods and capabilities, each call a message. A run of ingest / session-end /
maintenance calls between checkpoints can be sent as one batch (:meth:`HostedAdapter.prefetch`)
and is then replayed call by call, with the host's own timings and events, as if made one at a time.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from collections import deque
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from lsrep.contract import EventSink, FidelityEvent, MechanismSpec, MemoryAdapter, ReplayTurn
from lsrep.host.capture import merge as merge_diagnostics
from lsrep.host.launch import import_path, zygote
from lsrep.host.reuse import IDLE, release, reuse_key
from lsrep.host.wire import (
    DEFAULT_TIMEOUT_S,
    FrameReader,
    HostDied,
    HostError,
    HostTimeout,
    JSONTexts,
    decode,
    describe_exception,
    encode,
    json_text,
    remote_exception,
    send,
)

BATCH_LINGER_S = 0.002
"""How long a batch's reader lets replies gather before reading them (`FrameReader.recv`): a host
answers an ingest in ~0.1-0.2 ms, so a read takes ten or more replies; the batch's last reply comes
at most this much later."""


class HostProcess:
    """One adapter host process, forked by this process's zygote, and the pipes to it."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S, llm: Any = None, embedder: Any = None,
                 preload: str | None = None, memory: Any = None, grants: tuple[str, ...] = ()) -> None:
        self.timeout = timeout
        self.llm, self.embedder = llm, embedder
        self.memory = memory
        """The unit's `lsrep.memory_model.relay.MemoryRelay` (serves the host's memory gateway), or None."""
        self.workdir = Path(tempfile.mkdtemp(prefix="lsrep-host-"))
        self.zygote = zygote()
        if preload:
            self.zygote.preload(preload)
        self.isolation = self.zygote.isolation
        to_host_r, to_host_w = os.pipe()
        from_host_r, from_host_w = os.pipe()
        try:
            self.child = self.zygote.spawn(self.workdir, (to_host_r, from_host_w), preload, grants)
        finally:
            os.close(to_host_r)
            os.close(from_host_w)
        self.tx = Connection(to_host_w, readable=False)
        self.rx = Connection(from_host_r, writable=False)
        self.replies = FrameReader(self.rx)
        """The host's messages: a batch's replies come hundreds at a time, read together."""
        self.dead: str | None = None
        self.release: list[int] = []
        self.pid = self.request({"op": "init", "sys_path": []})["pid"]

    def start_path(self, entries: list[str], hooks: tuple[str, ...] = ()) -> None:
        """Extend the host's import path; register call hooks (`module:function`, see server.CALL_HOOKS)."""
        self.request({"op": "init", "sys_path": entries, "hooks": list(hooks)})

    # -- messages --------------------------------------------------------------------------------
    def request(self, message: dict[str, Any]) -> Any:
        """Send one request and serve model calls until its reply; `ok` value, or raise its error."""
        reply = self.exchange(message)
        if "error" in reply:
            raise remote_exception(reply["error"])
        return reply["ok"]

    def exchange(self, message: dict[str, Any], on_partial=None, linger: float = 0.0) -> dict[str, Any]:
        """Send a message and read until its reply, serving the host's model calls meanwhile; a batch
        reads its partial replies with `linger` (`FrameReader.recv`) until the host first makes a
        model call, which is then answered without delay, as is every later one."""
        if self.dead is not None:
            raise HostDied(self.dead)
        if self.release:
            message = {**message, "release": self.release}
            self.release = []
        try:
            send(self.tx, message)
            while True:
                reply = self.replies.recv(self.timeout, linger)
                if "cb" in reply:
                    linger = 0.0
                    send(self.tx, self._serve_callback(reply))
                elif "partial" in reply and on_partial is not None:
                    on_partial(reply["partial"])
                else:
                    return reply
        except HostTimeout as exc:
            self.kill(f"{exc}; killed it (during {message.get('method') or message['op']})")
            raise HostTimeout(self.dead) from None
        except (HostDied, BrokenPipeError, OSError) as exc:
            self.kill(f"the adapter host died during {message.get('method') or message['op']} "
                      f"({type(exc).__name__})")
            raise HostDied(self.dead) from None

    def _serve_callback(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            if request["cb"] == "llm":
                if self.llm is None:
                    raise HostError("the adapter called setup.llm, but this condition gives it no model")
                return {"cb_ok": self.llm.complete(request["messages"])}
            if request["cb"] == "embed":
                if self.embedder is None:
                    raise HostError("the adapter called setup.embedder, but this condition gives it none")
                return {"cb_ok": [list(map(float, row)) for row in self.embedder.embed(request["texts"])]}
            if request["cb"] == "memory":
                if self.memory is None:
                    raise HostError("the adapter called its memory model, but this condition gives it none")
                return {"cb_ok": self.memory.serve(str(request.get("request")), request.get("body") or {})}
            raise HostError(f"unknown callback {request['cb']!r}")
        except Exception as exc:  # noqa: BLE001 - the adapter sees its model call fail, as in-process
            return {"cb_error": describe_exception(exc)}

    # -- lifetime --------------------------------------------------------------------------------
    def kill(self, reason: str) -> None:
        self.dead = self.dead or reason
        self.zygote.kill(self.child)
        self._reap()

    def close(self) -> None:
        if self.dead is None:
            try:
                send(self.tx, {"op": "exit"})
                self.rx.poll(10)  # the host closes its end as it exits
            except OSError:
                pass
            self.dead = "the adapter host was closed"
            self._reap()
            return
        self._reap()

    def _reap(self) -> None:
        for conn in (self.tx, self.rx):
            try:
                conn.close()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)


class SnapshotHandle:
    """A snapshot kept inside the host; released there when the harness drops this handle."""

    def __init__(self, host: HostProcess, handle: int) -> None:
        self.handle = handle
        weakref.finalize(self, host.release.append, handle)


class HostedAdapter:
    """An adapter living in a host process, with the methods and capabilities the harness uses."""

    handed_on = False
    """Closed, and its host kept for a later unit (`host_reusable`): no call may reach it any more."""

    def __init__(self, host: HostProcess, cls: type[MemoryAdapter], *, options: dict[str, Any], disable: tuple[str, ...],
                 retrieval_budget: int | None, seed: int, owns_host: bool = True,
                 embedding_text: str = "content", reuse_key: tuple | None = None) -> None:
        self.host, self.cls, self.owns_host = host, cls, owns_host
        self.reuse_key = reuse_key
        """Set when the host may serve a later unit after this adapter's close (`host_reusable`)."""
        self.name, self.version, self.Options = cls.name, cls.version, cls.Options
        self.mechanisms: tuple[MechanismSpec, ...] = cls.mechanisms
        self.disabled = frozenset(disable)
        self._sink: EventSink | None = None
        self._queued: deque[tuple[str, Any, dict[str, Any]]] = deque()
        self._last_query: tuple[int, Any] | None = None
        """The last query result the host sent whole, with its sequence number (`$query_again`)."""
        self.last_ms = 0.0
        from lsrep.embed.hashing import HashingEmbedder

        embedder = host.embedder
        spec = None if embedder is None else (
            {"kind": "hashing", "dim": embedder.dim} if type(embedder) is HashingEmbedder
            else {"kind": "remote", "name": embedder.name})
        memory = host.memory
        if memory is not None:
            memory.begin("build")
        built = host.request({
            "op": "build", "memory": None if memory is None else memory.public(), "target": f"{cls.__module__}:{cls.__qualname__}", "name": cls.name,
            "options": encode(dict(options)), "disabled": sorted(disable),
            "retrieval_budget": retrieval_budget, "seed": seed, "embedder": spec, "llm": host.llm is not None,
            "embedding_text": embedding_text,
        })
        if memory is not None:
            memory.end()
        self.instance = built["instance"]
        self.host_diagnostics: list[dict[str, Any]] = []
        """Warnings and log records the adapter emitted (lsrep.host.capture), merged over its calls."""
        merge_diagnostics(self.host_diagnostics, built.get("diagnostics", []))
        caps = built["capabilities"]
        self.maintenance_operations = frozenset(caps["maintenance_operations"] or ())
        self.supports_snapshot, self.deterministic = caps["supports_snapshot"], caps["deterministic"]
        self.answers, self.context_limit = caps["answers"], caps["context_limit"]
        self.honours_budget = caps["honours_budget"]

    # -- the adapter's methods -------------------------------------------------------------------
    def reset(self, *, conversation_id: str, now, participants=None) -> None:
        kwargs = {"conversation_id": conversation_id, "now": now}
        if participants is not None:  # only to an adapter whose reset takes it (the engine checks)
            kwargs["participants"] = participants
        return self._call("reset", (), kwargs)

    def ingest(self, turn, *, now) -> None:
        return self._call("ingest", (turn,), {"now": now})

    def query(self, question: str, *, now):
        return self._call("query", (question,), {"now": now})

    def end_session(self, session_id: str, *, now) -> None:
        return self._call("end_session", (session_id,), {"now": now})

    def maintain(self, operation: str, *, now) -> None:
        return self._call("maintain", (operation,), {"now": now})

    def snapshot(self) -> SnapshotHandle:
        value = self._call("snapshot", (), {})
        return SnapshotHandle(self.host, value["$snap"])

    def restore(self, snapshot: Any) -> None:
        arg = {"$snap": snapshot.handle} if isinstance(snapshot, SnapshotHandle) else snapshot
        return self._call("restore", (arg,), {})

    def state_digest(self) -> str:
        return self._call("state_digest", (), {})

    def close(self) -> None:
        self._queued.clear()
        closed = False
        try:
            if self.host.dead is None:
                self._call("close", (), {})
                closed = True
        finally:
            if self.owns_host:
                if not (closed and self.reuse_key is not None and release(self)):
                    self.host.close()

    def terminate(self) -> None:
        """Stop the host whatever state it is in (idempotent)."""
        if self.owns_host:
            self.host.close()

    # -- events and switches, as on MemoryAdapter --------------------------------------------------
    def bind_events(self, sink: EventSink | None) -> None:
        self._sink = sink

    def enabled(self, mechanism: str) -> bool:
        return mechanism not in self.disabled

    def mechanism_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.mechanisms)

    # -- batching ------------------------------------------------------------------------------------
    def prefetch(self, calls: list[tuple[str, tuple, dict[str, Any]]]) -> None:
        """Run these calls in the host now, in one message; the matching calls then replay the results.

        The host stops at the first failing ingest, session end or reset, as the engine does.
        """
        if self._queued:
            raise HostError("prefetch while earlier prefetched calls are still unconsumed")
        if not calls:
            return
        keys = [_call_text(method, args, kwargs) for method, args, kwargs in calls]
        replies: list[dict[str, Any]] = []
        memory = self.host.memory

        def answered(reply: dict[str, Any]) -> None:
            # Model calls the host relays between two replies belong to the next call of the batch.
            replies.append(reply)
            if memory is not None:
                if len(replies) < len(calls):
                    memory.begin(calls[len(replies)][0], calls[len(replies)][1], calls[len(replies)][2])
                else:
                    memory.end()

        if memory is not None:
            memory.begin(*calls[0])
        try:
            self.host.exchange({"op": "batch", "instance": self.instance, "calls": JSONTexts(keys)},
                               on_partial=answered, linger=BATCH_LINGER_S)
        except HostError:
            pass  # the calls answered are replayed; the next one meets the dead host and fails there
        finally:
            if memory is not None:
                memory.end()
        for (method, args, kwargs), key, reply in zip(calls, keys, replies, strict=False):
            self._queued.append((method, key, reply, args, kwargs))

    def _call(self, method: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        self.last_ms = 0.0
        if self.handed_on:
            raise HostError(f"{method} after the adapter was closed and its host handed on (harness bug)")
        if self._queued:
            q_method, q_text, reply, q_args, q_kwargs = self._queued.popleft()
            # The engine replays a prefetched call with the very objects it prefetched (immutable
            # turns, the same datetimes): their wire form is the one already sent. Any other
            # argument is encoded and compared as JSON values (texts can differ for equal values).
            if not (q_method == method and _same_objects(q_args, q_kwargs, args, kwargs)) and (
                    q_text != (text := _call_text(method, args, kwargs)) and json.loads(q_text) != json.loads(text)):
                self._queued.clear()
                raise HostError(f"prefetched {q_method} does not match the call {method} (harness bug)")
        else:
            wire = _wire_args(args, kwargs)
            memory = self.host.memory
            if memory is not None:
                memory.begin(method, args, kwargs)
            try:
                reply = self.host.exchange({"op": "call", "instance": self.instance, "method": method,
                                            "args": wire[0], "kwargs": wire[1]})
            finally:
                if memory is not None:
                    memory.end()
        self.last_ms = float(reply.get("ms", 0.0))
        merge_diagnostics(self.host_diagnostics, reply.get("diagnostics", []))
        if self._sink is not None:
            for event in reply.get("events", ()):
                self._sink(FidelityEvent.model_validate(event))
        if "error" in reply:
            raise remote_exception(reply["error"])
        if method == "query":
            return self._query_result(reply["ok"])
        return decode(reply["ok"]) if method != "snapshot" else reply["ok"]

    def _query_result(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            if "$query_seq" in value:
                seq, body = value["$query_seq"]
                result = decode(body)
                self._last_query = (seq, result)
                return result
            if "$query_again" in value:
                last = self._last_query
                if last is None or last[0] != value["$query_again"]:
                    raise HostError(f"the host referred to query result {value['$query_again']!r}, but the last "
                                    f"one received is {None if last is None else last[0]!r} (harness bug)")
                return last[1]
        return decode(value)


def _wire_args(args: tuple, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    if len(args) == 1 and type(args[0]) is ReplayTurn and kwargs.keys() == {"now"} and type(kwargs["now"]) is datetime:
        # An ingest (most calls of a replay), encoded as `encode` does it without its type dispatch.
        return [{"$turn": args[0].model_dump(mode="json")}], {"now": {"$dt": kwargs["now"].isoformat()}}
    return encode(list(args)), encode(kwargs)


def _call_text(method: str, args: tuple, kwargs: dict[str, Any]) -> str:
    """A call of a batch as JSON text: `{"method", "args", "kwargs"}` with `_wire_args`'s values.

    An ingest (most calls of a replay) is written by pydantic's JSON writer for its turn (a third of
    the time of building the turn's dict and encoding it; the same JSON value, in UTF-8 rather than
    ASCII escapes); a turn that writer refuses (a lone surrogate) goes through the plain rule."""
    if len(args) == 1 and type(args[0]) is ReplayTurn and kwargs.keys() == {"now"} and type(kwargs["now"]) is datetime:
        try:
            turn = args[0].model_dump_json()
        except ValueError:
            turn = json_text(args[0].model_dump(mode="json"))
        return (f'{{"method": {json_text(method)}, "args": [{{"$turn": {turn}}}], '
                f'"kwargs": {{"now": {{"$dt": {json_text(kwargs["now"].isoformat())}}}}}}}')
    wire_args, wire_kwargs = _wire_args(args, kwargs)
    return json_text({"method": method, "args": wire_args, "kwargs": wire_kwargs})


_IMMUTABLE = (str, int, float, bool, type(None), datetime, ReplayTurn)
"""Values whose wire form is fixed by their identity (`encode` of the same object is the same):
frozen or immutable types. A list or dict argument is never taken on identity."""


def _same_objects(a_args: tuple, a_kwargs: dict[str, Any], b_args: tuple, b_kwargs: dict[str, Any]) -> bool:
    """Whether two calls' arguments are the same immutable objects, key for key (then their wire
    forms are equal without encoding either)."""
    return (len(a_args) == len(b_args) and a_kwargs.keys() == b_kwargs.keys()
            and all(x is y and type(x) in _IMMUTABLE for x, y in zip(a_args, b_args, strict=True))
            and all(a_kwargs[k] is b_kwargs[k] and type(b_kwargs[k]) in _IMMUTABLE for k in b_kwargs))


def open_hosted(cls: type[MemoryAdapter], options: dict[str, Any], *, disable: tuple[str, ...], retrieval_budget: int | None,
                embedder: Any, llm: Any, seed: int, timeout: float = DEFAULT_TIMEOUT_S,
                hooks: tuple[str, ...] = (), embedding_text: str = "content", memory: Any = None) -> HostedAdapter:
    """Start a host for one adapter instance (it stops when the adapter is closed or terminated).

    `options` are the condition's options as written; the host validates them with the adapter's
    `Options` model exactly as the harness did. `hooks` are call hooks to run in the host around
    every adapter call (`module:function` taking the call context, returning a context manager).
    """
    from lsrep.host.sandbox import option_files

    grants = option_files(options)
    key = reuse_key(cls, grants, hooks, llm, embedder, memory, timeout)
    reused = IDLE.take(key) if key is not None else None
    if reused is not None:
        # A host that served an earlier unit of this configuration and forgot it (`Host.op_release`);
        # if it cannot build (e.g. its fork server is gone), a new host is started as usual.
        reused.embedder, reused.memory = embedder, memory  # the unit's (an inactive relay books nothing)
        try:
            return HostedAdapter(reused, cls, options=options, disable=disable, retrieval_budget=retrieval_budget,
                                 seed=seed, embedding_text=embedding_text, reuse_key=key)
        except Exception:  # noqa: BLE001 - the same build is tried in a new host, which reports its failure
            reused.close()
    host = HostProcess(timeout=timeout, llm=llm, embedder=embedder, preload=cls.__module__, memory=memory,
                       grants=grants)
    try:
        host.start_path(import_path(cls), hooks)
        return HostedAdapter(host, cls, options=options, disable=disable, retrieval_budget=retrieval_budget,
                             seed=seed, embedding_text=embedding_text, reuse_key=key)
    except HostError:
        host.close()
        raise
    except Exception as exc:
        host.close()
        # E.g. a class importable only in the harness (defined in a function or in __main__).
        raise HostError(f"the adapter host could not build {cls.__module__}:{cls.__qualname__}: "
                        f"{type(exc).__name__}: {exc}") from None
    except BaseException:
        host.close()
        raise
