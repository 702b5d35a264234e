"""Adapters for testing the adapter host: one that reports where it runs, one that stalls."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from contextlib import contextmanager
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from lsrep.contract import Fragment, MemoryAdapter, QueryResult, ReplayTurn


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


class IntrospectAdapter(MemoryAdapter):
    """Answers every question with what its process can see of the world around it."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.turns: list[str] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn.turn_id)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        seen = {
            "argv": sys.argv, "cwd": os.getcwd(), "env": sorted(os.environ), "ppid": os.getppid(),
            "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "pid": os.getpid(),
            "state_dir": str(self.setup.state_dir), "llm": self.setup.llm is not None,
            "embedding_text": self.setup.embedding_text,
            "parent_cmdline": _read(f"/proc/{os.getppid()}/cmdline").split("\0"),
            "parent_env": sorted(e.partition("=")[0] for e in _read(f"/proc/{os.getppid()}/environ").split("\0") if e),
        }
        return QueryResult(fragments=(Fragment(text=json.dumps(seen), source_turn_ids=tuple(self.turns[-1:])),))


class StallingAdapter(MemoryAdapter):
    """Never answers a query (a hung system)."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        pass

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass

    def query(self, question: str, *, now: datetime) -> QueryResult:
        time.sleep(3600)
        return QueryResult()


class ModelCallingAdapter(MemoryAdapter):
    """Asks `setup.llm` to summarise each question, and embeds it with `setup.embedder`."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.turns: list[str] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn.turn_id)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        text = self.setup.llm.complete([{"role": "user", "content": question}])
        vector = self.setup.embedder.embed([question])
        return QueryResult(fragments=(Fragment(text=f"{text} | {vector.shape[1]}", source_turn_ids=()),))


SEEN_NOW: list = []
"""Set by `record_now` inside the host around each call."""


@contextmanager
def record_now(context: dict):
    """A call hook: exposes the call's simulated `now` while the adapter runs (as a clock patch would)."""
    SEEN_NOW.append(context["now"])
    try:
        yield
    finally:
        SEEN_NOW.pop()


class HookReadingAdapter(MemoryAdapter):
    """Returns the `now` its host's call hook saw for this query."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        pass

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=(Fragment(text=SEEN_NOW[-1].isoformat() if SEEN_NOW else "no hook"),))


class HostileMessageAdapter(MemoryAdapter):
    """Raises on query with a message holding newlines, a NUL, U+2028 and a lone surrogate."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        pass

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass

    def query(self, question: str, *, now: datetime) -> QueryResult:
        raise ValueError("line one\nline two\x00 \u2028 \ud800 <script>alert(1)</script>")


class NetOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int
    """The harness-side server's port."""
    addresses: list[str]
    """Addresses of the harness's machine to try (loopback and the machine's own)."""


class NetworkReachingAdapter(MemoryAdapter):
    """Tries to reach a server of the harness's machine over TCP, and its own server on loopback."""

    Options = NetOptions

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        pass

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass

    def query(self, question: str, *, now: datetime) -> QueryResult:
        reached = {}
        for address in self.setup.options.addresses:
            try:
                with socket.create_connection((address, self.setup.options.port), timeout=3) as conn:
                    reached[address] = conn.recv(64).decode()
            except OSError as exc:
                reached[address] = f"unreachable: {type(exc).__name__}"
        with socket.create_server(("127.0.0.1", 0)) as server:  # a gateway inside the host works
            port = server.getsockname()[1]
            with socket.create_connection(("127.0.0.1", port), timeout=3) as conn, server.accept()[0] as peer:
                peer.sendall(b"own loopback")
                reached["own"] = conn.recv(64).decode()
        return QueryResult(fragments=(Fragment(text=json.dumps(reached)),))
