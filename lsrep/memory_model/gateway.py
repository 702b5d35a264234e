"""The local OpenAI-compatible gateway: what `setup.memory_llm.base_url` points at.

A threaded HTTP server on 127.0.0.1 (an ephemeral port) serving `POST /v1/chat/completions`,
`POST /v1/embeddings` and `GET /v1/models`. It holds no key and calls no server itself: each
request body goes to `forward(kind, body) -> {"status": int, "body": dict}`. In the adapter host
that sends it over the host wire to the harness (the host may have no route to the harness but
its pipes); in-process it is the harness's relay directly. Any bearer token is accepted: the
gateway is reachable only on the loopback of the process's own network namespace, and the key
the adapter holds is a dummy.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Forward = Callable[[str, dict[str, Any]], dict[str, Any]]
PATHS = {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings"}


class Gateway:
    """Serve on 127.0.0.1 until `close()`; `base_url` ends in `/v1`."""

    def __init__(self, forward: Forward, models: list[str]) -> None:
        self.forward = forward
        self.models = list(dict.fromkeys(models))
        handler = type("GatewayHandler", (_Handler,), {"gateway": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="lsrep-memory-gateway", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def handle(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request, as the HTTP handler serves it (also used by the setup handles directly)."""
        try:
            return self.forward(kind, body)
        except Exception as exc:  # noqa: BLE001 - the library sees an HTTP error, never a hang
            return {"status": 502, "body": {"error": {"message": f"LSREP gateway: {type(exc).__name__}: {exc}",
                                                      "type": "gateway_error", "code": None}}}

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    gateway: Gateway

    def log_message(self, format: str, *args: Any) -> None:  # no per-request lines on stderr
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "lsrep"} for m in self.gateway.models]
            self._send(200, {"object": "list", "data": data})
        else:
            self._send(404, error_body(f"no such path {self.path!r}", "invalid_request_error"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        kind = PATHS.get(self.path.split("?")[0].rstrip("/"))
        if kind is None:
            self._send(404, error_body(f"no such path {self.path!r} (the gateway serves /v1/chat/completions, "
                                   "/v1/embeddings, /v1/models)", "invalid_request_error"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, error_body("request body is not JSON", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send(400, error_body("request body is not a JSON object", "invalid_request_error"))
            return
        if body.get("stream"):
            self._send(400, error_body("the LSREP gateway does not stream; send stream=false", "invalid_request_error"))
            return
        reply = self.gateway.handle(kind, body)
        self._send(int(reply["status"]), reply["body"])

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n")
        try:
            self.wfile.write(head.encode("latin-1") + data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def error_body(message: str, kind: str = "upstream_error") -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": kind, "code": None}}
