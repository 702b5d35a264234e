#!/usr/bin/env bash
# Install LSREP with its test extras into .venv and run the default (fast, offline) test suite,
# on two worker processes (pytest-xdist; a later `-n 0` in the arguments runs it in one).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh test
exec .venv/bin/python -m pytest -q -n 2 "$@"
