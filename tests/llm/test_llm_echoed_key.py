"""An endpoint whose 401 body echoes the request headers: the key appears nowhere the harness writes."""

from __future__ import annotations

import csv
import io
import json
import uuid
from contextlib import redirect_stderr, redirect_stdout

import pytest
from lsrep.reports.build import write_reports

from lsrep.cli import main
from lsrep.llm.server import Fault, OpenAITestServer
from lsrep.store import RunStore
from tests.llm.test_llm_campaign import _campaign


@pytest.mark.parametrize("shape", ["unshaped", "sk"])
def test_echoed_key_is_redacted_everywhere(example, monkeypatch, tmp_path, shape):
    # An unshaped key is only caught by the configured-key rule; an sk- key by the pattern too.
    key = f"zq{uuid.uuid4().hex}unshaped" if shape == "unshaped" else f"sk-live-{uuid.uuid4().hex}"
    monkeypatch.setenv("LSREP_ECHO_KEY", key)
    with OpenAITestServer(reply="never") as server:
        _campaign(example, server, "LSREP_ECHO_KEY")
        example.write_text(example.read_text().replace("max_retries = 8", "max_retries = 0"))
        server.enqueue_faults(*[Fault.echo_headers(401)] * 5000)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            assert main(["run", str(example), "--quiet", "--allow-failures"]) == 0  # every call fails: 401
        # Positive control: the key was sent and echoed back in the error bodies.
        assert server.request_count > 0 and all(r.bearer == key for r in server.requests)

    store_path = example.parent.parent / "runs" / "lsrep.sqlite"
    store = RunStore(store_path)
    run_id = store.latest_run()
    errors = store.rows("select error from llm_calls where run_id = ? and status != 'ok'", [run_id])
    assert errors and all("[REDACTED]" in e["error"] and "request headers were" in e["error"] for e in errors)
    assert store.rows("select count(*) n from failures where run_id = ?", [run_id])[0]["n"] > 0

    texts = [out.getvalue(), err.getvalue()]
    for fmt in ("jsonl", "csv"):
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["export", "--store", str(store_path), "--format", fmt]) == 0
        texts.append(buf.getvalue())
    assert list(csv.DictReader(io.StringIO(texts[-1])))
    paths = write_reports(store, run_id, tmp_path / "report")
    assert set(paths) >= {"html", "md", "json"}
    json.loads(paths["json"].read_text())
    for text in texts:
        assert key not in text
    files = [p for p in store_path.parent.iterdir() if p.is_file()] + list(paths.values())
    assert any(p.name.endswith("-wal") for p in files) or store_path.exists()
    for path in files:
        assert key.encode() not in path.read_bytes(), path
