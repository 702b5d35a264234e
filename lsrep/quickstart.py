"""`lsrep quickstart`: run the bundled example campaign and show where everything is."""

from __future__ import annotations

from pathlib import Path

from lsrep.errors import LsrepError


def bundled_campaign() -> Path:
    """The showcase campaign installed with the package (`lsrep.campaigns`)."""
    import lsrep.campaigns

    path = Path(lsrep.campaigns.__file__).resolve().parent / "showcase.toml"
    if not path.exists():
        raise LsrepError(f"bundled example not found at {path}: the installation is incomplete")
    return path


def quickstart(out: Path) -> int:
    from lsrep.runner import run_campaign
    from lsrep.store import RunStore
    from lsrep.summary import print_summary

    out.mkdir(parents=True, exist_ok=True)
    store_path = out / "lsrep.sqlite"
    outcome = run_campaign(bundled_campaign(), store_path=store_path, fresh=True)
    store = RunStore(store_path)
    print_summary(store, outcome.run_id)
    print()
    print(f"run id: {outcome.run_id}")
    print(f"store:  {store_path}")
    from lsrep.registry import REPORT_WRITERS

    # The report layer registers its writer (`lsrep.report_writers` entry point).
    paths = REPORT_WRITERS.load("default")(store, outcome.run_id, out)
    for fmt, path in paths.items():
        print(f"{fmt + ' report:':<13} {path}")
    from lsrep.failures import report_failures, run_failures

    return report_failures(run_failures(store, outcome.run_id), allow=False, store_path=store_path)
