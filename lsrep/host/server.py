"""The adapter host process: builds adapters and runs their calls, and nothing else.

It is started by :mod:`lsrep.host.client` with a clean argv (`python -m lsrep.host R W`, the pipe
numbers), a sanitized environment and a fresh working directory, inside its own PID namespace where
the machine allows it. What it receives is what the protocol gives an adapter: the adapter's
target and validated options, the ablation switches, the budget and seed, then calls — turns as
they are replayed, `now`, questions, maintenance and session ends, snapshot/restore/reset. What it
sends back is what the adapter returned: results, fidelity events, digests, or the exception.

Model and embedding calls the adapter makes through `setup.llm` / `setup.embedder` go back to the
harness over the same pipe, so endpoint keys never enter this process.

`CALL_HOOKS` is the per-call extension point: each hook is a function of the call context
(`{"method": ..., "now": datetime | None}`) returning a context manager entered around the
adapter call — e.g. a simulated clock patched inside this process.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from lsrep.host.wire import (
    HostDied,
    decode_call,
    describe_exception,
    encode,
    encoded,
    recv,
    same_result,
    send,
)

CallHook = Callable[[dict[str, Any]], AbstractContextManager[Any]]
CALL_HOOKS: list[CallHook] = []
"""Context managers around every adapter call, outermost first (see the module docstring)."""

STOP_AFTER_ERROR = frozenset({"ingest", "end_session", "reset"})
"""In a batch, a failure of these ends the batch: the engine aborts the unit there too."""

METHODS = frozenset({"reset", "ingest", "query", "end_session", "maintain", "snapshot", "restore",
                     "state_digest", "close"})
CAPABILITIES = ("maintenance_operations", "supports_snapshot", "deterministic", "answers", "context_limit",
                "honours_budget")


class _Channel:
    """The host's end of the pipes; also serves the adapter's model calls back to the harness."""

    def __init__(self, rx: Connection, tx: Connection) -> None:
        self.rx, self.tx = rx, tx
        self.lock = threading.Lock()  # the memory gateway's threads use the pipes too, one at a time

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            send(self.tx, message)

    def send_encoded(self, payload: bytes) -> None:
        """A message already `encoded`."""
        with self.lock:
            self.tx.send_bytes(payload)

    def recv(self) -> dict[str, Any]:
        with self.lock:
            return recv(self.rx, None)

    def callback(self, kind: str, **payload: Any) -> Any:
        with self.lock:
            send(self.tx, {"cb": kind, **payload})
            reply = recv(self.rx, None)
        if "cb_error" in reply:
            from lsrep.host.wire import remote_exception

            raise remote_exception(reply["cb_error"])
        return reply["cb_ok"]


class RemoteLanguageModel:
    """`setup.llm` inside the host: each completion is made by the harness's client."""

    def __init__(self, channel: _Channel) -> None:
        self._channel = channel

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        return self._channel.callback("llm", messages=[dict(m) for m in messages])


class RemoteEmbedder:
    """`setup.embedder` inside the host for an embedder the harness runs (endpoint or local model)."""

    def __init__(self, channel: _Channel, name: str) -> None:
        self._channel = channel
        self.name = name

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = self._channel.callback("embed", texts=list(texts))
        return np.asarray(rows, dtype=np.float64)


class Host:
    """Adapter instances by id, their snapshots by handle, and the loop serving the harness."""

    def __init__(self, channel: _Channel) -> None:
        self.channel = channel
        self.instances: dict[int, Any] = {}
        self.snapshots: dict[int, Any] = {}
        self.next_snapshot = 0
        self.events: list[dict[str, Any]] = []
        self.last_query: dict[int, tuple[Any, int]] = {}
        """Per instance: its last query result sent whole, and that result's sequence number."""
        self.workdir = Path.cwd()
        self.gateway: Any = None

    def serve(self) -> None:
        while True:
            try:
                message = self.channel.recv()
            except HostDied:
                return  # the harness went away: nothing left to serve
            for handle in message.get("release", ()):
                self.snapshots.pop(handle, None)
            op = message["op"]
            if op == "exit":
                if self.gateway is not None:
                    self.gateway.close()
                return
            try:
                reply = getattr(self, f"op_{op}")(message)
            except Exception as exc:  # noqa: BLE001 - reported to the harness, which records it
                reply = {"error": describe_exception(exc)}
            self.channel.send(reply)

    # -- operations ------------------------------------------------------------------------------
    def op_init(self, message: dict[str, Any]) -> dict[str, Any]:
        for entry in reversed(message.get("sys_path", [])):
            if entry not in sys.path:
                sys.path.insert(0, entry)
        for target in message.get("hooks", []):
            module_name, _, attr = target.partition(":")
            CALL_HOOKS.append(getattr(importlib.import_module(module_name), attr))
        return {"ok": {"pid": os.getpid()}}

    def op_build(self, message: dict[str, Any]) -> dict[str, Any]:
        from lsrep.contract import AdapterSetup

        module_name, _, qualname = message["target"].partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        cls = obj
        if message.get("name") and not cls.name:
            cls.name = message["name"]
        ident = len(self.instances)
        state_dir = self.workdir / f"state-{ident}"
        state_dir.mkdir()
        memory_llm, memory_embedder = self._memory_model(message.get("memory"))
        setup = AdapterSetup(
            options=cls.Options.model_validate(message["options"]), disabled=frozenset(message["disabled"]),
            state_dir=state_dir, retrieval_budget=message["retrieval_budget"],
            embedder=self._embedder(message.get("embedder")),
            llm=RemoteLanguageModel(self.channel) if message.get("llm") else None, seed=message["seed"],
            embedding_text=message.get("embedding_text", "content"),
            memory_llm=memory_llm, memory_embedder=memory_embedder,
        )
        from lsrep.host.capture import Capture

        with Capture("build") as captured:
            adapter = cls(setup)
        adapter.bind_events(self._record_event)
        self.instances[ident] = adapter
        caps = {name: _capability(adapter, name) for name in CAPABILITIES}
        return {"ok": {"instance": ident, "capabilities": caps, "diagnostics": captured.rows()}}

    def _memory_model(self, spec: dict[str, Any] | None) -> tuple[Any, Any]:
        """The memory-side handles: a gateway in this process relaying over the pipes to the harness."""
        if not spec:
            return None, None
        from lsrep.memory_model.handles import open_handles

        def forward(kind: str, body: dict[str, Any]) -> dict[str, Any]:
            return self.channel.callback("memory", request=kind, body=body)

        if self.gateway is not None:
            self.gateway.close()
        self.gateway, llm, embedder = open_handles(forward, spec)
        return llm, embedder

    def _embedder(self, spec: dict[str, Any] | None) -> Any:
        if spec is None:
            return None
        if spec["kind"] == "hashing":
            from lsrep.embed.hashing import HashingEmbedder

            return HashingEmbedder(dim=spec["dim"])
        return RemoteEmbedder(self.channel, spec["name"])

    def op_release(self, message: dict[str, Any]) -> dict[str, Any]:
        """Forget a closed instance so this host can serve a later unit as a new one would: the
        instance, its snapshots, its last query, the last simulated time and every file of the
        host's folder go (HOME and TMPDIR are in it; an empty TMPDIR is made again). Only for an
        adapter class that declares `host_reusable` (the harness checks)."""
        self.instances.pop(message["instance"], None)
        self.last_query.pop(message["instance"], None)
        self.snapshots.clear()  # handles keep counting up: a late release of an old one matches nothing
        self.events = []
        if self.gateway is not None:
            self.gateway.close()
            self.gateway = None
        from lsrep.host import clock

        clock.forget()
        for entry in list(self.workdir.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        (self.workdir / "tmp").mkdir()
        if self.instances:
            raise RuntimeError(f"host still holds instance(s) {sorted(self.instances)}")
        return {"ok": True}

    def op_call(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._call(message["instance"], message)

    def op_batch(self, message: dict[str, Any]) -> dict[str, Any]:
        """Calls in order, one reply each as it finishes; ends at the first failure that ends a unit."""
        _prime_embedder(self.instances[message["instance"]], message["calls"])
        done = 0
        # The one hook's clock held over the batch's calls where it can be (`clock.HeldClock`).
        keeps = getattr(CALL_HOOKS[0], "held", None) if len(CALL_HOOKS) == 1 else None
        held = keeps() if keeps is not None else None
        try:
            for call in message["calls"]:
                reply = self._call(message["instance"], call, held)
                done += 1
                self.channel.send_encoded(partial_payload(reply))
                if "error" in reply and call["method"] in STOP_AFTER_ERROR:
                    break
        finally:
            if held is not None:
                held.close()
        return {"ok": done}

    def _call(self, ident: int, call: dict[str, Any], held: Any = None) -> dict[str, Any]:
        adapter = self.instances[ident]
        method = call["method"]
        if method not in METHODS:
            raise ValueError(f"not an adapter method: {method!r}")
        args, kwargs = decode_call(call.get("args", []), call.get("kwargs", {}))
        if method == "restore":
            args = [self.snapshots[args[0]["$snap"]] if isinstance(args[0], dict) else args[0]]
        context = {"method": method, "now": kwargs.get("now")}
        self.events = []
        from lsrep.host.capture import Capture

        captured = Capture(method)
        start = time.perf_counter()
        try:
            if len(CALL_HOOKS) == 1:  # the simulated clock: most runs (no ExitStack to build per call)
                with (CALL_HOOKS[0] if held is None else held.call)(context), captured:
                    result = getattr(adapter, method)(*args, **kwargs)
            else:
                with contextlib.ExitStack() as stack:
                    for hook in CALL_HOOKS:
                        stack.enter_context(hook(context))
                    stack.enter_context(captured)
                    result = getattr(adapter, method)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the harness turns it into a failure row
            return {"error": describe_exception(exc), "events": self.events, "ms": _ms(start),
                    "diagnostics": captured.rows()}
        if method == "snapshot":
            handle = self.next_snapshot
            self.next_snapshot += 1
            self.snapshots[handle] = result
            value: Any = {"$snap": handle}
        elif method == "query":
            value = self._query_value(ident, result)
        else:
            value = encode(result)
        return {"ok": value, "events": self.events, "ms": _ms(start), "diagnostics": captured.rows()}

    def _query_value(self, ident: int, result: Any) -> Any:
        """A query result for the wire: whole and numbered, or, when it is the previous one again
        (`same_result`: ten probes of a checkpoint asked of an unchanged memory), that number."""
        last = self.last_query.get(ident)
        if last is not None and same_result(last[0], result):
            return {"$query_again": last[1]}
        seq = 0 if last is None else last[1] + 1
        self.last_query[ident] = (result, seq)
        return {"$query_seq": [seq, encode(result)]}

    def _record_event(self, event: Any) -> None:
        import json

        # Through JSON with str() for odd values, exactly as the harness stores params in-process.
        self.events.append(json.loads(json.dumps(event.model_dump(), default=str)))


def partial_payload(reply: dict[str, Any]) -> bytes:
    """`encoded({"partial": reply})`, byte for byte; a call that returned nothing, emitted no event and
    logged nothing (most ingests) is written without the encoder's walk over the message."""
    ms = reply.get("ms")
    if (len(reply) == 4 and reply.get("ok", 0) is None and reply.get("events") == [] and type(ms) is float
            and reply.get("diagnostics") == [] and math.isfinite(ms) and list(reply) == _PLAIN_KEYS):
        return b'{"partial": {"ok": null, "events": [], "ms": %b, "diagnostics": []}}' % float.__repr__(ms).encode()
    return encoded({"partial": reply})


_PLAIN_KEYS = ["ok", "events", "ms", "diagnostics"]


def _prime_embedder(adapter: Any, calls: list[dict[str, Any]]) -> None:
    """The batch's turn contents embedded at once, where the adapter embeds turn contents with an
    embedder that can batch (`HashingEmbedder.prime`): its one-turn calls then find them ready."""
    setup = getattr(adapter, "setup", None)
    prime = getattr(getattr(setup, "embedder", None), "prime", None)
    if prime is None or getattr(setup, "embedding_text", None) != "content":
        return
    prime([call["args"][0]["$turn"]["content"] for call in calls
           if call["method"] == "ingest" and call.get("args") and isinstance(call["args"][0], dict)
           and "$turn" in call["args"][0]])


def _capability(adapter: Any, name: str) -> Any:
    # A capability may be a property over the options; one that fails to evaluate is unknown (None),
    # as it would only fail later when the harness asked for it in-process.
    try:
        value = getattr(adapter, name)
    except Exception:  # noqa: BLE001
        return None
    return encode(sorted(value) if isinstance(value, (set, frozenset)) else value)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main(argv: list[str]) -> int:
    from multiprocessing.connection import Connection

    from lsrep.collector import for_unit_process

    for_unit_process()  # a host serves one unit: the adapter's ingests build its memory in bursts
    rx = Connection(int(argv[0]), writable=False)
    tx = Connection(int(argv[1]), readable=False)
    Host(_Channel(rx, tx)).serve()
    return 0
