"""Size and build time of the HTML report with its per-observation drill-down (issue 22).

    python benchmarks/report_size.py [--store runs/locomo.sqlite] [--repeats 3]

Without --store it first runs `campaigns/locomo.toml` (both conversations, every built-in system)
into a temporary store. Then it builds the report --repeats times and prints: the HTML size, the
drill-down block's size (base64 of zlib-compressed JSON) and its uncompressed JSON size, the
observations and fragments it holds, build_report + render_html wall time and, apart, the
drill-down's own share (reports.drilldown.build on the loaded run), min/median/max.
The goal is a self-contained HTML report <= 10 MB for the LoCoMo campaign. Machine load (1-minute
load average) is printed before and after; the machine is shared.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

from lsrep.reports import drilldown
from lsrep.reports.common import Context, Settings
from lsrep.reports.load import load_run
from lsrep.reports.model import build_report
from lsrep.reports.render import render_html

from lsrep.runner import run_campaign
from lsrep.store import RunStore

REPO = Path(__file__).resolve().parents[1]
LIMIT = 10_000_000


def locomo_store(folder: Path) -> Path:
    store = folder / "locomo.sqlite"
    run_campaign(REPO / "campaigns" / "locomo.toml", store_path=store, fresh=True)
    return store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="an existing run store holding a LoCoMo run (default: run the campaign)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="lsrep-report-size-") as tmp:
        path = Path(args.store) if args.store else locomo_store(Path(tmp))
        store = RunStore(path)
        run_id = store.latest_run()
        times, own, html = [], [], ""
        for _ in range(args.repeats):
            start = time.perf_counter()
            report = build_report(store, run_id)
            html = render_html(report)
            times.append(time.perf_counter() - start)
            ctx = Context(load_run(store, run_id), Settings(seed=0), (), store)
            start = time.perf_counter()
            drilldown.build(ctx)
            own.append(time.perf_counter() - start)
        payload = report.drilldown.payload
        raw = len(zlib.decompress(base64.b64decode(payload)))
        n_frag = store.rows("select count(*) n from fragments f join observations o on o.obs_id = f.obs_id "
                            "where o.run_id = ?", [run_id])[0]["n"]
        size = len(html.encode("utf-8"))
        print(f"run {run_id}: {report.drilldown.count} observations, {n_frag} fragment rows")
        print(f"HTML {size / 1e6:.2f} MB (limit {LIMIT / 1e6:.2f} MB); drill-down block {len(payload) / 1e6:.2f} MB "
              f"(JSON {raw / 1e6:.2f} MB before compression); report without it "
              f"{(size - len(payload)) / 1e6:.2f} MB")
        print(f"build_report + render_html: min {min(times):.1f} s  median {statistics.median(times):.1f} s  "
              f"max {max(times):.1f} s")
        print(f"of which the drill-down: min {min(own):.1f} s  median {statistics.median(own):.1f} s  "
              f"max {max(own):.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if size <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
