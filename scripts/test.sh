#!/usr/bin/env bash
# Install LSREP with its test extras into .venv and run the default (fast, offline) test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh test
exec .venv/bin/python -m pytest -q "$@"
