"""One small generic registry with lazy `module:Class` entries and an entry-point group.

Built-in adapters register through the same `lsrep.adapters` entry-point group
third-party packages use (see pyproject.toml), so nothing here names a system.
The outer layers fill the other groups the same way, so the core never imports
them: `lsrep.sources` (data sources campaigns name: locomo, generate,
longmemeval), `lsrep.report_writers` (what `quickstart` and `longmemeval
--report` call) and `lsrep.commands` (CLI command modules; see lsrep/cli.py).
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from lsrep.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to lazily imported objects; `module:Attr` strings also resolve directly."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._entries: dict[str, str] | None = None

    def entries(self) -> dict[str, str]:
        if self._entries is None:
            self._entries = {ep.name: ep.value for ep in entry_points(group=self.group)}
        return dict(sorted(self._entries.items()))

    def register(self, name: str, target: str) -> None:
        """Add an entry at run time (tests, notebooks)."""
        self.entries()
        assert self._entries is not None
        self._entries[name] = target

    def load(self, name: str) -> T:
        target = self.entries().get(name)
        if target is None:
            if ":" in name:
                target = name
            else:
                close = difflib.get_close_matches(name, list(self.entries()), n=3)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                known = ", ".join(self.entries()) or (
                    f"none: the {self.group!r} entry points are missing; reinstall lsrep "
                    "(pip install -e .) to refresh them")
                raise ConfigError(f"unknown {self.kind} {name!r}{hint} (registered: {known})")
        module_name, _, attr = target.partition(":")
        module = _import(module_name, direct=target == name, what=f"{self.kind} {name!r}")
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise ConfigError(f"{self.kind} {name!r}: {module_name!r} has no {attr!r}") from None
        return obj


def _import(module_name: str, *, direct: bool, what: str):
    """Import a module; a `module:Class` given directly also resolves from the current directory,
    as `python -m` would, and the error says where it looked."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        if not direct or not (module_name == missing or module_name.startswith(missing + ".")):
            raise ConfigError(f"{what}: cannot import {module_name!r} ({exc})") from None
    except ImportError as exc:
        raise ConfigError(f"{what}: cannot import {module_name!r} ({exc})") from None
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and not (module_name == exc.name or module_name.startswith(exc.name + ".")):
                raise ConfigError(f"{what}: cannot import {module_name!r} ({exc})") from None
        except ImportError as exc:
            raise ConfigError(f"{what}: cannot import {module_name!r} ({exc})") from None
    raise ConfigError(
        f"{what}: no module {module_name!r} importable from the current directory ({cwd}) or sys.path; "
        "run from the folder that holds it, add that folder to PYTHONPATH, or pip install its package"
    )


ADAPTERS: Registry = Registry("lsrep.adapters", "system")
SOURCES: Registry = Registry("lsrep.sources", "data source")
"""Functions that turn a campaign's non-native trajectory table into (Trajectory, ProbeSet)."""
REPORT_WRITERS: Registry = Registry("lsrep.report_writers", "report writer")
"""`write_reports(store, run_id, folder) -> {format: path}` implementations (`default`)."""


def load_adapter_class(name: str):
    """Resolve a registered name or `module:Class` to an adapter class with its name set."""
    from lsrep.contract import MemoryAdapter

    cls = ADAPTERS.load(name)
    if not (isinstance(cls, type) and issubclass(cls, MemoryAdapter)):
        raise ConfigError(f"system {name!r} resolves to {cls!r}, which is not a MemoryAdapter subclass")
    if not cls.name:
        cls.name = name
    return cls
