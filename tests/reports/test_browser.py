"""Open the example's HTML report in headless Chromium: every section renders, nothing executes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.model import SECTION_IDS

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium not installed at /usr/bin/chromium"),
]


def dump_dom(html: Path, profile: Path) -> str:
    cmd = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        "--dump-dom", html.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_report_renders_in_chromium_and_planted_script_does_not_run(example_run, tmp_path):
    store, run_id = example_run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    dom = dump_dom(html, tmp_path / "profile")
    title = re.search(r"<title>(.*?)</title>", dom, flags=re.S).group(1)
    assert title.startswith("LSREP report — quickstart")
    assert "pwned" not in title
    for section_id in SECTION_IDS:
        assert f'id="{section_id}"' in dom, section_id
    # The planted script survives only as text.
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert "<script" not in dom.lower()
    assert dom.count("<svg") >= 5
