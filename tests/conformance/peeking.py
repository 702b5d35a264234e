"""Routes an adapter could take to gold held by the harness, as plain functions an adapter calls.

Each returns the reference answers (or secrets) it found for a question, or nothing. They are the
attacks the adapter host must make impossible; `broken_adapters` wraps each in an adapter.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tomllib
from pathlib import Path

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def _versions_answers(versions) -> list[str]:
    return [v.answer for v in versions or () if isinstance(getattr(v, "answer", None), str)]


def from_stack(question: str) -> list[str]:
    """Walk every frame above the adapter for a probe ask (`.expected.in_force`) or a probe."""
    found: list[str] = []
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            expected = getattr(value, "expected", None)
            if expected is not None and hasattr(expected, "in_force"):
                found += _versions_answers(expected.in_force)
            if getattr(value, "question", None) == question:
                found += _versions_answers(getattr(value, "references", ()))
        frame = frame.f_back
    return list(dict.fromkeys(found))


def from_heap(question: str) -> list[str]:
    """Search every live object for a Probe with this question (and its reference versions)."""
    found: list[str] = []
    for obj in gc.get_objects():
        try:
            if type(obj).__name__ == "Probe" and getattr(obj, "question", None) == question:
                found += _versions_answers(obj.references)
        except Exception:  # noqa: BLE001, S112 - a peeker shrugs off odd objects
            continue
    return list(dict.fromkeys(found))


def visible_command_lines() -> list[list[str]]:
    """argv of this process, of its parent and of every process /proc shows."""
    lines = [list(sys.argv)]
    pids = [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if raw:
            lines.append([a.decode(errors="replace") for a in raw.split(b"\0") if a])
    return lines


def visible_folders() -> list[Path]:
    """This process's working directory and those of its parent and every visible process."""
    folders = [Path.cwd()]
    for pid in [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            folders.append(Path(os.readlink(f"/proc/{pid}/cwd")))
        except OSError:
            continue
    return folders


def campaign_files() -> list[Path]:
    """Campaign files named in a visible command line or environment, or lying in a visible folder."""
    names = [a for line in visible_command_lines() for a in line] + list(os.environ.values())
    found = [Path(n) for n in names if n.endswith(".toml")]
    for folder in visible_folders():
        try:
            found += sorted(folder.glob("*.toml")) + sorted(folder.glob("campaigns/*.toml"))
        except OSError:
            continue
    return [p for p in dict.fromkeys(found) if p.is_file()]


def from_files(question: str) -> list[str]:
    """Read the probe files a findable campaign names, and return that question's answers."""
    found: list[str] = []
    for path in campaign_files():
        try:
            spec = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for t in spec.get("trajectories", []):
            probes = path.parent / str(t.get("probes", ""))
            if not probes.is_file():
                continue
            for line in probes.read_text().splitlines():
                if line.strip() and (row := json.loads(line)).get("question") == question:
                    found += [r["answer"] for r in row.get("references", [])]
    return list(dict.fromkeys(found))


def secrets_in_environment() -> list[str]:
    """`NAME=value` of key-like variables in this environment and the parent's."""
    env = dict(os.environ)
    try:
        raw = Path(f"/proc/{os.getppid()}/environ").read_bytes()
        for item in raw.split(b"\0"):
            name, _, value = item.decode(errors="replace").partition("=")
            env.setdefault(name, value)
    except OSError:
        pass
    return sorted(f"{k}={v}" for k, v in env.items() if any(w in k.upper() for w in SECRET_WORDS) and v)


PRUNED = frozenset({"proc", "sys", "dev", "usr", ".git", ".venv", "venv", "site-packages", "__pycache__",
                    "node_modules", ".mirror", ".library", ".pyenv", "lib", "lib64"})
"""Folders the disk search skips (system and installed code, version control), to stay fast."""


def disk_candidates() -> list[Path]:
    """Every probe/trajectory file (`*.jsonl`) and store (`*.sqlite`) a walk of the whole disk finds."""
    found = []
    for root, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if d not in PRUNED]
        found += [Path(root, f) for f in files if f.endswith((".jsonl", ".sqlite", ".sqlite-wal"))]
    return found


def from_disk(question: str, candidates: list[Path]) -> list[str]:
    """Search the disk (no path known in advance) for probe files with this question, and stores
    that hold it: first under the working directory (where a campaign is usually run from), then
    anywhere. The answers of the newest such probe file (likely the running campaign's); nothing
    when that probe file gives the question no answer (an abstention probe: a cheat abstains);
    else the name of each store that holds the question."""
    answers: dict[float, list[str]] = {}
    probe_rows = 0
    stores: list[str] = []
    needle = question.encode()
    here = Path.cwd()
    near = [p for p in candidates if p.is_relative_to(here)]
    for path in near + [p for p in candidates if not p.is_relative_to(here)]:
        try:
            if path.stat().st_size > 50_000_000:
                continue
            raw, mtime = path.read_bytes(), path.stat().st_mtime
        except OSError:
            continue
        if needle not in raw:
            continue
        if probe_rows and not path.is_relative_to(here):
            break  # a probe file under the working directory had the question: the rest of the disk is not needed
        if path.suffix != ".jsonl":
            stores.append(f"the run store {path.name} holds this question")
            continue
        for line in raw.decode(errors="replace").splitlines():
            try:  # any file of the disk: odd JSON is skipped, never fatal
                row = json.loads(line)
                if isinstance(row, dict) and row.get("question") == question and "probe_id" in row:
                    probe_rows += 1
                    got = [r["answer"] for r in row.get("references") or []
                           if isinstance(r, dict) and isinstance(r.get("answer"), str)]
                    if got:
                        answers.setdefault(mtime, []).extend(got)
            except (ValueError, RecursionError, TypeError, AttributeError):
                continue
    found = answers[max(answers)] if answers else ([] if probe_rows else stores)
    return list(dict.fromkeys(found))
