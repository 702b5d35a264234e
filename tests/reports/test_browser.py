"""Open the example's HTML report in headless Chromium: every section renders, only the report's own
inline script runs (the page's CSP pins it by hash), tables fit 1280 px, table-of-contents links open
the section they target, and the drill-down opens an observation."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from lsrep.reports.build import write_reports
from lsrep.reports.model import SECTION_IDS
from lsrep.reports.render import script_hash

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
    # The planted script survives only as text; the page holds only its own two script elements.
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert re.findall(r"<script[^>]*>", dom, flags=re.I) == [
        '<script type="application/json" id="lsrep-observations">', "<script>"]
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


def drive(html: Path, script: str, tmp: Path, *, width: int = 1280, height: int = 800, fragment: str = "",
          ) -> tuple[dict[str, str], str]:
    """Load the report with a test script added (and allowed by hash in the page's CSP, which stays in
    force for everything else); the body's data-* attributes it set, and the final DOM."""
    text = html.read_text(encoding="utf-8")
    assert "script-src 'sha256-" in text
    text = text.replace("script-src ", f"script-src {script_hash(script[8:-9])} ", 1)
    probe = tmp / "driven.html"
    probe.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
           f"--window-size={width},{height}", "--virtual-time-budget=30000", "--dump-dom",
           probe.resolve().as_uri() + fragment]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", done.stdout).group(1)
    attrs = {k: v.replace("&quot;", '"') for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', body)}
    return attrs, done.stdout


def measure(html: Path, tmp: Path, width: int = 1280, height: int = 800) -> dict[str, str]:
    return drive(html, MEASURE, tmp, width=width, height=height)[0]


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


WAIT = """const until = async (ok, what) => {
    for (let k = 0; k < 400 && !ok(); k++) await new Promise(r => setTimeout(r, 50));
    if (!ok()) throw new Error('timed out waiting for ' + what);
  };
  const set = (k, v) => document.body.setAttribute('data-' + k, typeof v === 'string' ? v : JSON.stringify(v));
  const clipped = sel => [...document.querySelectorAll(sel)].filter(c => c.scrollWidth > c.clientWidth + 1)
    .map(c => c.textContent.trim().slice(0, 40));"""

DRILL = """<script>window.addEventListener('load', async () => {
  /*WAIT*/
  try {
    set('before', document.getElementById('dd-rows').children.length);
    document.querySelector('#observations > details > summary').click();
    await until(() => document.getElementById('dd-rows').children.length > 0, 'the list');
    set('total', document.getElementById('dd-status').textContent);
    const cond = document.getElementById('dd-cond');
    cond.value = 'full-context'; cond.dispatchEvent(new Event('change'));
    const probe = document.getElementById('dd-probe');
    probe.value = 'city-current'; probe.dispatchEvent(new Event('input'));
    set('rows', [...document.querySelectorAll('#dd-rows tr')].map(r => r.textContent.replace(/\\s+/g, ' ').trim()));
    document.querySelector('#dd-rows tr').click();
    const view = document.getElementById('dd-view');
    await until(() => !view.hidden, 'the observation');
    set('obs', view.dataset.obs);
    set('frags', view.querySelectorAll('.dd-frag').length);
    set('cited', [...view.querySelectorAll('.dd-frag .dd-cited .dd-turn')].map(t => t.textContent).slice(0, 3));
    set('view-scripts', view.querySelectorAll('script, img, iframe').length);
    set('scripts', document.scripts.length);
    set('clipped', clipped('#observations td, #observations th'));
    const label = document.getElementById('dd-label');
    label.value = 'stale'; label.dispatchEvent(new Event('change'));
    set('stale-rows', [...document.querySelectorAll('#dd-rows tr')].map(r => r.children[4].textContent));
  } catch (e) { set('error', String(e)); }
});</script>""".replace("/*WAIT*/", WAIT)


def test_drilldown_opens_an_observation_with_context_answer_and_label(example_run, tmp_path):
    store, run_id = example_run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    got, dom = drive(html, DRILL, tmp_path)
    assert "error" not in got, got["error"]
    assert got["before"] == "0"  # nothing rendered before the section opens
    assert re.fullmatch(r"\d+ of \d+ observations match .*", got["total"]), got["total"]
    n = store.rows("select count(*) n from observations where run_id = ?", [run_id])[0]["n"]
    assert got["total"].startswith(f"{n} of {n} ")
    rows = [r for r in got["rows"][2:-2].split('","')]
    assert rows and all(r.startswith("full-context") and "city-current" in r for r in rows)
    # The first match (checkpoint 0) opened: its context, answer and label as the store has them.
    obs = store.rows("select * from observations where obs_id = ?", [got["obs"]])[0]
    assert obs["condition"] == "full-context" and obs["probe_id"] == "city-current" and obs["checkpoint"] == 0
    label = store.rows("select outcome from judgements where obs_id = ? and judge = 'deterministic'",
                       [obs["obs_id"]])[0]["outcome"]
    view = dom[dom.index('id="dd-view"'):]
    assert "Which city does Maya live in?" in view
    assert f'<dt>Answer</dt><dd><span class="ut">{obs["answer"]}</span>' in view
    assert f">{label}</span>" in view.split("<dt>Label</dt>")[1][:300]
    assert int(got["frags"]) == obs["n_fragments"] == len(store.fragment_rows(obs["obs_id"]))
    assert "Lisbon" in view and "Porto" in view  # reference versions: in force and later
    assert "current (in force)" in view and "later (not yet true)" in view
    # Cited turns carry their text; the planted script (turn t0001) is text, not an element.
    first = store.rows("select content from turns where run_id = ? and turn_id = 't0001'", [run_id])[0]["content"]
    assert got["cited"].startswith('["t0001') and "I live in Lisbon, in a small flat" in first
    assert "I live in Lisbon, in a small flat" in got["cited"].split('","')[0]
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in view
    assert got["view-scripts"] == "0" and got["scripts"] == "3"  # the data block, the report's, this test's
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom, flags=re.S).group(1)
    assert got["clipped"] == "[]", got["clipped"]
    # The label filter applies on top of the others.
    stale = got["stale-rows"][2:-2].split('","')
    assert stale and set(stale) == {"stale"}


TOC = """<script>window.addEventListener('load', async () => {
  /*WAIT*/
  const open = id => document.querySelector('#' + id + ' > details').open;
  try {
    set('on-load', ['fidelity', 'judges', 'manifest'].map(open));
    document.querySelector('.toc a[href="#judges"]').click();
    set('after-click', ['fidelity', 'judges', 'manifest'].map(open));
  } catch (e) { set('error', String(e)); }
});</script>""".replace("/*WAIT*/", WAIT)


def test_toc_links_and_the_url_fragment_open_the_section_they_target(example_run, tmp_path):
    store, run_id = example_run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    got, _ = drive(html, TOC, tmp_path, fragment="#fidelity")
    assert "error" not in got, got["error"]
    assert got["on-load"] == "[true,false,false]"  # the URL's #fidelity opened on load, nothing else
    assert got["after-click"] == "[true,true,false]"  # the TOC link to #judges opened it


def test_an_observation_fragment_in_the_url_opens_that_observation(example_run, tmp_path):
    store, run_id = example_run
    html = write_reports(store, run_id, tmp_path / "out", formats=("html",))["html"]
    obs_id = store.rows("select obs_id from observations where run_id = ? and condition = 'vector-rag' "
                        "order by obs_id limit 1 offset 7", [run_id])[0]["obs_id"]
    script = """<script>window.addEventListener('load', async () => {
      /*WAIT*/
      try {
        const view = document.getElementById('dd-view');
        await until(() => !view.hidden, 'the observation');
        set('obs', view.dataset.obs);
        set('open', document.querySelector('#observations > details').open);
      } catch (e) { set('error', String(e)); }
    });</script>""".replace("/*WAIT*/", WAIT)
    from urllib.parse import quote

    got, _ = drive(html, script, tmp_path, fragment="#obs:" + quote(obs_id, safe=""))
    assert "error" not in got, got["error"]
    assert got["obs"] == obs_id and got["open"] == "true"
