"""Package list for the namespaced layout declared in pyproject.toml.

Every top-level folder in `[tool.setuptools.package-dir]` installs as a subpackage
of `lsrep`; this walks each folder so a new subpackage (or data folder) is never left out.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

packages = []
for namespace, folder in PACKAGE_DIR.items():
    packages.append(namespace)
    packages += [f"{namespace}.{sub}" for sub in find_namespace_packages(where=str(ROOT / folder), exclude=["*__pycache__*"])]

setup(packages=sorted(set(packages)))
