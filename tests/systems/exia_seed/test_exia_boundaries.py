"""Static guards: the provider never reads the wall clock and never imports the harness."""

from __future__ import annotations

import re
from pathlib import Path

import lsrep.systems.exia_seed

PACKAGE = Path(lsrep.systems.exia_seed.__file__).parent
WALL_CLOCK = re.compile(
    r"datetime\.now|datetime\.utcnow|date\.today|datetime\.today|\btime\.time\(|time\.monotonic|perf_counter"
    r"|time\.localtime|time\.gmtime|^\s*import time\b|^\s*from time import|time\.time_ns",
    re.MULTILINE,
)
HARNESS = re.compile(r"^\s*(from|import)\s+(lsrep|adapters)\b", re.MULTILINE)


def sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    return files


def test_no_wall_clock_reads():
    offenders = [f"{p.name}: {m.group(0)}" for p in sources() for m in WALL_CLOCK.finditer(p.read_text())]
    assert offenders == []


def test_the_guard_would_catch_a_wall_clock_read():
    assert WALL_CLOCK.search("stamp = datetime.now(UTC)") and WALL_CLOCK.search("import time\n")


def test_provider_package_never_imports_the_harness_or_adapters():
    offenders = [p.name for p in sources() if HARNESS.search(p.read_text())]
    assert offenders == []
