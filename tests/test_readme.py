"""README's everyday commands write only to paths git ignores (rating keys included)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from tests.conftest import REPO


def readme_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Everyday commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("  #", 1)[0]) for line in block.splitlines() if line.startswith("lsrep ")]


def outputs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-o", "--out", "--output", "--report")]


def test_every_output_path_is_ignored_including_rating_keys():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    paths = [p for argv in readme_commands() for p in outputs(argv)]
    assert len(paths) >= 5
    keys = [f"{p.rstrip('/')}/KEY-do-not-share/key.json" for argv in readme_commands()
            if argv[1:3] == ["rate", "export"] for p in outputs(argv)]
    assert keys
    for path in paths + keys:
        probe = path.rstrip("/") + ("/x" if path.endswith("/") else "")
        res = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=REPO)
        assert res.returncode == 0, f"README writes to {path}, which git does not ignore"


def test_readme_score_line_needs_no_judge_the_quickstart_campaign_lacks():
    quickstart = (REPO / "campaigns" / "quickstart.toml").read_text()
    judges = set(re.findall(r'^name = "(.*)"', quickstart.split("[[judges]]", 1)[1], re.M)) if "[[judges]]" in \
        quickstart else set()
    for argv in readme_commands():
        if argv[1] == "score":
            judge = argv[argv.index("--judge") + 1]
            assert judge == "deterministic" or judge in judges or "--kind" in argv, argv
