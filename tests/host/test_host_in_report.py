"""Where adapters ran is recorded in the manifest and shown in the report."""

from __future__ import annotations

from lsrep.reports.model import build_report
from lsrep.reports.render import render_markdown

from lsrep.executors.local import InProcessExecutor
from lsrep.runner import run_campaign
from lsrep.store import RunStore


def _report(example, mode: str):
    out = run_campaign(example, executor=InProcessExecutor(), fresh=True, adapter_host=mode)
    return build_report(RunStore(out.store_path), out.run_id)


def test_an_in_process_run_is_marked_and_a_hosted_one_is_not(example):
    debugging = _report(example, "in-process")
    assert any("inside the harness process" in c.title for c in debugging.banner)
    assert "in-process · isolation none" in render_markdown(debugging)
    hosted = _report(example, "process")
    assert not any("inside the harness process" in c.title for c in hosted.banner)
    assert "process · isolation " in render_markdown(hosted)
