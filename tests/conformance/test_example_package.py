"""The guide's example package, for real: its files are the guide's code blocks; pip installs it;
the conformance suite passes on it by its registered name; a campaign runs it with `lsrep run`.

It is installed with `pip install --target` into a temporary folder put on PYTHONPATH of the
subprocesses, so the project's virtual environment is never changed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from lsrep.conformance import CHECKS
from lsrep.store import RunStore
from tests.conftest import REPO

PACKAGE = REPO / "tests" / "example_adapter_pkg"
GUIDE = REPO / "docs" / "adapters.md"
FILE_BLOCK = re.compile(r"<!-- file: (?P<path>\S+) -->\n```[a-z]*\n(?P<body>.*?)```\n", re.DOTALL)


def package_files() -> set[str]:
    return {p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and p.suffix in (".py", ".toml") and "__pycache__" not in p.parts}


def test_guide_code_blocks_are_the_example_package_files():
    blocks = {m["path"]: m["body"] for m in FILE_BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))}
    assert set(blocks) == package_files()
    for path, body in blocks.items():
        assert body == (REPO / path).read_text(encoding="utf-8"), f"{path} differs from its block in docs/adapters.md"


def test_guide_lists_every_check():
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", GUIDE.read_text(encoding="utf-8"), re.MULTILINE))
    assert set(CHECKS) <= listed


def _builds_without_isolation() -> bool:
    # setuptools builds wheels by itself from 70.1; before that it needs the `wheel` package.
    major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """Environment for subprocesses that see the installed example package."""
    tmp = tmp_path_factory.mktemp("example-adapter")
    source, target = tmp / "src", tmp / "site"
    # Build from a copy, so the build leaves no egg-info or build/ in the repository.
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)]
    if _builds_without_isolation():
        cmd.insert(-1, "--no-build-isolation")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"pip install failed:\n{res.stdout}\n{res.stderr}"
    assert (target / "lsrep_example_adapter" / "adapter.py").exists()
    path = os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path}


def lsrep(env: dict[str, str], *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lsrep.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_installed_package_registers_and_passes_the_conformance_suite(installed):
    res = lsrep(installed, "adapters", "check", "keyword-memory", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads(res.stdout)
    assert report["adapter"] == "lsrep_example_adapter.adapter:KeywordMemoryAdapter"
    statuses = {r["name"]: r["status"] for r in report["results"]}
    # The example declares no context limit; everything else is exercised and passes.
    assert statuses == {name: {"context_limit": "skipped", "query_side_effects": "info"}.get(name, "passed")
                        for name in CHECKS}


def guide_campaign_conditions() -> str:
    """The conditions block of the guide's section on campaigns."""
    section = GUIDE.read_text(encoding="utf-8").split("## 11.", 1)[1]
    return re.search(r"```toml\n(.*?)```", section, re.DOTALL).group(1)


def test_installed_package_runs_in_a_campaign(installed, example):
    conditions = guide_campaign_conditions()
    assert 'system = "keyword-memory"' in conditions
    example.write_text(example.read_text().replace("[answerer]", conditions + "\n[answerer]"))
    res = lsrep(installed, "run", str(example), "--quiet")
    assert res.returncode == 0, res.stdout + res.stderr
    assert ", 0 failed" in res.stdout
    store = RunStore(Path(res.stdout.split("store: ", 1)[1].strip()))
    rows = store.rows(
        "select o.condition, count(*) as n, sum(o.status = 'error') as errors, sum(o.proven_leak) as leaks, "
        "sum(j.outcome = 'correct') as correct from observations o join judgements j on j.obs_id = o.obs_id "
        "and j.judge = 'deterministic' where o.condition like 'keyword-memory%' group by o.condition")
    by = {r["condition"]: r for r in rows}
    assert set(by) == {"keyword-memory", "keyword-memory-no-recent"}
    for r in by.values():
        assert r["n"] > 0 and r["errors"] == 0 and r["leaks"] == 0 and r["correct"] > 0
    ran = {r["unit_id"].split("/")[0]: r["n"] for r in store.rows(
        "select unit_id, count(*) as n from events where mechanism = 'keyword.recent' and stage = 'executed' "
        "group by unit_id")}
    assert ran.get("keyword-memory", 0) > 0 and "keyword-memory-no-recent" not in ran


def test_guide_examples_run():
    # The guide's `pycon` blocks (embedder, model, DirectorySnapshot) run as doctests.
    import doctest

    result = doctest.testfile(str(GUIDE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 20 and result.failed == 0


def test_guide_lists_the_real_capability_defaults():
    from lsrep.contract import MemoryAdapter

    rows = re.findall(r"^\| `([a-z_A-Z]+)` \| `([^`]*)` \| ", GUIDE.read_text(encoding="utf-8"), re.MULTILINE)
    listed = dict(rows)
    assert {"version", "Options", "mechanisms", "maintenance_operations", "supports_snapshot", "deterministic",
            "answers", "context_limit", "honours_budget"} <= set(listed)
    for attr, shown in listed.items():
        value = getattr(MemoryAdapter, attr)
        assert shown == (value.__name__ if isinstance(value, type) else json.dumps(value) if isinstance(value, str) else repr(value)), attr


def test_guide_install_line_names_no_package_missing_from_the_index():
    text = GUIDE.read_text(encoding="utf-8")
    assert "pip install lsrep-example-adapter" not in text
    assert 'dependencies = ["lsrep"]' not in text
    assert "pip install tests/example_adapter_pkg" in text
