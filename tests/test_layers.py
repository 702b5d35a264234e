"""The import rules of docs/architecture.md, read from the source of every module.

Every import is checked, function-level ones included, and relative imports are
resolved first; `importlib.import_module("...")` with a literal name counts too.
The rules:

- the core (`lsrep/`) imports nothing from the outer layers (probes, reports, systems,
  adapters); they register what the core calls through entry points;
- `systems/` never imports the harness: only relative imports inside its own package;
- `adapters/` may use the core and the systems, never probes or reports;
- `probes/` and `reports/` may use the core, never systems or adapters, nor each other;
- no cycle among the core's module-level imports.

`test_the_checker_catches_planted_violations` plants each kind of violation in a
scratch tree and shows the checker reports it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

LAYOUT = {"lsrep": "lsrep", "systems": "lsrep.systems", "adapters": "lsrep.adapters", "probes": "lsrep.probes",
          "reports": "lsrep.reports"}
"""Repository folder -> the package it installs as."""

OUTER = ("lsrep.probes", "lsrep.reports", "lsrep.systems", "lsrep.adapters")
FORBIDDEN = {
    "lsrep": OUTER,
    "lsrep.adapters": ("lsrep.probes", "lsrep.reports"),
    "lsrep.probes": ("lsrep.reports", "lsrep.systems", "lsrep.adapters"),
    "lsrep.reports": ("lsrep.probes", "lsrep.systems", "lsrep.adapters"),
}
"""Layer -> packages it must not import."""


def _modules(root: Path):
    """(module name, package name, path) for every .py file under the layout's folders."""
    for folder, namespace in LAYOUT.items():
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
                package = ".".join([namespace, *parts])
            else:
                package = ".".join([namespace, *parts[:-1]])
            yield ".".join([namespace, *parts]), package, path


def _layer(module: str) -> str:
    for outer in OUTER:
        if module == outer or module.startswith(outer + "."):
            return outer
    return "lsrep"


def _imports(tree: ast.AST, package: str):
    """(imported module, line, module level?) for every import in a module."""
    top = set(map(id, getattr(tree, "body", [])))
    for node in ast.walk(tree):
        level = id(node) in top
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, level, 0
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno, level, node.level
            for alias in node.names:  # `from lsrep import reports` imports lsrep.reports
                yield f"{target}.{alias.name}", node.lineno, level, node.level
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, node.lineno, level, 0


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def violations(root: Path) -> list[str]:
    """Every broken import rule under root, as `path:line: what`."""
    found = []
    graph: dict[str, set[str]] = defaultdict(set)
    names = {m for m, _, _ in _modules(root)}
    for module, package, path in _modules(root):
        layer = _layer(module)
        where = path.relative_to(root)
        for target, line, top_level, relative in _imports(ast.parse(path.read_text(encoding="utf-8")), package):
            if layer == "lsrep.systems":
                own = ".".join(module.split(".")[:3])
                if _under(target, "lsrep") and not (relative and _under(target, own)):
                    found.append(f"{where}:{line}: a system imports {target} (only relative imports inside "
                                 f"{own} are allowed)")
                continue
            for banned in FORBIDDEN.get(layer, ()):
                if _under(target, banned):
                    found.append(f"{where}:{line}: {layer} imports {target} (the {layer} layer must not "
                                 f"import {banned})")
            if layer == "lsrep" and top_level and target in names and _layer(target) == "lsrep":
                graph[module].add(target)
    found += [f"import cycle at module level: {' -> '.join(c)}" for c in _cycles(graph)]
    return sorted(set(found))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component) + [sorted(component)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_repository_keeps_its_import_rules():
    assert violations(REPO) == []


def test_the_checker_catches_planted_violations(tmp_path):
    def plant(rel: str, text: str) -> None:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    plant("lsrep/__init__.py", "")
    plant("lsrep/core.py", "def f():\n    from lsrep.reports.build import write_reports\n")
    plant("lsrep/dyn.py", "import importlib\nimportlib.import_module('lsrep.probes.locomo')\n")
    plant("lsrep/sneaky.py", "from lsrep import systems\n")
    plant("lsrep/a.py", "from lsrep import b\n")
    plant("lsrep/b.py", "from lsrep.a import x\n")
    plant("systems/__init__.py", "")
    plant("systems/mine/__init__.py", "from ..other import y\nfrom . import z\n")
    plant("systems/other/__init__.py", "import lsrep.contract\n")
    plant("adapters/__init__.py", "")
    plant("adapters/x.py", "from lsrep.probes import locomo\nfrom lsrep.systems.mine import z\n")
    plant("probes/__init__.py", "")
    plant("probes/p.py", "from ..reports import build\n")
    plant("reports/__init__.py", "")
    plant("reports/r.py", "from lsrep.store import RunStore\n")
    found = violations(tmp_path)
    expected = [
        "adapters/x.py:1: lsrep.adapters imports lsrep.probes",
        "lsrep/core.py:2: lsrep imports lsrep.reports.build",
        "lsrep/dyn.py:2: lsrep imports lsrep.probes.locomo",
        "lsrep/sneaky.py:1: lsrep imports lsrep.systems",
        "probes/p.py:1: lsrep.probes imports lsrep.reports",
        "systems/mine/__init__.py:1: a system imports lsrep.systems.other",
        "systems/other/__init__.py:1: a system imports lsrep.contract",
        "import cycle at module level: lsrep.a -> lsrep.b -> lsrep.a",
    ]
    for prefix in expected:
        assert any(f.startswith(prefix) for f in found), (prefix, found)
    assert not any(f.startswith("reports/r.py") or "adapters/x.py:2" in f or "systems/mine/__init__.py:2" in f
                   for f in found), found


LONG_MODULES = {
    "probes/generator.py": "the evolving-fact generator: its word lists and story templates (~300 lines) are data",
}
"""Modules allowed over the ~500-line limit, each with its reason (docs/architecture.md)."""


def test_no_module_over_500_lines_without_a_reason():
    long = {p.relative_to(REPO).as_posix() for _, _, p in _modules(REPO)
            if len(p.read_text(encoding="utf-8").splitlines()) > 500}
    assert long <= set(LONG_MODULES), sorted(long - set(LONG_MODULES))
