#!/usr/bin/env bash
# Create .venv (if missing) and install the project with the given extras. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null
if [ -n "$extras" ]; then
  .venv/bin/python -m pip install --quiet -e ".[${extras}]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
