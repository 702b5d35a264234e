"""Adapters for testing the adapter host: one that reports where it runs, one that stalls."""

from __future__ import annotations

import gc
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


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


class QueryOnly(MemoryAdapter):
    """A test adapter that keeps nothing: only its `query` does something."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        pass

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        pass


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
            "gc": [list(gc.get_threshold()), gc.get_freeze_count()],
            "fds": sorted(_link(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")),
            "parent_cmdline": _read(f"/proc/{os.getppid()}/cmdline").split("\0"),
            "parent_env": sorted(e.partition("=")[0] for e in _read(f"/proc/{os.getppid()}/environ").split("\0") if e),
        }
        return QueryResult(fragments=(Fragment(text=json.dumps(seen), source_turn_ids=tuple(self.turns[-1:])),))


class StallingAdapter(QueryOnly):
    """Never answers a query (a hung system)."""

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


class HookReadingAdapter(QueryOnly):
    """Returns the `now` its host's call hook saw for this query."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=(Fragment(text=SEEN_NOW[-1].isoformat() if SEEN_NOW else "no hook"),))


class HostileMessageAdapter(QueryOnly):
    """Raises on query with a message holding newlines, a NUL, U+2028 and a lone surrogate."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        raise ValueError("line one\nline two\x00 \u2028 \ud800 <script>alert(1)</script>")


class ClockReadingAdapter(MemoryAdapter):
    """Notes each turn with the date its process's clock reads (`datetime.now()`, `time.time()`), as
    third-party libraries stamp what they store; answers with everything noted."""

    version = "1"

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.notes: list[tuple[str, str]] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        stamped = datetime.now().date().isoformat()
        epoch = datetime.fromtimestamp(time.time()).date().isoformat()
        self.notes.append((turn.turn_id, f"{turn.content} (noted {stamped}; epoch {epoch})"))

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple(Fragment(text=text, source_turn_ids=(tid,)) for tid, text in self.notes))


class ClockTraceAdapter(MemoryAdapter):
    """Records, in every ingest and session end, what each of the process's clocks reads (the
    epoch in ns, naive and aware `now`, local time and its zone, TZ); answers with the records."""

    version = "1"
    host_reusable = True

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.reads: list[str] = []

    def _read(self, what: str) -> None:
        from datetime import UTC

        local = time.localtime()
        self.reads.append(json.dumps([what, time.time_ns(), time.time(), datetime.now().isoformat(),
                                      datetime.now(UTC).isoformat(), list(local)[:6], local.tm_zone,
                                      time.strftime("%Y-%m-%d %H:%M %Z"), os.environ.get("TZ")]))

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self._read(turn.turn_id)

    def end_session(self, session_id: str, *, now: datetime) -> None:
        self._read(session_id)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        return QueryResult(fragments=tuple(Fragment(text=text) for text in self.reads))


class OwnerAwareAdapter(MemoryAdapter):
    """Keys its memory by the owner `reset` announces, and says who it holds memories for."""

    version = "1"

    def reset(self, *, conversation_id: str, now: datetime, participants=None) -> None:
        self.owner = participants.owner if participants is not None else None
        self.speakers = [f"{s.name}/{s.role}" for s in participants.speakers] if participants else []
        self.turns: list[str] = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn.turn_id)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        text = f"memories of {self.owner} among {', '.join(self.speakers)}"
        return QueryResult(fragments=(Fragment(text=text, source_turn_ids=tuple(self.turns[-1:])),))


class AsyncAdapter(MemoryAdapter):
    """An asyncio library behind a sync adapter: one event loop per adapter, made in the constructor,
    closed in close(); every call runs a coroutine to completion on it."""

    version = "1"

    def __init__(self, setup) -> None:
        import asyncio

        super().__init__(setup)
        self.loop = asyncio.new_event_loop()
        self.store: list[tuple[str, str]] = []

    async def _add(self, turn: ReplayTurn) -> None:
        import asyncio

        await asyncio.sleep(0)
        self.store.append((turn.turn_id, turn.content))

    async def _search(self, question: str) -> list[tuple[int, tuple[str, str]]]:
        import asyncio

        words = set(question.lower().split())
        hits = await asyncio.gather(*(self._score(words, item) for item in self.store))
        return [(score, item) for score, item in sorted(hits, key=lambda h: -h[0]) if score][:3]

    async def _score(self, words: set[str], item: tuple[str, str]):
        import asyncio

        await asyncio.sleep(0)
        return len(words & set(item[1].lower().split())), item

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.store = []

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.loop.run_until_complete(self._add(turn))

    def query(self, question: str, *, now: datetime) -> QueryResult:
        hits = self.loop.run_until_complete(self._search(question))
        return QueryResult(fragments=tuple(Fragment(text=text, source_turn_ids=(tid,), score=float(score))
                                           for score, (tid, text) in hits))

    def close(self) -> None:
        self.loop.close()


class DistributionsAdapter(ClockReadingAdapter):
    """Declares the distributions it wraps (one installed, one not)."""

    distributions = ("pydantic", "no-such-distribution-lsrep")


class ChattyAdapter(ClockReadingAdapter):
    """Warns at construction that a lane is off, logs on every ingest, as degraded libraries do."""

    def __init__(self, setup) -> None:
        import warnings

        super().__init__(setup)
        warnings.warn("BM25 lane disabled: fastembed model not available offline", UserWarning, stacklevel=2)

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        import logging

        logging.getLogger("chatty.store").warning("entity extraction skipped for %s", "turn")
        logging.getLogger("chatty.store").info("not captured: below WARNING")
        super().ingest(turn, now=now)
class NetOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int
    """The harness-side server's port."""
    addresses: list[str]
    """Addresses of the harness's machine to try (loopback and the machine's own)."""


class NetworkReachingAdapter(QueryOnly):
    """Tries to reach a server of the harness's machine over TCP, and its own server on loopback."""

    Options = NetOptions

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


class RepeatingAdapter(MemoryAdapter):
    """Returns its turns as fragments, the same fragment objects at every query until a turn comes;
    a question starting with "copy" gets equal but new fragment objects, "answer" an own answer."""

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.frags: tuple[Fragment, ...] = ()

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.frags += (Fragment(text=turn.content, source_turn_ids=(turn.turn_id,)),)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        if question.startswith("copy"):
            return QueryResult(fragments=tuple(f.model_copy() for f in self.frags))
        return QueryResult(fragments=self.frags, answer=question if question.startswith("answer") else None)


class LeavingTracesAdapter(MemoryAdapter):
    """Declares `host_reusable` and then leaves every trace a unit could leave in its host: files in
    its state folder, HOME and TMPDIR, a snapshot, a cached query result, the last simulated time.
    Each answer reports what it finds of them (a new host finds none)."""

    host_reusable = True
    supports_snapshot = True

    def reset(self, *, conversation_id: str, now: datetime) -> None:
        self.turns: list[str] = []
        self.conversation = conversation_id

    def ingest(self, turn: ReplayTurn, *, now: datetime) -> None:
        self.turns.append(turn.turn_id)
        for folder in (self.setup.state_dir, os.environ["HOME"], os.environ["TMPDIR"]):
            with open(os.path.join(folder, f"trace-{self.conversation}"), "w") as fh:
                fh.write(turn.content)

    def query(self, question: str, *, now: datetime) -> QueryResult:
        import tempfile

        found = {
            "state": sorted(os.listdir(self.setup.state_dir)),
            "home": sorted(p for p in os.listdir(os.environ["HOME"]) if p.startswith("trace-")),
            "tmp": sorted(os.listdir(os.environ["TMPDIR"])), "tempfile": tempfile.gettempdir() == os.environ["TMPDIR"],
            "turns": self.turns, "pid": os.getpid(),
        }
        return QueryResult(fragments=(Fragment(text=json.dumps(found, sort_keys=True),
                                               source_turn_ids=tuple(self.turns[-1:])),))

    def snapshot(self) -> list[str]:
        return list(self.turns)

    def restore(self, snapshot: list[str]) -> None:
        self.turns = list(snapshot)

    def state_digest(self) -> str:
        # Read with no `now`: the wall clock, or the last simulated time this host was given.
        return f"{len(getattr(self, 'turns', ()))}@{int(time.time())}"


class NotReusableAdapter(LeavingTracesAdapter):
    """The same adapter without the declaration: every unit gets a host of its own."""

    host_reusable = False


class ReachAdapter(QueryOnly):
    """Tries to connect to the Unix socket address it is asked about (`\\0` for the abstract namespace)."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(question.replace("\\0", "\0"))
            outcome = "connected"
        except OSError as exc:
            outcome = f"refused: {type(exc).__name__}"
        finally:
            sock.close()
        return QueryResult(fragments=(Fragment(text=outcome, source_turn_ids=()),))


class StealAdapter(QueryOnly):
    """Tries to take a socket from its fork server's open files (`/proc/1/fd`) and looks for the
    workers' socket name among the Unix sockets of its network namespace."""

    def query(self, question: str, *, now: datetime) -> QueryResult:
        opened, refused = [], []
        try:
            fds = os.listdir("/proc/1/fd")
        except OSError:
            fds = []
        for fd in fds:
            try:
                os.close(os.open(f"/proc/1/fd/{fd}", os.O_RDWR))
                opened.append(fd)
            except OSError:
                refused.append(fd)
        names = _read("/proc/net/unix").count("lsrep-zygote")
        seen = {"opened": opened, "refused": refused, "names": names}
        return QueryResult(fragments=(Fragment(text=json.dumps(seen), source_turn_ids=()),))
