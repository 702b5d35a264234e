"""The rating form in headless Chromium: items render, no identifiers, and its file imports."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from lsrep.rating import export_packets, import_ratings, packet_key

from .raters import assert_blind, identifiers, ordered_items

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium not at /usr/bin/chromium")]

# Appended to a copy of the form: fill every item as a rater would, save, and show the result.
FILL = """<script>
(function () {
  var labels = ["correct", "stale", "future", "abstained", "wrong"];
  document.getElementById("rater").value = "browser rater";
  document.querySelectorAll("section.item").forEach(function (s, i) {
    s.querySelector('input[data-field="label"][value="' + labels[i % 5] + '"]').click();
    s.querySelector('input[data-field="rubric"][value="' + (i % 5 + 1) + '"]').click();
    s.querySelector('textarea[data-field="note"]').value = "note " + i + " <b>&";
  });
  var ok = window.lsrepPacket.download();
  var link = document.getElementById("download-link");
  var out = document.createElement("pre");
  out.id = "selftest";
  out.textContent = JSON.stringify({ok: ok, href: link.href, file: link.download, data: window.lsrepPacket.collect()});
  document.body.appendChild(out);
}());
</script>
"""


def dump_dom(page: Path, tmp_path: Path) -> str:
    res = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_form_renders_blind_and_its_file_imports(store_copy, tmp_path):
    store, run_id = store_copy
    files = export_packets(store, run_id, sample=12, seed=4, out_dir=tmp_path / "packet")
    dom = dump_dom(files.html, tmp_path)
    assert len(re.findall(r'<section class="item[^"]*" id="item-', dom)) == 12
    assert "0 of 12 items rated" in dom  # the script ran
    assert_blind(dom, identifiers(store, run_id))
    key = packet_key(store, run_id, files.packet_id)
    obs = {o["obs_id"]: o for o in store.observations(run_id)}
    for item_id, info in key["items"].items():
        assert f'data-item="{item_id}"' in dom
        assert html.escape(obs[info["obs_id"]]["question"], quote=False) in dom

    filled = tmp_path / "packet" / "filled.html"
    filled.write_text(files.html.read_text().replace("</body>", FILL + "</body>"))
    dom = dump_dom(filled, tmp_path)
    result = json.loads(html.unescape(re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S).group(1)))
    assert result["ok"] is True and result["href"].startswith("blob:")
    assert result["file"] == f"ratings-{files.packet_id}-browser_rater.json"
    assert "12 of 12 items rated" in dom

    saved = tmp_path / "from-browser.json"
    saved.write_text(json.dumps(result["data"]))
    (done,) = import_ratings(store, run_id, [saved])
    assert done.raters == ("browser rater",) and done.items == 12
    rows = {r["item_id"]: r for r in store.rows("select * from ratings")}
    labels = ["correct", "stale", "future", "abstained", "wrong"]
    for i, item_id in enumerate(ordered_items(key)):
        assert (rows[item_id]["label"], rows[item_id]["rubric"]) == (labels[i % 5], i % 5 + 1)
        assert rows[item_id]["note"] == f"note {i} <b>&"
