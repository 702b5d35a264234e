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


MEASURE = """<script>window.addEventListener('load', () => {
  const b = document.body;
  b.setAttribute('data-first-view', document.documentElement.scrollHeight);
  document.querySelectorAll('section > details').forEach(d => { d.open = true; });
  const wide = [], clipped = [];
  document.querySelectorAll('.tablewrap').forEach(w => {
    if (w.scrollWidth > w.clientWidth + 1) wide.push(w.closest('section').id + ' ' + w.scrollWidth + '>' + w.clientWidth);
  });
  document.querySelectorAll('td, th').forEach(c => {
    if (c.scrollWidth > c.clientWidth + 1) clipped.push(c.textContent.trim().slice(0, 40));
  });
  b.setAttribute('data-wide', JSON.stringify(wide));
  b.setAttribute('data-clipped', JSON.stringify(clipped));
  b.setAttribute('data-open-height', document.documentElement.scrollHeight);
});</script>"""


def measure(html: Path, tmp: Path, width: int = 1280, height: int = 800) -> dict[str, str]:
    probe = tmp / "measured.html"
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
           f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom", probe.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", done.stdout).group(1)
    return {k: v.replace("&quot;", '"') for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', body)}


def test_at_1280_px_the_first_view_is_short_and_no_table_is_clipped(example_run, tmp_path):
    store, run_id = example_run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    got = measure(html, tmp_path)
    # Sections start collapsed to their summary (the headline open): at most 5 screens of 800 px.
    assert int(got["first-view"]) <= 5 * 800, got
    # Every section opened: no table needs horizontal scrolling and no cell cuts its content.
    assert got["wide"] == "[]" and got["clipped"] == "[]", got
    assert int(got["open-height"]) > int(got["first-view"])


def test_the_six_system_showcase_fits_1280_px_too(tmp_path, capsys):
    from lsrep.quickstart import quickstart

    assert quickstart(tmp_path / "qs") == 0
    capsys.readouterr()
    got = measure(tmp_path / "qs" / "report.html", tmp_path)
    assert int(got["first-view"]) <= 5 * 800, got
    assert got["wide"] == "[]" and got["clipped"] == "[]", got
