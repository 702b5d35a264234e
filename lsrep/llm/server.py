"""An OpenAI-compatible HTTP server for tests and benchmarks, run in-process on 127.0.0.1.

It is a real server speaking the wire protocol (chat completions, embeddings,
models), with scripted replies, fixed latency and injected faults, and it
counts what it receives. Replies come from, in order: the fault queue (any
POST), the reply queue (chat only), then the `reply` function.

    with OpenAITestServer(reply=lambda req: "Paris", latency_s=0.2) as srv:
        client = LLMClient(EndpointSpec(base_url=srv.base_url, model="m"))
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from lsrep.text import estimate_tokens


@dataclass(frozen=True)
class Reply:
    """A scripted chat reply."""

    text: str
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    """Usage to report; default: estimate_tokens of the prompt contents and of the text."""
    tool_calls: tuple[dict[str, Any], ...] | None = None
    """OpenAI `tool_calls` for the assistant message (finish reason `tool_calls` unless given)."""


@dataclass(frozen=True)
class Fault:
    """A failure the server injects instead of answering."""

    kind: Literal["status", "timeout", "malformed", "disconnect", "echo_headers"]
    status: int = 500
    """HTTP status for `status` faults."""
    retry_after: float | None = None
    """Seconds for a Retry-After header (429s)."""
    hang_s: float = 10.0
    """How long a `timeout` fault sleeps before answering (set past the client timeout)."""

    @classmethod
    def http(cls, status: int, retry_after: float | None = None) -> Fault:
        return cls("status", status=status, retry_after=retry_after)

    @classmethod
    def rate_limited(cls, retry_after: float | None = 0.0) -> Fault:
        return cls("status", status=429, retry_after=retry_after)

    @classmethod
    def timeout(cls, hang_s: float = 10.0) -> Fault:
        return cls("timeout", hang_s=hang_s)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def disconnect(cls) -> Fault:
        return cls("disconnect")

    @classmethod
    def echo_headers(cls, status: int = 401) -> Fault:
        """An error whose body echoes the request headers (Authorization included), as careless servers do."""
        return cls("echo_headers", status=status)


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the server saw it."""

    path: str
    body: dict[str, Any]
    bearer: str | None
    """The bearer token sent, so a test can prove which key reached the wire."""
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages") or [])

    @property
    def last_user(self) -> str:
        users = [m.get("content") or "" for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""


ReplyFn = Callable[[ReceivedRequest], "str | Reply | Fault"]
EmbedFn = Callable[[str], list[float]]


def echo_reply(request: ReceivedRequest) -> str:
    """Default reply: the last user message, prefixed."""
    return f"echo: {request.last_user}"


def hash_embedding(dim: int) -> EmbedFn:
    """Deterministic, unnormalised vectors from SHA-256 of the text."""

    def embed(text: str) -> list[float]:
        out: list[float] = []
        counter = 0
        while len(out) < dim:
            digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
            out.extend((b - 127.5) / 127.5 for b in digest)
            counter += 1
        return out[:dim]

    return embed


class OpenAITestServer:
    """Threaded HTTP server on an ephemeral 127.0.0.1 port; use as a context manager."""

    def __init__(
        self,
        reply: ReplyFn | str | None = None,
        *,
        latency_s: float = 0.0,
        embed: EmbedFn | None = None,
        embed_dim: int = 16,
        models: Iterable[str] = ("test-model",),
        replies: Iterable[str | Reply | Fault] = (),
        faults: Iterable[Fault] = (),
    ) -> None:
        self.reply = reply
        self.latency_s = latency_s
        self.embed = embed or hash_embedding(embed_dim)
        self.models = tuple(models)
        self.requests: list[ReceivedRequest] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._replies: deque[str | Reply | Fault] = deque(replies)
        self._faults: deque[Fault] = deque(faults)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def reply(self) -> ReplyFn:
        """The reply function used when no queued reply or fault is pending."""
        return self._reply

    @reply.setter
    def reply(self, reply: ReplyFn | str | None) -> None:
        if isinstance(reply, str):
            self._reply: ReplyFn = lambda _request, text=reply: text
        else:
            self._reply = reply or echo_reply

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> OpenAITestServer:
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="openai-test-server", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and counters -----------------------------------------------------------
    def enqueue_replies(self, *replies: str | Reply | Fault) -> None:
        """Chat replies (or faults) for the next chat requests, in order."""
        with self._lock:
            self._replies.extend(replies)

    def enqueue_faults(self, *faults: Fault) -> None:
        """Faults for the next POST requests of any kind, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def request_count(self) -> int:
        """POST requests received (chat and embeddings), faulted ones included."""
        with self._lock:
            return len(self.requests)

    def count(self, kind: Literal["chat", "embeddings"]) -> int:
        """POST requests received on `/v1/chat/completions` or `/v1/embeddings`."""
        path = {"chat": "/v1/chat/completions", "embeddings": "/v1/embeddings"}[kind]
        with self._lock:
            return sum(r.path == path for r in self.requests)

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    # -- used by the handler --------------------------------------------------------------
    def _enter(self, request: ReceivedRequest) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self._faults.popleft() if self._faults else None

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_chat_reply(self, request: ReceivedRequest) -> str | Reply | Fault:
        with self._lock:
            queued = self._replies.popleft() if self._replies else None
        return queued if queued is not None else self.reply(request)

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_ref: OpenAITestServer

    def log_message(self, format: str, *args: Any) -> None:  # silence per-request logging
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "lsrep-test"}
                    for m in self.server_ref.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error("not found", "invalid_request_error"))

    def do_POST(self) -> None:
        srv = self.server_ref
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, _error("request body is not JSON", "invalid_request_error"))
            return
        auth = self.headers.get("Authorization") or ""
        request = ReceivedRequest(
            path=self.path.rstrip("/"), body=body,
            bearer=auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None,
        )
        fault = srv._enter(request)
        self._counted = True
        try:
            srv._wait(srv.latency_s)
            if request.path == "/v1/chat/completions":
                outcome = fault or srv._next_chat_reply(request)
            elif request.path == "/v1/embeddings":
                outcome = fault or "embeddings"
            else:
                self._send_json(404, _error("not found", "invalid_request_error"))
                return
            if isinstance(outcome, Fault):
                self._send_fault(outcome, request)
            elif request.path == "/v1/embeddings":
                self._send_json(200, _embeddings_body(srv, body))
            else:
                self._send_json(200, _chat_body(request, outcome))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired first)
        except Exception as exc:  # a scripted reply raised: say so on the wire
            self._send_json(500, _error(f"test server reply raised {exc!r}", "server_error"))
        finally:
            self._done()

    def _done(self) -> None:
        """The request stops counting as in flight once (before its reply is written, else at the end)."""
        if getattr(self, "_counted", False):
            self._counted = False
            self.server_ref._leave()

    def _send_fault(self, fault: Fault, request: ReceivedRequest) -> None:
        srv = self.server_ref
        if fault.kind == "status":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            kind = "rate_limit_error" if fault.status == 429 else "server_error"
            self._send_json(fault.status, _error(f"injected {fault.status}", kind), headers)
        elif fault.kind == "echo_headers":
            echoed = {name: value for name, value in self.headers.items()}
            self._send_json(fault.status, _error(f"invalid credentials; request headers were {echoed}",
                                                 "authentication_error"))
        elif fault.kind == "timeout":
            srv._wait(fault.hang_s)
            self._send_json(200, _chat_body(request, "late reply"))
        elif fault.kind == "malformed":
            self._send_bytes(200, b'{"id": "chatcmpl-x", "choices": [{"message": ')
        else:  # disconnect: drop the connection without a response
            self.close_connection = True

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        # One write per response: fewer syscalls and GIL hand-offs when many calls are in flight.
        lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
                 "Content-Type: application/json", f"Content-Length: {len(data)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        # The server's work ends here: a client holding a one-request slot may send its next request as
        # soon as these bytes arrive, before this thread would run again to count the request done.
        self._done()
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)


_ids = itertools.count(1)


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None}}


def _chat_body(request: ReceivedRequest, outcome: str | Reply) -> dict[str, Any]:
    reply = outcome if isinstance(outcome, Reply) else Reply(text=outcome)
    prompt = sum(estimate_tokens(m.get("content") or "") for m in request.messages)
    completion = estimate_tokens(reply.text)
    usage = reply.usage or {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    finish = reply.finish_reason
    if reply.tool_calls:
        message = {"role": "assistant", "content": reply.text or None, "tool_calls": list(reply.tool_calls)}
        finish = "tool_calls" if finish == "stop" else finish
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _embeddings_body(srv: OpenAITestServer, body: dict[str, Any]) -> dict[str, Any]:
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    tokens = sum(estimate_tokens(t) for t in texts)
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": srv.embed(t)}
                 for i, t in enumerate(texts)],
        "model": body.get("model", ""),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
